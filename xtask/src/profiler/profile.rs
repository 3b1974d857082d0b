//! `profile`: a full ncu report (`--set full`) of each selected kernel, saved as `.ncu-rep`
//! for the GUI, and a text summary read from it: Speed of Light, occupancy and its limiter,
//! the dominant stalls, the memory workload, the launch, then the diagnosis.

use super::capture::Collect;
use super::metrics;
use super::ncu::{NcuOptions, emit, fail_if_unverified};
use super::report;
use anyhow::{Result, bail};

/// What `profile` profiles: the kernels (a `--kernel` list), the ncu section set, the sizes.
pub struct Request<'a> {
    pub kernel: &'a str,
    pub set: &'a str,
    pub size: u64,
    pub rows: u32,
    pub cols: u32,
}

/// Profiles the requested kernels (or reads a capture back), then writes and prints the
/// summary; fails after printing when a result was wrong under the profiler.
pub fn profile(req: &Request, opts: &NcuOptions) -> Result<()> {
    let set: &'static str = match req.set {
        "full" => "full",
        "detailed" => "detailed",
        "basic" => "basic",
        "roofline" => "roofline",
        other => bail!("--set '{other}' is not one of full, detailed, basic, roofline"),
    };
    let collect = Collect {
        set: Some(set),
        sections: Vec::new(),
        // Added to the set, so every diagnosis rule finds its inputs.
        metrics: metrics::diagnosis(),
    };
    let size_args = vec![
        "--size".into(),
        req.size.to_string(),
        "--rows".into(),
        req.rows.to_string(),
        "--cols".into(),
        req.cols.to_string(),
    ];
    let base = format!("profile-{}", req.kernel.replace(',', "+"));
    let (rows, how) = opts.collect(&base, req.kernel, collect, size_args)?;
    if rows.is_empty() {
        bail!("no profiled kernels to summarise");
    }
    let mut text = if opts.from.is_empty() {
        format!(
            "profile --kernel {} (--set {set}): {how}\nReports: open the .ncu-rep files in Nsight Compute for every section and the Source page.\n\n",
            req.kernel
        )
    } else {
        format!("profile: {how}\n\n")
    };
    for r in &rows {
        text += &report::profile_text(r);
        text += "\n";
    }
    #[derive(serde::Serialize)]
    struct Kernel<'a> {
        label: &'a str,
        verified: Option<bool>,
        findings: Vec<super::diagnose::Finding>,
        metrics: &'a std::collections::BTreeMap<String, super::ncu_csv::Value>,
        units: &'a std::collections::BTreeMap<String, String>,
    }
    let kernels: Vec<Kernel> = rows
        .iter()
        .map(|r| Kernel {
            label: &r.label,
            verified: r.verified,
            findings: super::diagnose::diagnose(r),
            metrics: &r.profiled.metrics,
            units: &r.profiled.units,
        })
        .collect();
    let json = serde_json::to_string_pretty(&kernels)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["label", "metric", "value", "unit"])?;
    for r in &rows {
        for (name, v) in &r.profiled.metrics {
            let value = match v {
                super::ncu_csv::Value::Num(x) => x.to_string(),
                super::ncu_csv::Value::Text(t) => t.clone(),
            };
            let unit = r.profiled.units.get(name).map(String::as_str).unwrap_or("");
            w.write_record([r.label.as_str(), name, &value, unit])?;
        }
    }
    let csv = String::from_utf8(w.into_inner()?)?;
    emit(
        opts.write_dir().as_deref(),
        &base,
        opts.format,
        &text,
        &json,
        &csv,
    )?;
    fail_if_unverified(&rows)
}
