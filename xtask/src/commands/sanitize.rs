//! `cargo xtask sanitize`: every kernel (all reductions f32/i32, transposes, bump, CUB, the
//! launch-gap graph demo), every backend (llvm, nvvm, nvcc), under compute-sanitizer's memcheck, racecheck,
//! synccheck and initcheck, at sizes that exercise the edges. One line per kernel × tool:
//! clean, or the first error. Any finding fails the command.
//!
//! First, each tool must flag its canary (`lab canary <tool>`, a kernel that is wrong on
//! purpose): a tool, or a reading of its output, that misses a planted fault would report every
//! kernel clean too, so a canary that comes back clean, or does not finish in
//! [`CANARY_LIMIT`], fails the command before anything else.

use crate::process::{Outcome, TimedOut, run_parallel};
use crate::profiler::tools::{self, SANITIZER};
use crate::util;
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// Tools to run (default: all four)
    #[arg(long, value_delimiter = ',', default_values_t = TOOLS.map(String::from))]
    tool: Vec<String>,
    /// Output folder for the log and the summary
    #[arg(long, default_value = "results/sanitize")]
    output: PathBuf,
    /// The lab binary (default: beside this executable)
    #[arg(long)]
    lab: Option<PathBuf>,
    /// Output format of the per kernel × tool lines
    #[arg(long, value_enum, default_value_t = catalog::Format::Table)]
    format: catalog::Format,
    /// Run only the canaries (one deliberately wrong kernel per tool, each of which must be
    /// flagged): a quick check of the sanitizer and of this command's reading of it
    #[arg(long)]
    canaries_only: bool,
}

/// The label of the launch-gap demo's run (it has no kernel list of its own).
const GRAPH_DEMO: &str = "launch-gap graph demo";

/// One kernel × tool result.
#[derive(serde::Serialize)]
struct Row {
    kernel: String,
    tool: String,
    clean: bool,
    first_error: Option<String>,
}

/// Whether a finding's kernel (a PTX entry such as `reduce_v3_f32`, or a run label) is the
/// listed kernel `name` (`reduce_v3` is the f32 entry).
fn same_kernel(finding: &str, name: &str) -> bool {
    finding == name || finding == format!("{name}_f32") || finding.starts_with(&format!("{name} ["))
}

const TOOLS: [&str; 4] = ["memcheck", "racecheck", "synccheck", "initcheck"];

/// A kernel that is wrong on purpose (`gpu-kernels/src/canary.rs`, launched by the hidden
/// `lab canary <tool>`), one per tool.
pub struct Canary {
    pub tool: &'static str,
    /// Its PTX entry, the one kernel `lab canary <tool>` launches.
    pub kernel: &'static str,
    /// What it does wrong.
    pub fault: &'static str,
}

pub const CANARIES: [Canary; 4] = [
    Canary {
        tool: "memcheck",
        kernel: "canary_oob_write",
        fault: "a global write one element past its buffer",
    },
    Canary {
        tool: "racecheck",
        kernel: "canary_shared_race",
        fault: "a shared-memory race",
    },
    Canary {
        tool: "synccheck",
        kernel: "canary_warp_sync_mask",
        fault: "a warp sync by a thread its mask leaves out",
    },
    Canary {
        tool: "initcheck",
        kernel: "canary_uninit_read",
        fault: "a read of uninitialised global memory",
    },
];

/// How a canary came back, for the report.
#[derive(serde::Serialize)]
struct CanaryRow {
    tool: &'static str,
    kernel: &'static str,
    flagged: bool,
    errors: u64,
    warnings: u64,
    /// The report line: `canary memcheck: flagged (1 error) — expected (…)`, or why it failed.
    line: String,
}

/// One `lab` invocation: reductions of `n` elements starting `offset` past a 16-byte
/// boundary, transposes of `rows × cols`.
struct Case {
    n: u64,
    offset: u32,
    rows: u32,
    cols: u32,
    /// Only the reductions (the misaligned cases).
    reductions_only: bool,
}

/// 1, 31, 257, 2^20 + 3 elements; misaligned starts 1–3; matrices 1×1, 33×31, 1000×777.
const CASES: [Case; 7] = [
    Case {
        n: 1,
        offset: 0,
        rows: 1,
        cols: 1,
        reductions_only: false,
    },
    Case {
        n: 31,
        offset: 0,
        rows: 33,
        cols: 31,
        reductions_only: false,
    },
    Case {
        n: 257,
        offset: 0,
        rows: 1000,
        cols: 777,
        reductions_only: false,
    },
    Case {
        n: (1 << 20) + 3,
        offset: 0,
        rows: 64,
        cols: 64,
        reductions_only: false,
    },
    Case {
        n: (1 << 20) + 3,
        offset: 1,
        rows: 1,
        cols: 1,
        reductions_only: true,
    },
    Case {
        n: (1 << 20) + 3,
        offset: 2,
        rows: 1,
        cols: 1,
        reductions_only: true,
    },
    Case {
        n: 257,
        offset: 3,
        rows: 1,
        cols: 1,
        reductions_only: true,
    },
];

/// The first error compute-sanitizer reported for one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kernel: String,
    pub message: String,
}

pub fn run(args: &Args) -> Result<()> {
    for t in &args.tool {
        if !TOOLS.contains(&t.as_str()) {
            bail!("unknown tool '{t}': choose from {}", TOOLS.join(", "));
        }
    }
    let sanitizer = SANITIZER.find()?;
    let lab = util::lab_binary(args.lab.as_deref())?;
    let root = util::root();
    let out = root.join(&args.output);
    std::fs::create_dir_all(&out)?;

    let canaries = run_canaries(&sanitizer, &lab, &args.tool, &out)?;
    let header = format!(
        "# cargo xtask sanitize — {} — commit {}\n",
        util::now_utc(),
        util::git_commit(&root)
    );
    let canary_lines: String = canaries.iter().map(|c| format!("{}\n", c.line)).collect();
    if args.canaries_only {
        let summary = header + &canary_lines;
        match args.format {
            catalog::Format::Table => print!("{summary}"),
            catalog::Format::Json => println!(
                "{}",
                serde_json::to_string_pretty(
                    &serde_json::json!({"schema_version": 1, "canaries": canaries})
                )?
            ),
            catalog::Format::Csv => {
                let mut w = csv::Writer::from_writer(std::io::stdout());
                for c in &canaries {
                    w.serialize(c)?;
                }
                w.flush()?;
            }
        }
        return tools::write_atomic(&out.join("canaries.txt"), summary.as_bytes());
    }

    // Every kernel of the catalogue, in its order.
    let kernels: Vec<String> = catalog::KERNELS
        .iter()
        .map(|k| k.name.to_string())
        .collect();

    // Every (tool, run) is its own process; run them four at a time.
    let mut jobs: Vec<(String, String, Command)> = Vec::new();
    for tool in &args.tool {
        for c in &CASES {
            let list: Vec<&str> = catalog::KERNELS
                .iter()
                .filter(|k| !c.reductions_only || k.family == catalog::Family::Reduce)
                .map(|k| k.name)
                .collect();
            let mut cmd = sanitizer_cmd(&sanitizer, tool);
            cmd.arg(&lab)
                .args(["run", "--backend", "all", "--kernel", &list.join(",")]);
            cmd.args([
                "--size",
                &c.n.to_string(),
                "--offset",
                &c.offset.to_string(),
            ]);
            cmd.args(["--rows", &c.rows.to_string(), "--cols", &c.cols.to_string()]);
            let label = format!("n={} offset={} {}x{}", c.n, c.offset, c.rows, c.cols);
            jobs.push((tool.clone(), label, cmd));
        }
        // The launch-gap demo: 1000 bump launches, synchronised, back to back, and as a graph.
        let mut cmd = sanitizer_cmd(&sanitizer, tool);
        cmd.arg(&lab).args([
            "bench",
            "--kernel",
            "launch_gap",
            "--reps",
            "1",
            "--warmup",
            "0",
            "-q",
        ]);
        jobs.push((tool.clone(), GRAPH_DEMO.into(), cmd));
    }

    let results = run_parallel(jobs, 4, None);
    let mut log = String::new();
    let mut table: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut failures = 0;
    for (tool, label, cmd, outcome) in &results {
        log += &format!("===== {tool} · {label}\n$ {}\n", crate::process::show(cmd));
        match outcome {
            Ok((code, text)) => {
                log += text;
                let findings = parse_findings(text);
                let lab_failed = *code != 0 && findings.is_empty();
                if lab_failed {
                    failures += 1;
                    table
                        .entry((label.clone(), tool.clone()))
                        .or_default()
                        .push(format!(
                            "the run itself failed (exit {code}): {}",
                            last_line(text)
                        ));
                }
                for f in findings {
                    failures += 1;
                    table
                        .entry((f.kernel.clone(), tool.clone()))
                        .or_default()
                        .push(format!("{label}: {}", f.message));
                }
            }
            Err(e) => {
                failures += 1;
                table
                    .entry((label.clone(), tool.clone()))
                    .or_default()
                    .push(format!("could not run: {e:#}"));
            }
        }
    }

    // One row per kernel × tool: clean, or the first finding.
    let mut rows: Vec<Row> = Vec::new();
    for tool in &args.tool {
        for k in kernels.iter().map(String::as_str).chain([GRAPH_DEMO]) {
            let first = table
                .iter()
                .find(|((f, t), _)| t == tool && same_kernel(f, k))
                .map(|(_, v)| v[0].clone());
            rows.push(Row {
                kernel: k.into(),
                tool: tool.clone(),
                clean: first.is_none(),
                first_error: first,
            });
        }
    }
    // Findings in kernels not on the list (CUB's internal kernels) or from a failed run.
    for ((f, tool), msgs) in &table {
        if !kernels
            .iter()
            .map(String::as_str)
            .chain([GRAPH_DEMO])
            .any(|k| same_kernel(f, k))
        {
            rows.push(Row {
                kernel: f.clone(),
                tool: tool.clone(),
                clean: false,
                first_error: Some(msgs[0].clone()),
            });
        }
    }
    let mut summary = header
        + "# cases: reductions n = 1, 31, 257, 2^20+3 (offsets 0..3), transposes 1x1, 33x31, 1000x777, 64x64; bump; CUB; launch-gap graph demo; backends llvm, nvvm and nvcc (the CUDA C++ twins)\n"
        + &canary_lines;
    for r in &rows {
        match &r.first_error {
            None => summary += &format!("{:<24} {:<10} clean\n", r.kernel, r.tool),
            Some(e) => summary += &format!("{:<24} {:<10} FAILED  {e}\n", r.kernel, r.tool),
        }
    }
    summary += &format!("{failures} finding(s)\n");
    match args.format {
        catalog::Format::Table => print!("{summary}"),
        catalog::Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"schema_version": 1, "findings": failures, "canaries": canaries, "rows": rows})
            )?
        ),
        catalog::Format::Csv => {
            let mut w = csv::Writer::from_writer(std::io::stdout());
            for r in &rows {
                w.serialize(r)?;
            }
            w.flush()?;
        }
    }
    tools::write_atomic(&out.join("sanitize.log"), log.as_bytes())?;
    tools::write_atomic(&out.join("sanitize.txt"), summary.as_bytes())?;
    if failures > 0 {
        bail!(
            "compute-sanitizer reported {failures} finding(s): see {}",
            out.join("sanitize.log").display()
        );
    }
    Ok(())
}

fn sanitizer_cmd(sanitizer: &Path, tool: &str) -> Command {
    let mut cmd = Command::new(sanitizer);
    cmd.args([
        "--tool",
        tool,
        "--error-exitcode",
        "86",
        "--print-limit",
        "20",
    ]);
    if tool == "memcheck" {
        cmd.args(["--leak-check", "full"]);
    }
    cmd
}

/// Runs each selected tool's canary under that tool, writes their output to `canaries.log`, and
/// fails, naming each canary, unless every one was flagged where it was planted.
fn run_canaries(
    sanitizer: &Path,
    lab: &Path,
    selected: &[String],
    out: &Path,
) -> Result<Vec<CanaryRow>> {
    let jobs = CANARIES
        .iter()
        .filter(|c| selected.iter().any(|t| t == c.tool))
        .map(|c| {
            let mut cmd = sanitizer_cmd(sanitizer, c.tool);
            cmd.arg(lab).args(["canary", c.tool]);
            (c.tool.to_string(), format!("canary {}", c.kernel), cmd)
        })
        .collect();
    let results = run_parallel(jobs, 4, Some(CANARY_LIMIT));
    let mut log = String::new();
    let mut rows = Vec::new();
    for (tool, label, cmd, outcome) in &results {
        log += &format!("===== {tool} · {label}\n$ {}\n", crate::process::show(cmd));
        match outcome {
            Ok((_, text)) => log += text,
            Err(e) => {
                if let Some(t) = e.downcast_ref::<TimedOut>() {
                    log += &t.text;
                }
                log += &format!("xtask sanitize: {e:#}\n");
            }
        }
        let canary = CANARIES.iter().find(|c| c.tool == tool).unwrap();
        rows.push(judge_canary(canary, outcome));
    }
    let log_path = out.join("canaries.log");
    tools::write_atomic(&log_path, log.as_bytes())?;
    check_canaries(&rows, &log_path)?;
    Ok(rows)
}

/// The one line that fails the command when any canary was not flagged.
fn check_canaries(rows: &[CanaryRow], log: &Path) -> Result<()> {
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| !r.flagged)
        .map(|r| r.line.as_str())
        .collect();
    if !failed.is_empty() {
        bail!("{} (see {})", failed.join("; "), log.display());
    }
    Ok(())
}

/// A canary is flagged when the tool's summary counts at least one error (or racecheck
/// warning) in a run of the canary. `lab canary <tool>` launches that one kernel and nothing
/// else, so what the tool finds in the process is the canary's, wherever the report places it
/// (racecheck names the inlined `core::ptr::write_volatile`, not the kernel). Anything less,
/// and the tool or this command's reading of it would miss a real fault as well.
fn judge_canary(c: &Canary, outcome: &Outcome) -> CanaryRow {
    let mut row = CanaryRow {
        tool: c.tool,
        kernel: c.kernel,
        flagged: false,
        errors: 0,
        warnings: 0,
        line: String::new(),
    };
    let (code, text) = match outcome {
        Ok(ok) => ok,
        Err(e) => {
            row.line = match e.downcast_ref::<TimedOut>() {
                Some(t) => format!("canary {} {t}", c.tool),
                None => format!("canary {} could not run: {e:#}", c.tool),
            };
            return row;
        }
    };
    let Some(summary) = parse_summary(text) else {
        row.line = format!(
            "canary {}: compute-sanitizer printed no summary (exit {code}): {}",
            c.tool,
            last_line(text)
        );
        return row;
    };
    row.errors = summary.errors;
    row.warnings = summary.warnings;
    let counted = plural(summary.errors, "error")
        + &if summary.warnings > 0 {
            format!(", {}", plural(summary.warnings, "warning"))
        } else {
            String::new()
        };
    let findings = parse_findings(text);
    let on_device = findings.iter().find(|f| !is_host_side(&f.message));
    row.line = if !canary_ran(text, c.kernel, on_device.is_some()) {
        if *code != 0 {
            format!(
                "canary {}: the canary run itself failed (exit {code}): {}",
                c.tool,
                last_line(text)
            )
        } else {
            format!(
                "canary {}: `lab canary {}` did not report running {}: {}",
                c.tool,
                c.tool,
                c.kernel,
                last_line(text)
            )
        }
    } else if summary.errors + summary.warnings == 0 {
        format!(
            "canary {} came back clean: {} did not flag {} ({}), so its clean results would prove nothing",
            c.tool, c.tool, c.kernel, c.fault
        )
    } else {
        row.flagged = true;
        let first = on_device
            .or(findings.first())
            .map(|f| format!(": {}", headline(&f.message)))
            .unwrap_or_default();
        format!(
            "canary {}: flagged ({counted}) — expected ({}{first})",
            c.tool, c.kernel
        )
    };
    row
}

/// Whether the output shows `lab canary` running `kernel`: its closing `canary: <kernel> ran`
/// line, or its error for a launch the tool stopped (memcheck ends the kernel at the invalid
/// write) together with a fault the device reported. A launch that failed on its own (bad
/// arguments, no device) leaves only host-side errors.
fn canary_ran(text: &str, kernel: &str, device_fault: bool) -> bool {
    let ran = format!("canary: {kernel} ran");
    let stopped = format!("error: running {kernel} failed");
    text.lines()
        .map(str::trim_start)
        .any(|l| l.starts_with(&ran) || (device_fault && l.starts_with(&stopped)))
}

/// Errors compute-sanitizer reports from the host: failed API calls (after a stopped kernel,
/// every later call fails) and leaks.
fn is_host_side(message: &str) -> bool {
    message.starts_with("Program hit") || message.starts_with("Leaked")
}

/// A finding's message without its location (`Error: Race reported between Write access at
/// <function>+0x60 in mod.rs:2269` reads `Error: Race reported between Write access`).
fn headline(message: &str) -> &str {
    message.split(" at ").next().unwrap_or(message)
}

fn plural(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// What compute-sanitizer counted, from its closing line: `ERROR SUMMARY: N errors` (memcheck,
/// synccheck, initcheck), or racecheck's `RACECHECK SUMMARY: H hazards displayed (N errors,
/// M warnings)`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    pub errors: u64,
    pub warnings: u64,
}

/// The counts of every summary line in `text` (the largest of each), or `None` when it has no
/// summary line (the sanitizer did not get to the end).
pub fn parse_summary(text: &str) -> Option<Summary> {
    let mut found: Option<Summary> = None;
    for line in text.lines() {
        let Some(body) = line.strip_prefix("=========") else {
            continue;
        };
        let body = body.trim();
        let Some(counts) = body
            .strip_prefix("ERROR SUMMARY:")
            .or_else(|| body.strip_prefix("RACECHECK SUMMARY:"))
        else {
            continue;
        };
        let sum = found.get_or_insert_with(Summary::default);
        // "1 error", "0 hazards displayed (0 errors, 0 warnings)": a number, then its word.
        for part in counts.split(['(', ')', ',']) {
            let mut words = part.split_whitespace();
            if let (Some(Ok(n)), Some(word)) = (words.next().map(str::parse::<u64>), words.next()) {
                if word.starts_with("error") {
                    sum.errors = sum.errors.max(n);
                } else if word.starts_with("warning") {
                    sum.warnings = sum.warnings.max(n);
                }
            }
        }
    }
    found
}

fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

/// compute-sanitizer's report, one finding per kernel: an error header line
/// (`========= Invalid __global__ read …`, `========= Error: Race reported …`,
/// `========= Barrier error …`, `========= Uninitialized …`, `========= Leaked …`) and the
/// kernel from the first `at <kernel>+0x…` line after it. Our kernels have plain (no_mangle)
/// names; CUB's are C++ signatures and are reported as `cub`.
pub fn parse_findings(text: &str) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut pending: Option<String> = None;
    for line in text.lines() {
        let Some(body) = line.strip_prefix("=========") else {
            continue;
        };
        let body = body.trim();
        if body.is_empty()
            || body.starts_with("COMPUTE-SANITIZER")
            || body.starts_with("ERROR SUMMARY")
        {
            continue;
        }
        let indented = line.starts_with("=========  ") || line.starts_with("=========\t");
        if !indented {
            // A new error header (kernel still unknown) — unless it is a host-side note.
            if is_error_header(body) {
                if let Some(msg) = pending.take() {
                    out.push(Finding {
                        kernel: "(host)".into(),
                        message: msg,
                    });
                }
                // racecheck names the kernel on the header line itself.
                match body.find(" at ").filter(|_| body.contains("+0x")) {
                    Some(i) => push(&mut out, kernel_of(&body[i + 4..]), body),
                    None => pending = Some(body.to_string()),
                }
            }
            continue;
        }
        if let (Some(msg), Some(rest)) = (pending.as_ref(), body.strip_prefix("at ")) {
            push(&mut out, kernel_of(rest), msg);
            pending = None;
        }
    }
    if let Some(msg) = pending {
        out.push(Finding {
            kernel: "(host)".into(),
            message: msg,
        });
    }
    out
}

/// Keeps the first finding of each kernel.
fn push(out: &mut Vec<Finding>, kernel: String, message: &str) {
    if !out.iter().any(|f| f.kernel == kernel) {
        out.push(Finding {
            kernel,
            message: message.to_string(),
        });
    }
}

fn is_error_header(body: &str) -> bool {
    [
        "Invalid",
        "Error",
        "Race",
        "Barrier",
        "Uninitialized",
        "Leaked",
        "Program hit",
        "Malloc",
        "Misaligned",
        "Out-of-range",
        "Warning",
    ]
    .iter()
    .any(|p| body.starts_with(p))
}

fn kernel_of(at: &str) -> String {
    let name = at.split(['+', ' ', '(']).next().unwrap_or(at);
    if at.contains("cub::") || name.contains("cub") {
        "cub".into()
    } else {
        name.to_string()
    }
}

/// How long one canary may run under its tool (each takes seconds). The synccheck canary's
/// fault is undefined behaviour that could hang its warp; a canary that takes longer fails
/// the command instead of stalling it.
const CANARY_LIMIT: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests;
