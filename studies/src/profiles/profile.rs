//! `profile`: a full ncu report (`--set full`) of each selected kernel, saved as `.ncu-rep`
//! for the GUI, and a text summary read from it: Speed of Light, occupancy and its limiter,
//! the dominant stalls, the memory workload, the launch, then the diagnosis. With `--source`,
//! also where the time goes per source line (see `profiler::source`), and the diagnosis says at
//! which line.

use super::capture::{self, Collect};
use super::metrics::{self, Profiled, function_name, kernel_by_kernel};
use super::ncu::{NcuOptions, emit, fail_if_unverified};
use super::{attribution, report};
use anyhow::{Result, bail};
use catalog::{Backend, Runner};
use profiler::diagnose;
use profiler::document::{Document, Entry};
use profiler::source::{self, KernelSource, locate};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What `profile` profiles: the kernels (a `--kernel` list), the ncu section set, the sizes.
pub struct ProfileRequest<'a> {
    pub kernel: &'a str,
    pub set: profiler::ncu::run::Set,
    pub size: u64,
    pub rows: u32,
    pub cols: u32,
    /// Per source line too (`--source`).
    pub source: bool,
    /// Every SASS instruction under its line, not just the hottest (`--sass`).
    pub all_sass: bool,
    /// The compilers to show, in this order (empty: all profiled).
    pub backends: Vec<Backend>,
    /// Reading back (`--from`): only these kernels (`--kernel` as given; None: all in the files).
    pub from_kernels: Option<&'a str>,
}

/// Profiles the requested kernels (or reads a capture back), then writes and prints the
/// summary; fails after printing when a result was wrong under the profiler.
pub fn profile(req: &ProfileRequest, opts: &NcuOptions) -> Result<()> {
    let collect = Collect {
        set: Some(req.set),
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
    let (rows, how) = opts.collect_with(
        &base,
        req.kernel,
        collect,
        size_args,
        req.source,
        &req.backends,
    )?;
    let rows = arrange(rows, req);
    if rows.is_empty() {
        bail!("no profiled kernels to summarise");
    }
    let sources: Vec<Option<Result<KernelSource, String>>> = if req.source {
        let stems = stems(&base, &rows, opts)?;
        let mut read: BTreeMap<PathBuf, Result<Vec<KernelSource>, String>> = BTreeMap::new();
        rows.iter()
            .zip(&stems)
            .map(|(r, stem)| {
                let stem = stem.as_ref()?;
                let kernels = read.entry(stem.clone()).or_insert_with(|| {
                    source::read(stem, &r.backend, &attribution::lab(), opts.from.is_empty())
                        .map_err(|e| format!("{e:#}"))
                });
                let f = function_name(&r.profiled.kernel);
                Some(match kernels {
                    Ok(ks) => ks.iter().find(|k| k.function == f).cloned().ok_or_else(|| {
                        format!(
                            "{} has no {f}",
                            source::file(stem, source::SASS_PAGE).display()
                        )
                    }),
                    Err(e) => Err(e.clone()),
                })
            })
            .collect()
    } else {
        rows.iter().map(|_| None).collect()
    };
    let mut text = if opts.from.is_empty() {
        format!(
            "profile --kernel {} (--set {}{}): {how}\nReports: open the .ncu-rep files in Nsight Compute for every section and the Source page.\n\n",
            req.kernel,
            req.set.name(),
            if req.source { ", --source" } else { "" }
        )
    } else {
        format!("profile: {how}\n\n")
    };
    let mut diagnoses = Vec::new();
    for (r, s) in rows.iter().zip(&sources) {
        let mut diagnosis = diagnose::diagnose(r);
        let ks = s.as_ref().and_then(|s| s.as_ref().ok());
        if let Some(ks) = ks {
            locate::locate(r, &mut diagnosis, ks);
        }
        text += &report::profile_text(r, &diagnosis);
        match s {
            Some(Ok(ks)) => text += &source::kernel_text(ks, req.all_sass),
            Some(Err(e)) => text += &format!("  Source lines     none: {e}\n"),
            None => {}
        }
        text += "\n";
        diagnoses.push(diagnosis);
    }
    let entries = rows
        .iter()
        .zip(&sources)
        .zip(&diagnoses)
        .map(|((r, s), d)| Entry {
            verified: r.verified,
            source: s.as_ref().and_then(|s| s.as_ref().ok()),
            ..Entry::new(&r.profiled, &r.label, d)
        })
        .collect();
    let json = Document::new(&how, entries).to_json();
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

/// Read back, the rows of the requested kernels and compilers; then kernel by kernel (in the
/// order they first appear), each kernel's compilers in `--backend`'s order.
fn arrange(mut rows: Vec<Profiled>, req: &ProfileRequest) -> Vec<Profiled> {
    let position = |r: &Profiled| {
        let b = r.runner()?.backend()?;
        req.backends.iter().position(|x| *x == b)
    };
    if let Some(list) = req.from_kernels {
        let names: Vec<&str> = list.split(',').map(str::trim).collect();
        if !names.contains(&"all") {
            rows.retain(|r| names.contains(&r.kernel.as_str()));
        }
    }
    if !req.backends.is_empty() {
        rows.retain(|r| r.runner() == Some(Runner::Cub) || position(r).is_some());
    }
    kernel_by_kernel(&mut rows, |r| position(r).unwrap_or(usize::MAX));
    rows
}

/// Each row's capture stem, whose source pages `--source` reads: the ncu job's files in the
/// output folder, or the raw page's siblings when reading back (None for CUB's kernels, which
/// have no lab PTX, and for a row no `--from` file names).
fn stems(base: &str, rows: &[Profiled], opts: &NcuOptions) -> Result<Vec<Option<PathBuf>>> {
    if opts.from.is_empty() {
        return Ok(rows
            .iter()
            .map(|r| {
                let runner = r.runner().filter(|&b| b != Runner::Cub)?;
                Some(
                    opts.out_dir()
                        .join(capture::job_name(base, opts.select, &r.kernel, runner)),
                )
            })
            .collect());
    }
    let pages: Vec<(PathBuf, String)> = capture::raw_pages(&opts.from)?
        .iter()
        .map(|p| capture::stem(p))
        .collect();
    Ok(rows
        .iter()
        .map(|r| {
            let candidates: Vec<&PathBuf> = pages
                .iter()
                .filter(|(_, b)| *b == r.backend)
                .map(|(s, _)| s)
                .collect();
            // Several captures of one backend: the one whose Source page exists and names it.
            candidates
                .iter()
                .find(|s| {
                    source::read_file(s, source::SASS_PAGE).is_ok_and(|t| {
                        t.contains(&format!(
                            "\"Kernel Name\",\"{}\"",
                            function_name(&r.profiled.kernel)
                        ))
                    })
                })
                .or(candidates.first())
                .map(|s| (*s).clone())
        })
        .collect())
}
