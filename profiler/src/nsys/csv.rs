//! Parser for `nsys stats --report R --format csv` output, and its text rendering.
//!
//! Each report is one CSV table. The three summaries printed:
//! - `nvtx_sum`: `Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),
//!   StdDev (ns),Style,Range` — time per NVTX range;
//! - `cuda_api_sum`: `…,Num Calls,…,Name` — calls and CPU time per CUDA API function;
//! - `cuda_gpu_kern_sum`: `…,Instances,…,Name` — GPU time per kernel.
//!
//! And the three event lists the verdicts are computed from (read into [`NvtxRange`],
//! [`GpuOp`] and [`ApiCall`], never kept as text tables: the launch-gap demo's run to
//! hundreds of thousands of rows):
//! - `nvtx_pushpop_trace`: `Start (ns),End (ns),…,Name,PID,TID,Lvl,…` — one row per range;
//! - `cuda_gpu_trace`: `Start (ns),Duration (ns),CorrId,…,Name` — one row per kernel, memcpy
//!   and memset on the GPU;
//! - `cuda_api_trace`: `Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,…` — one row per
//!   CUDA API call.
//!
//! nsys may print notices before the table; an empty report prints `SKIPPED: …` instead.

use crate::fmt::value as fmt_value;
use crate::ncu::raw::parse_number;
use anyhow::{Context, Result, bail};

/// The tables `cargo xtask nsys` prints, in order.
pub const TABLES: [&str; 3] = ["nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum"];

/// The event lists the per-range verdicts are computed from.
pub const TRACES: [&str; 3] = ["nvtx_pushpop_trace", "cuda_gpu_trace", "cuda_api_trace"];

/// Every report `cargo xtask nsys` asks `nsys stats` for.
pub const REPORTS: [&str; 6] = [
    TABLES[0], TABLES[1], TABLES[2], TRACES[0], TRACES[1], TRACES[2],
];

/// The reports kept gzipped (`<prefix>_<report>.csv.gz`): the launch-gap demo's are tens of
/// MB as text.
pub const GZIPPED: [&str; 2] = ["cuda_gpu_trace", "cuda_api_trace"];

/// One `nsys stats` table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StatsTable {
    pub report: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Why the table is empty, when nsys said (`SKIPPED: … does not contain NV Tools
    /// Extension (NVTX) data`).
    pub note: Option<String>,
}

impl StatsTable {
    /// The column whose header is `name` (exactly, or before a unit: `Avg` matches `Avg (ns)`).
    pub fn column(&self, name: &str) -> Option<usize> {
        self.headers
            .iter()
            .position(|h| h == name || h.split(" (").next() == Some(name))
    }

    /// A numeric cell.
    pub fn num(&self, row: usize, col: usize) -> Option<f64> {
        self.rows.get(row)?.get(col).and_then(|c| parse_number(c))
    }

    /// The row whose last column (the name: kernel, API function or range) contains `needle`.
    pub fn find(&self, needle: &str) -> Option<usize> {
        self.rows
            .iter()
            .position(|r| r.last().is_some_and(|n| n.contains(needle)))
    }

    /// Fixed-width text; nanosecond columns shown in µs.
    pub fn render(&self) -> String {
        if self.rows.is_empty() {
            return format!(
                "  (empty{})\n",
                self.note
                    .as_ref()
                    .map_or(String::new(), |n| format!(": {n}"))
            );
        }
        let ns: Vec<bool> = self.headers.iter().map(|h| h.ends_with("(ns)")).collect();
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|h| h.replace("(ns)", "(µs)"))
            .collect();
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .map(|(c, cell)| match parse_number(cell) {
                        Some(x) if ns.get(c) == Some(&true) => format!("{:.2}", x / 1e3),
                        Some(x) if self.headers[c].contains('%') => format!("{x:.1}"),
                        Some(x) => fmt_value(x),
                        None => cell.clone(),
                    })
                    .collect()
            })
            .collect();
        crate::table::render(&headers, &rows)
    }
}

/// What the tables say about launch overhead, in a few lines: kernel launches and
/// synchronizations from `cuda_api_sum`, the busiest kernels from `cuda_gpu_kern_sum`.
pub fn launch_summary(tables: &[StatsTable]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(api) = tables.iter().find(|t| t.report == "cuda_api_sum") {
        let (calls, avg) = (api.column("Num Calls"), api.column("Avg"));
        for what in ["LaunchKernel", "GraphLaunch", "Synchronize"] {
            for (i, row) in api.rows.iter().enumerate() {
                let Some(name) = row.last().filter(|n| n.contains(what)) else {
                    continue;
                };
                let n = calls.and_then(|c| api.num(i, c));
                let a = avg.and_then(|c| api.num(i, c));
                if let (Some(n), Some(a)) = (n, a) {
                    out.push(format!(
                        "{name}: {} calls, {:.2} µs of CPU time each",
                        fmt_value(n),
                        a / 1e3
                    ));
                }
            }
        }
    }
    if let Some(k) = tables.iter().find(|t| t.report == "cuda_gpu_kern_sum") {
        let (inst, avg) = (k.column("Instances"), k.column("Avg"));
        // The launch-gap demo's kernel: its GPU time per launch is the floor under the gaps.
        if let Some(i) = k.find("bump")
            && let (Some(n), Some(a)) = (
                inst.and_then(|c| k.num(i, c)),
                avg.and_then(|c| k.num(i, c)),
            )
        {
            out.push(format!(
                "kernel bump: {} launches, {:.2} µs of GPU time each",
                fmt_value(n),
                a / 1e3
            ));
        }
    }
    out
}

/// Parses one report's CSV.
pub fn parse_stats(report: &str, text: &str) -> Result<StatsTable> {
    let lines: Vec<&str> = text.lines().collect();
    let skipped = lines
        .iter()
        .find(|l| l.trim_start().starts_with("SKIPPED"))
        .map(|l| l.trim().to_string());
    let Some(start) = lines
        .iter()
        .position(|l| l.contains("Time (%)") || l.starts_with("\"Time") || l.contains(",Name"))
    else {
        return Ok(StatsTable {
            report: report.to_string(),
            headers: Vec::new(),
            rows: Vec::new(),
            note: skipped.or_else(|| Some("no table in the output".into())),
        });
    };
    let body = lines[start..].join("\n");
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(body.as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .with_context(|| format!("reading the {report} header"))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let mut rows = Vec::new();
    for r in reader.records() {
        let r = r.with_context(|| format!("reading a {report} row"))?;
        if r.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        rows.push(r.iter().map(|c| c.trim().to_string()).collect());
    }
    Ok(StatsTable {
        report: report.to_string(),
        headers,
        rows,
        note: skipped,
    })
}

/// A CSV reader positioned at the header line that starts with `first_column` (nsys may print
/// notices above it), and the header's cells.
fn trace_reader<'a>(
    report: &str,
    text: &'a str,
    first_column: &str,
) -> Result<(csv::Reader<&'a [u8]>, Vec<String>)> {
    let Some(start) = text
        .match_indices(first_column)
        .map(|(i, _)| i)
        .find(|&i| i == 0 || text.as_bytes()[i - 1] == b'\n')
    else {
        match text.lines().find(|l| l.trim_start().starts_with("SKIPPED")) {
            Some(skipped) => bail!("{report}: {}", skipped.trim()),
            None => bail!("{report}: no header line starting with '{first_column}'"),
        }
    };
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(&text.as_bytes()[start..]);
    let headers = reader
        .headers()
        .with_context(|| format!("reading the {report} header"))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    Ok((reader, headers))
}

/// The index of column `name` in a trace's header.
fn trace_column(report: &str, headers: &[String], name: &str) -> Result<usize> {
    headers
        .iter()
        .position(|h| h == name)
        .with_context(|| format!("{report}: no column '{name}' in {}", headers.join(",")))
}

/// A whole number of a trace cell (nanoseconds, ids).
fn whole(report: &str, row: usize, record: &csv::StringRecord, col: usize) -> Result<u64> {
    let cell = record.get(col).unwrap_or("").trim();
    cell.parse::<u64>()
        .ok()
        .or_else(|| parse_number(cell).filter(|x| *x >= 0.0).map(|x| x as u64))
        .with_context(|| format!("{report} row {}: '{cell}' is not a whole number", row + 2))
}

/// One NVTX push/pop range, timed on the CPU thread that pushed it.
#[derive(Clone, Debug, PartialEq)]
pub struct NvtxRange {
    pub name: String,
    pub start: u64,
    pub end: u64,
    /// Nesting depth: 0 for a range pushed with none open.
    pub level: u32,
    pub tid: u64,
}

/// `nvtx_pushpop_trace`, in the order nsys lists the ranges (by start).
pub fn parse_pushpop_trace(text: &str) -> Result<Vec<NvtxRange>> {
    const R: &str = "nvtx_pushpop_trace";
    let (mut reader, headers) = trace_reader(R, text, "Start (ns)")?;
    let col = |name| trace_column(R, &headers, name);
    let (start, end, name, level, tid) = (
        col("Start (ns)")?,
        col("End (ns)")?,
        col("Name")?,
        col("Lvl")?,
        col("TID")?,
    );
    let mut ranges = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let r = record.with_context(|| format!("reading {R} row {}", i + 2))?;
        ranges.push(NvtxRange {
            name: r.get(name).unwrap_or("").to_string(),
            start: whole(R, i, &r, start)?,
            end: whole(R, i, &r, end)?,
            level: whole(R, i, &r, level)? as u32,
            tid: whole(R, i, &r, tid)?,
        });
    }
    Ok(ranges)
}

/// One kernel, memcpy or memset as the GPU ran it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuOp {
    pub start: u64,
    pub end: u64,
    /// The correlation id of the API call that issued it.
    pub corr: u64,
    /// Index into the names returned beside the operations.
    pub name: usize,
}

impl GpuOp {
    /// nsys names copies and memsets in brackets (`[CUDA memcpy Host-to-Device]`, `[CUDA
    /// memset]`); everything else is a kernel.
    pub fn is_kernel(&self, names: &[String]) -> bool {
        !names[self.name].starts_with('[')
    }
}

/// `cuda_gpu_trace`: the operations sorted by start, and their distinct names.
pub fn parse_gpu_trace(text: &str) -> Result<(Vec<GpuOp>, Vec<String>)> {
    const R: &str = "cuda_gpu_trace";
    let (mut reader, headers) = trace_reader(R, text, "Start (ns)")?;
    let col = |name| trace_column(R, &headers, name);
    let (start, duration, corr, name) = (
        col("Start (ns)")?,
        col("Duration (ns)")?,
        col("CorrId")?,
        col("Name")?,
    );
    let mut names: Vec<String> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let mut ops = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let r = record.with_context(|| format!("reading {R} row {}", i + 2))?;
        let n = r.get(name).unwrap_or("");
        let id = *index.entry(n.to_string()).or_insert_with(|| {
            names.push(n.to_string());
            names.len() - 1
        });
        let s = whole(R, i, &r, start)?;
        ops.push(GpuOp {
            start: s,
            end: s + whole(R, i, &r, duration)?,
            corr: whole(R, i, &r, corr)?,
            name: id,
        });
    }
    ops.sort_by_key(|o| (o.start, o.end));
    Ok((ops, names))
}

/// One CUDA API call, as much of it as the verdicts use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ApiCall {
    pub start: u64,
    pub end: u64,
    pub corr: u64,
    pub tid: u64,
    /// `cuGraphLaunch`, `cudaGraphLaunch` and their variants.
    pub graph_launch: bool,
}

/// `cuda_api_trace`.
pub fn parse_api_trace(text: &str) -> Result<Vec<ApiCall>> {
    const R: &str = "cuda_api_trace";
    let (mut reader, headers) = trace_reader(R, text, "Start (ns)")?;
    let col = |name| trace_column(R, &headers, name);
    let (start, duration, name, corr, tid) = (
        col("Start (ns)")?,
        col("Duration (ns)")?,
        col("Name")?,
        col("CorrID")?,
        col("Tid")?,
    );
    let mut calls = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let r = record.with_context(|| format!("reading {R} row {}", i + 2))?;
        let s = whole(R, i, &r, start)?;
        calls.push(ApiCall {
            start: s,
            end: s + whole(R, i, &r, duration)?,
            corr: whole(R, i, &r, corr)?,
            tid: whole(R, i, &r, tid)?,
            graph_launch: r.get(name).unwrap_or("").contains("GraphLaunch"),
        });
    }
    Ok(calls)
}
