//! `cargo xtask profile --kernel K`: a full ncu report (`--set full`) of each selected kernel,
//! saved as `.ncu-rep` for the GUI, and a text summary read from it: Speed of Light,
//! occupancy and its limiter, the dominant stalls, the memory workload (sectors per request,
//! bank conflicts, wavefronts), the launch (waves per SM), then the diagnosis.

use super::ncu::{NcuOptions, emit, fail_if_unverified};
use crate::profiler::capture::Collect;
use crate::profiler::metrics;
use crate::profiler::report;
use anyhow::{Result, bail};

#[derive(clap::Args)]
pub struct Args {
    /// NAME[,NAME...], all (every reduction and transpose), reductions or transposes;
    /// a wrong name lists the valid ones
    #[arg(long, default_value = "reduce_v3")]
    pub kernel: String,
    /// ncu section set
    #[arg(long, default_value = "full")]
    pub set: String,
    /// Elements per reduction
    #[arg(long, default_value_t = 1 << 24)]
    pub size: u64,
    /// Transpose rows
    #[arg(long, default_value_t = 4096)]
    pub rows: u32,
    /// Transpose columns
    #[arg(long, default_value_t = 4096)]
    pub cols: u32,
    /// Print the diagnosis rules (when each fires, which way its fix goes) and exit
    #[arg(long)]
    pub rules: bool,
    #[command(flatten)]
    pub ncu: NcuOptions,
}

pub fn run(args: &Args) -> Result<()> {
    if args.rules {
        print!("{}", crate::profiler::diagnose::rules_text());
        return Ok(());
    }
    let set: &'static str = match args.set.as_str() {
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
        args.size.to_string(),
        "--rows".into(),
        args.rows.to_string(),
        "--cols".into(),
        args.cols.to_string(),
    ];
    let base = format!("profile-{}", args.kernel.replace(',', "+"));
    let (rows, how) = args.ncu.collect(&base, &args.kernel, collect, size_args)?;
    if rows.is_empty() {
        bail!("no profiled kernels to summarise");
    }
    let mut text = if args.ncu.from.is_empty() {
        format!(
            "profile --kernel {} (--set {set}): {how}\nReports: open the .ncu-rep files in Nsight Compute for every section and the Source page.\n\n",
            args.kernel
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
        findings: Vec<crate::profiler::diagnose::Finding>,
        metrics: &'a std::collections::BTreeMap<String, crate::profiler::ncu_csv::Value>,
        units: &'a std::collections::BTreeMap<String, String>,
    }
    let kernels: Vec<Kernel> = rows
        .iter()
        .map(|r| Kernel {
            label: &r.label,
            verified: r.verified,
            findings: crate::profiler::diagnose::diagnose(r),
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
                crate::profiler::ncu_csv::Value::Num(x) => x.to_string(),
                crate::profiler::ncu_csv::Value::Text(t) => t.clone(),
            };
            let unit = r.profiled.units.get(name).map(String::as_str).unwrap_or("");
            w.write_record([r.label.as_str(), name, &value, unit])?;
        }
    }
    let csv = String::from_utf8(w.into_inner()?)?;
    emit(
        args.ncu.write_dir().as_deref(),
        &base,
        args.ncu.format,
        &text,
        &json,
        &csv,
    )?;
    fail_if_unverified(&rows)
}
