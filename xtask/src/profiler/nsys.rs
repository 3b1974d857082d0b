//! Nsight Systems timelines (`cargo xtask nsys`) of the launch-gap demo and of the bench, then
//! the three tables the chapter reads, printed as text and kept as CSV:
//! `nvtx_sum` (time per NVTX range), `cuda_api_sum` (calls and CPU time per CUDA API
//! function), `cuda_gpu_kern_sum` (GPU time per kernel).
//!
//! Traced: CUDA and NVTX only (`--trace=cuda,nvtx --sample=none --cpuctxsw=none`), graphs
//! per node (`--cuda-graph-trace=node`) so the kernels inside the launch-gap demo's CUDA graph
//! appear one by one. nsys neither replays kernels nor locks clocks: these times are the
//! program's own (with a little tracing overhead per API call).

use super::nsys_csv::{self, REPORTS, StatsTable};
use super::tools;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One traced program: its name and its three tables.
#[derive(serde::Serialize)]
pub struct Trace {
    pub name: String,
    pub command: String,
    pub tables: Vec<StatsTable>,
}

/// The traces as text, JSON and CSV.
pub fn render(traces: &[Trace]) -> Result<(String, String, String)> {
    let mut text = String::from(
        "nsys: CUDA and NVTX trace (--sample=none --cpuctxsw=none --cuda-graph-trace=node); \
         times in µs, not replayed, clocks not locked\n",
    );
    for t in traces {
        text += &format!("\n== {} ({})\n", t.name, t.command);
        for table in &t.tables {
            text += &format!("\n{}:\n", table.report);
            text += &table.render();
        }
        let summary = nsys_csv::launch_summary(&t.tables);
        if !summary.is_empty() {
            text += "\nLaunch overhead at a glance:\n";
            for line in summary {
                text += &format!("  {line}\n");
            }
        }
    }
    let json = serde_json::to_string_pretty(traces)?;
    let mut csv = String::new();
    for t in traces {
        for table in &t.tables {
            let mut w = csv::Writer::from_writer(Vec::new());
            let mut header = vec!["trace".to_string(), "report".to_string()];
            header.extend(table.headers.iter().cloned());
            w.write_record(&header)?;
            for r in &table.rows {
                let mut rec = vec![t.name.clone(), table.report.clone()];
                rec.extend(r.iter().cloned());
                w.write_record(&rec)?;
            }
            csv += &String::from_utf8(w.into_inner()?)?;
        }
    }
    Ok((text, json, csv))
}

/// `nsys profile` of `lab <lab_args>`, then `nsys stats` into `<name>_<report>.csv`.
pub fn trace(nsys: &Path, lab: &Path, dir: &Path, name: &str, lab_args: &str) -> Result<Trace> {
    let stem_tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let rep_tmp = PathBuf::from(format!("{}.nsys-rep", stem_tmp.display()));
    let rep = dir.join(format!("{name}.nsys-rep"));
    let _ = std::fs::remove_file(&rep_tmp);
    let mut cmd = Command::new(nsys);
    cmd.args([
        "profile",
        "--trace=cuda,nvtx",
        "--sample=none",
        "--cpuctxsw=none",
    ])
    .args([
        "--cuda-graph-trace=node",
        "--force-overwrite=true",
        "--output",
    ])
    .arg(&stem_tmp)
    .arg(lab)
    .args(lab_args.split_whitespace());
    let (status, console) = crate::process::run_tee(&mut cmd)?;
    let logged = format!("+ {}\n{console}", crate::process::show(&cmd));
    tools::write_atomic(&dir.join(format!("{name}.nsys.log")), logged.as_bytes())?;
    if let Some(problem) = tools::known_problem("nsys", &console) {
        bail!("{problem}");
    }
    if !rep_tmp.is_file() {
        bail!(
            "nsys wrote no report ({}, {status}): see {} for why",
            rep_tmp.display(),
            dir.join(format!("{name}.nsys.log")).display()
        );
    }
    if !status.success() {
        eprintln!("warning: `lab {lab_args}` failed under nsys ({status}); its timeline is kept");
    }
    tools::commit(&rep_tmp, &rep)?;

    // Stats into a temporary prefix, then each CSV renamed into place.
    let mut stats = Command::new(nsys);
    stats
        .args(["stats", "--report", &REPORTS.join(","), "--format", "csv"])
        .args(["--force-export=true", "--force-overwrite=true", "--output"])
        .arg(&stem_tmp)
        .arg(&rep);
    let (status, console) = crate::process::run_tee(&mut stats)?;
    if let Some(problem) = tools::known_problem("nsys", &console) {
        bail!("{problem}");
    }
    let mut tables = Vec::new();
    for report in REPORTS {
        let tmp = PathBuf::from(format!("{}_{report}.csv", stem_tmp.display()));
        let csv = dir.join(format!("{name}_{report}.csv"));
        if !tmp.is_file() {
            // nsys skips a report with no data (e.g. no NVTX ranges): an empty table, saying why.
            let why = console
                .lines()
                .find(|l| l.contains("SKIPPED") && l.contains(report))
                .map(str::trim)
                .unwrap_or("nsys stats wrote no table");
            eprintln!("note: {report}: {why} ({status})");
            tables.push(nsys_csv::parse_stats(report, why)?);
            continue;
        }
        tools::commit(&tmp, &csv)?;
        let text = std::fs::read_to_string(&csv)?;
        tables.push(nsys_csv::parse_stats(report, &text)?);
    }
    // The SQLite export is regenerated from the report on demand.
    let _ = std::fs::remove_file(dir.join(format!("{name}.sqlite")));
    Ok(Trace {
        name: name.to_string(),
        command: format!("lab {lab_args}"),
        tables,
    })
}

/// The tables of an earlier trace, from `<prefix>_<report>.csv`.
pub fn read_back(prefix: &Path) -> Result<Trace> {
    let mut tables = Vec::new();
    for report in REPORTS {
        let path = PathBuf::from(format!("{}_{report}.csv", prefix.display()));
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        tables.push(nsys_csv::parse_stats(report, &text)?);
    }
    Ok(Trace {
        name: prefix
            .file_name()
            .map_or("trace".into(), |n| n.to_string_lossy().into_owned()),
        command: format!("read back from {}_*.csv", prefix.display()),
        tables,
    })
}
