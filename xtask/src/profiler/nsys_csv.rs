//! Parser for `nsys stats --report R --format csv` output, and its text rendering.
//!
//! Each report is one CSV table. The three the chapter reads:
//! - `nvtx_sum`: `Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),
//!   StdDev (ns),Style,Range` — time per NVTX range;
//! - `cuda_api_sum`: `…,Num Calls,…,Name` — calls and CPU time per CUDA API function;
//! - `cuda_gpu_kern_sum`: `…,Instances,…,Name` — GPU time per kernel.
//!
//! nsys may print notices before the table; an empty report prints `SKIPPED: …` instead.

use super::ncu_csv::parse_number;
use super::predict::fmt_value;
use anyhow::{Context, Result};

/// The reports `cargo xtask nsys` prints, in order.
pub const REPORTS: [&str; 3] = ["nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum"];

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
        super::report::render_table(&headers, &rows)
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
