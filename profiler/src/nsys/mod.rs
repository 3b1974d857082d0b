//! Nsight Systems timelines of any program (`cargo xtask nsys` traces the lab's launch-gap
//! demo and bench, or `-- PROGRAM`): the verdict per NVTX range first, the kernels worth
//! opening, then three summary tables, printed as text and kept as CSV:
//! `nvtx_sum` (time per NVTX range), `cuda_api_sum` (calls and CPU time per CUDA API
//! function), `cuda_gpu_kern_sum` (GPU time per kernel); and, from three event lists
//! (`nvtx_pushpop_trace`, `cuda_gpu_trace`, `cuda_api_trace`), where the time goes per NVTX
//! range: dispatch-, host- or kernel-bound ([`verdict`]).
//!
//! Traced: CUDA and NVTX only (`--trace=cuda,nvtx --sample=none --cpuctxsw=none`), graphs
//! per node (`--cuda-graph-trace=node`) so the kernels inside the launch-gap demo's CUDA graph
//! appear one by one. nsys neither replays kernels nor locks clocks: these times are the
//! program's own (with a little tracing overhead per API call).

pub mod csv;
pub mod verdict;

use crate::nsys::csv::{self as nsys_csv, GZIPPED, REPORTS, StatsTable, TABLES, TRACES};
use crate::tools;
use anyhow::{Context, Result, bail};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use verdict::{RangeVerdict, Timeline};

/// One traced program: its name, its three tables and its verdicts.
#[derive(serde::Serialize)]
pub struct Trace {
    pub name: String,
    pub command: String,
    pub tables: Vec<StatsTable>,
    /// The whole run, then every NVTX range in order of start.
    pub verdicts: Vec<RangeVerdict>,
    /// Why there are no verdicts, when there are none.
    pub verdict_note: Option<String>,
}

/// The kernels that took the most GPU time, from `cuda_gpu_kern_sum`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TopKernel {
    /// As nsys names it (demangled).
    pub name: String,
    /// Share of all kernels' GPU time, %.
    pub share_pct: f64,
    pub total_ns: f64,
    pub instances: f64,
}

/// The `n` kernels with the most GPU time, largest first.
pub fn top_kernels(tables: &[StatsTable], n: usize) -> Vec<TopKernel> {
    let Some(k) = tables.iter().find(|t| t.report == "cuda_gpu_kern_sum") else {
        return Vec::new();
    };
    let (Some(pct), Some(total), Some(inst)) = (
        k.column("Time (%)"),
        k.column("Total Time"),
        k.column("Instances"),
    ) else {
        return Vec::new();
    };
    let mut out: Vec<TopKernel> = (0..k.rows.len())
        .filter_map(|i| {
            Some(TopKernel {
                name: k.rows[i].last()?.clone(),
                share_pct: k.num(i, pct)?,
                total_ns: k.num(i, total)?,
                instances: k.num(i, inst)?,
            })
        })
        .collect();
    out.sort_by(|a, b| b.total_ns.total_cmp(&a.total_ns));
    out.truncate(n);
    out
}

/// The kernels to look at first, and the `profile` line that opens the one that dominates
/// (`program` is the traced command line; None for the lab's own traces, whose kernels
/// `profile --kernel` names).
pub fn top_kernels_text(t: &Trace, program: Option<&str>) -> String {
    let top = top_kernels(&t.tables, 5);
    if top.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nTop kernels by GPU time (Amdahl decides where effort pays):\n");
    for k in &top {
        out += &format!(
            "  {:>5.1} %  {:>10.1} µs  {:>6} launches  {}\n",
            k.share_pct,
            k.total_ns / 1e3,
            crate::fmt::value(k.instances),
            crate::names::short(&k.name)
        );
    }
    if let Some(program) = program {
        let function = crate::names::function(&top[0].name);
        out += &format!(
            "Next: the dominant kernel under ncu, one launch of it:\n  cargo xtask profile \
             --kernel-name '{}' --launch-count 1 -- {program}\n",
            regex_escape(&function)
        );
    }
    out
}

/// `name` as a regular expression that matches it literally.
fn regex_escape(name: &str) -> String {
    name.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

/// The traces as text (the verdicts first, then the kernels worth opening, then nsys's
/// tables), JSON and CSV. `program`: the command line of a traced program (see
/// [`top_kernels_text`]).
pub fn render(traces: &[Trace], program: Option<&str>) -> Result<(String, String, String)> {
    let mut text = String::from(
        "nsys: CUDA and NVTX trace (--sample=none --cpuctxsw=none --cuda-graph-trace=node); \
         times in µs, not replayed, clocks not locked\n",
    );
    for t in traces {
        text += &format!("\n== {} ({})\n", t.name, t.command);
        text += "\nWhere the time goes, per NVTX range (is the time even inside a kernel?):\n";
        match &t.verdict_note {
            Some(note) if t.verdicts.is_empty() => text += &format!("  ({note})\n"),
            _ => {
                text += &verdict::render(&t.verdicts);
                text += &verdict::rules_text();
            }
        }
        text += &top_kernels_text(t, program);
        let summary = nsys_csv::launch_summary(&t.tables);
        if !summary.is_empty() {
            text += "\nLaunch overhead at a glance:\n";
            for line in summary {
                text += &format!("  {line}\n");
            }
        }
        for table in &t.tables {
            text += &format!("\n{}:\n", table.report);
            text += &table.render();
        }
    }
    let json = serde_json::to_string_pretty(traces)?;
    let mut csv = String::new();
    for t in traces {
        for table in &t.tables {
            let mut w = ::csv::Writer::from_writer(Vec::new());
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
        if !t.verdicts.is_empty() {
            let mut w = ::csv::Writer::from_writer(Vec::new());
            w.write_record([
                "trace",
                "report",
                "range",
                "level",
                "start (ns)",
                "wall (ns)",
                "GPU busy (ns)",
                "busy (%)",
                "GPU ops",
                "gaps",
                "median gap (ns)",
                "max gap (ns)",
                "dispatch gaps (ns)",
                "verdict",
                "diagnosis",
            ])?;
            for v in &t.verdicts {
                w.write_record([
                    t.name.clone(),
                    "verdict".into(),
                    v.range.clone(),
                    v.level.to_string(),
                    v.start_ns.to_string(),
                    v.wall_ns.to_string(),
                    v.busy_ns.to_string(),
                    format!("{:.1}", 100.0 * v.busy_share()),
                    v.ops.to_string(),
                    v.gaps.to_string(),
                    v.median_gap_ns.map_or(String::new(), |g| g.to_string()),
                    v.max_gap_ns.map_or(String::new(), |g| g.to_string()),
                    v.dispatch_gap_ns.to_string(),
                    v.kind.label().into(),
                    v.diagnosis.clone(),
                ])?;
            }
            csv += &String::from_utf8(w.into_inner()?)?;
        }
    }
    Ok((text, json, csv))
}

/// Removes, when dropped, every file of `dir` named `<stem>.…` or `<stem>_…`: whatever nsys
/// and `nsys stats` left under the temporary stem (a 10 MB `.qdstrm` when the importer cannot
/// run, the report, CSVs), so that a failure leaves nothing half-done behind.
struct TempFiles {
    dir: PathBuf,
    stem: String,
}

impl Drop for TempFiles {
    fn drop(&mut self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours = name
                .strip_prefix(&self.stem)
                .is_some_and(|rest| rest.starts_with(['.', '_']));
            if ours {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

fn gzip(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes)?;
    Ok(e.finish()?)
}

/// `<prefix>_<report>.csv`, else `<prefix>_<report>.csv.gz` unpacked; None when neither exists.
pub fn read_report(prefix: &Path, report: &str) -> Result<Option<String>> {
    let plain = PathBuf::from(format!("{}_{report}.csv", prefix.display()));
    if plain.is_file() {
        return std::fs::read_to_string(&plain)
            .with_context(|| format!("reading {}", plain.display()))
            .map(Some);
    }
    let packed = PathBuf::from(format!("{}_{report}.csv.gz", prefix.display()));
    if !packed.is_file() {
        return Ok(None);
    }
    let file =
        std::fs::File::open(&packed).with_context(|| format!("opening {}", packed.display()))?;
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(file)
        .read_to_string(&mut text)
        .with_context(|| format!("unpacking {}", packed.display()))?;
    Ok(Some(text))
}

/// The verdicts from `<prefix>_<trace>.csv[.gz]` for the three event lists, or why there are
/// none.
pub fn verdicts(prefix: &Path) -> Result<(Vec<RangeVerdict>, Option<String>)> {
    let mut texts = Vec::new();
    for report in TRACES {
        match read_report(prefix, report)? {
            Some(text) => texts.push(text),
            None => {
                let note = format!(
                    "no verdicts: {}_{report}.csv (or .csv.gz) is missing; `cargo xtask nsys` \
                     captures it",
                    prefix.display()
                );
                return Ok((Vec::new(), Some(note)));
            }
        }
    }
    let ranges = nsys_csv::parse_pushpop_trace(&texts[0])?;
    let (ops, names) = nsys_csv::parse_gpu_trace(&texts[1])?;
    let calls = nsys_csv::parse_api_trace(&texts[2])?;
    Ok((Timeline::new(ranges, ops, names, calls).verdicts(), None))
}

/// `nsys profile` of `program args…`, then `nsys stats` into `<name>_<report>.csv`.
pub fn trace(
    nsys: &Path,
    dir: &Path,
    name: &str,
    program: &std::ffi::OsStr,
    args: &[std::ffi::OsString],
) -> Result<Trace> {
    let stem = format!(".{name}.tmp{}", std::process::id());
    let _cleanup = TempFiles {
        dir: dir.to_path_buf(),
        stem: stem.clone(),
    };
    let stem_tmp = dir.join(&stem);
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
    .arg(program)
    .args(args);
    let mut traced = Command::new(program);
    traced.args(args);
    let traced = crate::process::show(&traced);
    let (status, console) = crate::process::run_tee(&mut cmd)?;
    let logged = format!("+ {}\n{console}", crate::process::show(&cmd));
    files::write_atomic(&dir.join(format!("{name}.nsys.log")), logged.as_bytes())?;
    if let Some(problem) = tools::known_problem("nsys", &console) {
        bail!("{problem}");
    }
    if !rep_tmp.is_file() {
        // nsys says only "Importer error status: An unknown error occurred"; its importer,
        // run alone, names what it lacks.
        if let Some(problem) = tools::importer_problem(nsys) {
            bail!("{problem}");
        }
        bail!(
            "nsys wrote no report ({}, {status}): see {} for why",
            rep_tmp.display(),
            dir.join(format!("{name}.nsys.log")).display()
        );
    }
    if !status.success() {
        eprintln!("warning: `{traced}` failed under nsys ({status}); its timeline is kept");
    }
    files::commit(&rep_tmp, &rep)?;

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
        let gz = dir.join(format!("{name}_{report}.csv.gz"));
        // An earlier capture's copy would be read back in place of this one's.
        let _ = std::fs::remove_file(&csv);
        let _ = std::fs::remove_file(&gz);
        if !tmp.is_file() {
            // nsys skips a report with no data (e.g. no NVTX ranges): an empty table, saying why.
            let why = console
                .lines()
                .find(|l| l.contains("SKIPPED") && l.contains(report))
                .map(str::trim)
                .unwrap_or("nsys stats wrote no table");
            eprintln!("note: {report}: {why} ({status})");
            if TABLES.contains(&report) {
                tables.push(nsys_csv::parse_stats(report, why)?);
            }
            continue;
        }
        if GZIPPED.contains(&report) {
            let text = std::fs::read(&tmp).with_context(|| format!("reading {}", tmp.display()))?;
            files::write_atomic(&gz, &gzip(&text)?)?;
            let _ = std::fs::remove_file(&tmp);
        } else {
            files::commit(&tmp, &csv)?;
        }
        if TABLES.contains(&report) {
            let text = std::fs::read_to_string(&csv)?;
            tables.push(nsys_csv::parse_stats(report, &text)?);
        }
    }
    // The SQLite export is regenerated from the report on demand.
    let _ = std::fs::remove_file(dir.join(format!("{name}.sqlite")));
    let (verdicts, verdict_note) = verdicts(&dir.join(name))?;
    Ok(Trace {
        name: name.to_string(),
        command: traced,
        tables,
        verdicts,
        verdict_note,
    })
}

/// The tables and verdicts of an earlier trace, from `<prefix>_<report>.csv` (or `.csv.gz`).
pub fn read_back(prefix: &Path) -> Result<Trace> {
    let mut tables = Vec::new();
    for report in TABLES {
        let text = read_report(prefix, report)?
            .with_context(|| format!("reading {}_{report}.csv: no such file", prefix.display()))?;
        tables.push(nsys_csv::parse_stats(report, &text)?);
    }
    let (verdicts, verdict_note) = verdicts(prefix)?;
    Ok(Trace {
        name: prefix
            .file_name()
            .map_or("trace".into(), |n| n.to_string_lossy().into_owned()),
        command: format!("read back from {}_*.csv", prefix.display()),
        tables,
        verdicts,
        verdict_note,
    })
}
