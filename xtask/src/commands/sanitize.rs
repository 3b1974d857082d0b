//! `cargo xtask sanitize`: every kernel (all reductions f32/i32, transposes, bump, CUB, the
//! launch-gap graph demo), every backend (llvm, nvvm, nvcc), under compute-sanitizer's memcheck, racecheck,
//! synccheck and initcheck, at sizes that exercise the edges. One line per kernel × tool:
//! clean, or the first error. Any finding fails the command.
//!
//! First, each tool must flag its canary (`lab canary <tool>`, a kernel that is wrong on
//! purpose): a tool, or a reading of its output, that misses a planted fault would report every
//! kernel clean too, so a canary that comes back clean, or does not finish in
//! [`CANARY_LIMIT`], fails the command before anything else.

use crate::profiler::tools::{self, SANITIZER};
use crate::util;
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

    let kernels = kernel_names(&lab)?;

    // Every (tool, run) is its own process; run them four at a time.
    let mut jobs: Vec<(String, String, Command)> = Vec::new();
    for tool in &args.tool {
        for c in &CASES {
            let list = if c.reductions_only {
                kernels
                    .iter()
                    .filter(|k| k.starts_with("reduce") || k.starts_with("cub"))
                    .cloned()
                    .collect()
            } else {
                kernels.clone()
            };
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

/// Every single kernel name `lab run --list` knows (groups excluded).
fn kernel_names(lab: &Path) -> Result<Vec<String>> {
    let listing = crate::process::output(Command::new(lab).args(["run", "--list"]))?;
    let names: Vec<String> = listing
        .lines()
        .skip_while(|l| !l.starts_with("kernels"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    if names.is_empty() {
        bail!("`lab run --list` listed no kernels");
    }
    Ok(names)
}

type Outcome = Result<(i32, String)>;

/// Runs the jobs `width` at a time; each within `limit`, when given.
fn run_parallel(
    jobs: Vec<(String, String, Command)>,
    width: usize,
    limit: Option<Duration>,
) -> Vec<(String, String, Command, Outcome)> {
    let jobs = std::sync::Mutex::new(jobs.into_iter().enumerate().collect::<Vec<_>>());
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..width {
            s.spawn(|| {
                loop {
                    let Some((i, (tool, label, mut cmd))) = jobs.lock().unwrap().pop() else {
                        break;
                    };
                    eprintln!("sanitize: {tool} · {label}");
                    let outcome = match limit {
                        Some(limit) => output_within(&mut cmd, limit),
                        None => cmd
                            .output()
                            .with_context(|| format!("starting {}", crate::process::show(&cmd)))
                            .map(|o| {
                                let text = String::from_utf8_lossy(&o.stdout).into_owned()
                                    + &String::from_utf8_lossy(&o.stderr);
                                (o.status.code().unwrap_or(-1), text)
                            }),
                    };
                    done.lock().unwrap().push((i, (tool, label, cmd, outcome)));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// How long one canary may run under its tool (each takes seconds). The synccheck canary's
/// fault is undefined behaviour that could hang its warp; a canary that takes longer fails
/// the command instead of stalling it.
const CANARY_LIMIT: Duration = Duration::from_secs(60);

/// How long to wait, once a run has ended, for its output pipes to close.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// A run stopped at its time limit, with what it had printed by then.
#[derive(Debug)]
struct TimedOut {
    limit: Duration,
    text: String,
}

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "did not finish in {} s", self.limit.as_secs())
    }
}

impl std::error::Error for TimedOut {}

/// Like `cmd.output()`, but for at most `limit`: past it, `cmd`'s process group (it gets one of
/// its own, so compute-sanitizer and the lab it started) is killed and the run is [`TimedOut`].
fn output_within(cmd: &mut Command, limit: Duration) -> Outcome {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", crate::process::show(cmd)))?;
    let pipes = [drain(child.stdout.take()), drain(child.stderr.take())];
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() >= limit {
            let group = -i32::try_from(child.id())?;
            // SAFETY: kill(2) takes no pointers; a negative pid names the process group that
            // `process_group(0)` gave the child, whose id is the child's pid.
            unsafe { libc::kill(group, libc::SIGKILL) };
            child.wait()?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // A process that left the group could hold the pipes open: read what came, then go on.
    let ended = Instant::now();
    while pipes.iter().any(|(_, reader)| !reader.is_finished()) && ended.elapsed() < PIPE_GRACE {
        std::thread::sleep(Duration::from_millis(10));
    }
    let text: String = pipes
        .iter()
        .map(|(buf, _)| String::from_utf8_lossy(&buf.lock().unwrap()).into_owned())
        .collect();
    match status {
        Some(status) => Ok((status.code().unwrap_or(-1), text)),
        None => Err(TimedOut { limit, text }.into()),
    }
}

/// Reads `pipe` to its end on a thread of its own, into a buffer the caller can read at any time.
fn drain(
    pipe: Option<impl Read + Send + 'static>,
) -> (Arc<Mutex<Vec<u8>>>, std::thread::JoinHandle<()>) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let shared = Arc::clone(&buf);
    let reader = std::thread::spawn(move || {
        let Some(mut pipe) = pipe else { return };
        let mut chunk = [0u8; 8192];
        while let Ok(n @ 1..) = pipe.read(&mut chunk) {
            shared.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
    });
    (buf, reader)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_matched_to_listed_kernels() {
        assert!(same_kernel("reduce_v3_f32", "reduce_v3"));
        assert!(same_kernel("reduce_v3_i32", "reduce_v3_i32"));
        assert!(!same_kernel("reduce_v3_i32", "reduce_v3"));
        assert!(same_kernel(
            "n=257 offset=0 1000x777",
            "n=257 offset=0 1000x777"
        ));
        assert!(!same_kernel("transpose_v4_f32", "transpose_v"));
    }

    #[test]
    fn clean_output_has_no_findings() {
        let text =
            "========= COMPUTE-SANITIZER\nreduce_v1 [llvm] ok\n========= ERROR SUMMARY: 0 errors\n";
        assert!(parse_findings(text).is_empty());
    }

    #[test]
    fn memcheck_error_is_attributed_to_its_kernel() {
        let text = "========= COMPUTE-SANITIZER\n\
            ========= Invalid __global__ read of size 4 bytes\n\
            =========     at reduce_v6_f32+0x1b0\n\
            =========     by thread (3,0,0) in block (0,0,0)\n\
            ========= Invalid __global__ read of size 4 bytes\n\
            =========     at reduce_v6_f32+0x1b0\n\
            ========= Barrier error detected. Divergent thread(s) in warp\n\
            =========     at reduce_v3_f32+0x90 in reduce.rs:170\n\
            ========= ERROR SUMMARY: 3 errors\n";
        let f = parse_findings(text);
        assert_eq!(f.len(), 2);
        assert_eq!(
            f[0],
            Finding {
                kernel: "reduce_v6_f32".into(),
                message: "Invalid __global__ read of size 4 bytes".into()
            }
        );
        assert_eq!(f[1].kernel, "reduce_v3_f32");
    }

    /// Clean runs' output as compute-sanitizer printed it on the H200 (CUDA 13.0), lines taken
    /// from results/sanitize/sanitize.log: memcheck adds a leak summary, racecheck closes with
    /// its own summary instead of `ERROR SUMMARY`.
    const CLEAN_MEMCHECK: &str = "========= COMPUTE-SANITIZER\n\
        bump [nvcc]              grid 1×1  block 256×1  smem 0 B  ok (0 of 1 elements are not start + 1)\n\
        ========= LEAK SUMMARY: 0 bytes leaked in 0 allocations\n\
        ========= ERROR SUMMARY: 0 errors\n";
    const CLEAN_RACECHECK: &str = "========= COMPUTE-SANITIZER\n\
        cub_i32 [cub]            launch chosen by the library  ok (exact)\n\
        ========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n";
    const CLEAN_SYNCCHECK: &str = "========= COMPUTE-SANITIZER\n\
        cub_i32 [cub]            launch chosen by the library  ok (exact)\n\
        ========= ERROR SUMMARY: 0 errors\n";

    // The canaries' reports as compute-sanitizer (CUDA 13.0, driver 580) printed them on the
    // H200, trimmed to the error lines and the summaries (host backtraces dropped); the lab's
    // own lines are where they came out (stderr follows stdout in the text read).
    const FLAGGED_MEMCHECK: &str = r#"========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at canary_oob_write+0xb0 in canary.rs:18
=========     by thread (232,0,0) in block (3,0,0)
=========     Access to 0x7f6d0ca00fa0 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f6d0ca00000 of size 4,000 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
========= 
========= Program hit CUDA_ERROR_LAUNCH_FAILED (error 719) due to "unspecified launch failure" on CUDA API call to cuStreamSynchronize.
=========     Saved host backtrace up to driver entry point at error
========= 
========= Leaked 4,000 bytes at 0x7f6d0ca00000
=========     Saved host backtrace up to driver entry point at allocation time
========= 
========= Target application returned an error
========= LEAK SUMMARY: 4000 bytes leaked in 1 allocations
========= ERROR SUMMARY: 9 errors
error: running canary_oob_write failed: "unspecified launch failure": "unspecified launch failure"
"#;
    const FLAGGED_RACECHECK: &str = r#"========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at _RINvNtCslsCp9HRKB6n_4core3ptr14write_volatilemECsaAv7U5Jpq7c_11gpu_kernels+0x60 in mod.rs:2269
=========     and Write access at _RINvNtCslsCp9HRKB6n_4core3ptr14write_volatilemECsaAv7U5Jpq7c_11gpu_kernels+0x60 in mod.rs:2269 [63 hazards]
=========     and Read access at _RINvNtCslsCp9HRKB6n_4core3ptr13read_volatilemECsaAv7U5Jpq7c_11gpu_kernels+0x80 in mod.rs:2163 [4 hazards]
========= 
canary: canary_shared_race ran; it is wrong on purpose, for compute-sanitizer to flag
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"#;
    const FLAGGED_INITCHECK: &str = r#"========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 4 bytes
=========     at canary_uninit_read+0x2b0 in canary.rs:66
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x7f6f96a00000
=========     Saved host backtrace up to driver entry point at kernel launch time
========= 
canary: canary_uninit_read ran; it is wrong on purpose, for compute-sanitizer to flag
========= ERROR SUMMARY: 256 errors
========= ERROR SUMMARY: 236 errors were not printed. Use --print-limit option to adjust the number of printed errors
"#;
    /// A fault synccheck does not report, as the H200 printed it: `canary_divergent_barrier`, a
    /// `bar.sync` that threads 16..64 skip by exiting (on sm_70+ exited threads release it).
    const CLEAN_SYNCCHECK_CANARY: &str = r#"========= COMPUTE-SANITIZER
canary: canary_divergent_barrier ran; it is wrong on purpose, for compute-sanitizer to flag
========= ERROR SUMMARY: 0 errors
"#;
    // Not captured: the error line is synccheck's report of a warp sync by a thread outside its
    // mask, the fault NVIDIA's synccheck sample `illegal_syncwarp.cu` plants (some versions end
    // it with a period); the location is a guess. Replace with the H200's output of
    // `dist/xtask sanitize --canaries-only` (results/sanitize/canaries.log).
    const FLAGGED_SYNCCHECK: &str = r#"========= COMPUTE-SANITIZER
========= Barrier error detected. Invalid arguments
=========     at canary_warp_sync_mask+0x50 in llvm.rs:201
=========     by thread (16,0,0) in block (0,0,0)
========= 
canary: canary_warp_sync_mask ran; it is wrong on purpose, for compute-sanitizer to flag
========= ERROR SUMMARY: 1 error
"#;

    fn canary(tool: &str) -> &'static Canary {
        CANARIES.iter().find(|c| c.tool == tool).unwrap()
    }

    fn ran(code: i32, text: &str) -> Outcome {
        Ok((code, text.to_string()))
    }

    #[test]
    fn every_tool_has_one_canary() {
        assert_eq!(CANARIES.map(|c| c.tool), TOOLS);
    }

    #[test]
    fn summaries_are_read_from_real_clean_runs() {
        let none = Some(Summary::default());
        assert_eq!(parse_summary(CLEAN_MEMCHECK), none);
        assert_eq!(parse_summary(CLEAN_RACECHECK), none);
        assert_eq!(parse_summary(CLEAN_SYNCCHECK), none);
        assert_eq!(parse_summary(CLEAN_SYNCCHECK_CANARY), none);
        assert_eq!(parse_summary("error: no CUDA device found\n"), None);
    }

    #[test]
    fn summaries_count_errors_and_racecheck_warnings() {
        let s = |errors, warnings| Some(Summary { errors, warnings });
        assert_eq!(parse_summary(FLAGGED_MEMCHECK), s(9, 0));
        assert_eq!(parse_summary(FLAGGED_RACECHECK), s(1, 0));
        assert_eq!(parse_summary(FLAGGED_INITCHECK), s(256, 0));
        assert_eq!(parse_summary(FLAGGED_SYNCCHECK), s(1, 0));
        assert_eq!(
            parse_summary(
                "========= RACECHECK SUMMARY: 3 hazards displayed (0 errors, 3 warnings)\n"
            ),
            s(0, 3)
        );
    }

    #[test]
    fn each_canary_is_flagged_wherever_the_report_places_it() {
        for (tool, code, text, counted, message) in [
            (
                "memcheck",
                86,
                FLAGGED_MEMCHECK,
                "9 errors",
                "Invalid __global__ write of size 4 bytes",
            ),
            (
                "racecheck",
                0,
                FLAGGED_RACECHECK,
                "1 error",
                "Error: Race reported between Write access",
            ),
            (
                "synccheck",
                86,
                FLAGGED_SYNCCHECK,
                "1 error",
                "Barrier error detected. Invalid arguments",
            ),
            (
                "initcheck",
                86,
                FLAGGED_INITCHECK,
                "256 errors",
                "Uninitialized __global__ memory read of size 4 bytes",
            ),
        ] {
            let c = canary(tool);
            let row = judge_canary(c, &ran(code, text));
            assert!(row.flagged, "{}", row.line);
            assert_eq!(
                row.line,
                format!(
                    "canary {tool}: flagged ({counted}) — expected ({}: {message})",
                    c.kernel
                )
            );
        }
        // A count with no error line this command recognises is still the canary's.
        let text = "canary: canary_warp_sync_mask ran\n========= ERROR SUMMARY: 1 error\n";
        let row = judge_canary(canary("synccheck"), &ran(86, text));
        assert!(row.flagged, "{}", row.line);
        assert_eq!(
            row.line,
            "canary synccheck: flagged (1 error) — expected (canary_warp_sync_mask)"
        );
        // The synccheck canary may end its launch with an error, as memcheck's does.
        let text = FLAGGED_SYNCCHECK.replace(
            "canary: canary_warp_sync_mask ran; it is wrong on purpose, for compute-sanitizer to flag",
            "error: running canary_warp_sync_mask failed: \"an illegal instruction was encountered\"",
        );
        assert!(judge_canary(canary("synccheck"), &ran(86, &text)).flagged);
    }

    #[test]
    fn a_clean_canary_fails_sanitize_and_is_named() {
        let barrier = Canary {
            tool: "synccheck",
            kernel: "canary_divergent_barrier",
            fault: "a barrier in divergent code",
        };
        let rows = [
            judge_canary(canary("memcheck"), &ran(86, FLAGGED_MEMCHECK)),
            judge_canary(canary("racecheck"), &ran(0, FLAGGED_RACECHECK)),
            judge_canary(&barrier, &ran(0, CLEAN_SYNCCHECK_CANARY)),
            judge_canary(canary("initcheck"), &ran(86, FLAGGED_INITCHECK)),
        ];
        let e = check_canaries(&rows, Path::new("results/sanitize/canaries.log"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "canary synccheck came back clean: synccheck did not flag canary_divergent_barrier (a barrier in divergent code), so its clean results would prove nothing (see results/sanitize/canaries.log)"
        );
        assert!(check_canaries(&rows[..2], Path::new("x")).is_ok());
    }

    #[test]
    fn errors_outside_a_run_of_the_canary_do_not_flag_it() {
        // Counted in a run of another kernel.
        let row = judge_canary(canary("synccheck"), &ran(86, FLAGGED_RACECHECK));
        assert!(!row.flagged);
        assert_eq!(
            row.line,
            "canary synccheck: the canary run itself failed (exit 86): ========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"
        );
        let text = FLAGGED_SYNCCHECK.replace("_mask ran", "_mask_v2 ran");
        let row = judge_canary(canary("synccheck"), &ran(0, &text));
        assert!(!row.flagged);
        assert!(
            row.line.starts_with(
                "canary synccheck: `lab canary synccheck` did not report running canary_warp_sync_mask: "
            ),
            "{}",
            row.line
        );
        // The launch failed with only host-side errors counted: it failed on its own.
        let text = "========= COMPUTE-SANITIZER\n\
            ========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuLaunchKernel.\n\
            =========     Saved host backtrace up to driver entry point at error\n\
            ========= ERROR SUMMARY: 1 error\n\
            error: running canary_oob_write failed: \"invalid argument\"\n";
        let row = judge_canary(canary("memcheck"), &ran(86, text));
        assert!(!row.flagged);
        assert_eq!(
            row.line,
            "canary memcheck: the canary run itself failed (exit 86): error: running canary_oob_write failed: \"invalid argument\""
        );
        // The lab failed before the kernel ran: no error counted, a non-zero exit.
        let text = "========= COMPUTE-SANITIZER\nerror: no CUDA device found (the driver loaded but reports none): run on a machine with an NVIDIA GPU\n========= ERROR SUMMARY: 0 errors\n";
        let row = judge_canary(canary("initcheck"), &ran(1, text));
        assert!(!row.flagged);
        assert!(
            row.line
                .starts_with("canary initcheck: the canary run itself failed (exit 1): "),
            "{}",
            row.line
        );
    }

    #[test]
    fn a_canary_without_a_readable_summary_or_an_end_fails() {
        let row = judge_canary(
            canary("memcheck"),
            &ran(1, "compute-sanitizer: error: target not found\n"),
        );
        assert!(!row.flagged);
        assert_eq!(
            row.line,
            "canary memcheck: compute-sanitizer printed no summary (exit 1): compute-sanitizer: error: target not found"
        );
        let row = judge_canary(canary("memcheck"), &Err(anyhow::anyhow!("starting x")));
        assert_eq!(row.line, "canary memcheck could not run: starting x");
        let hung = TimedOut {
            limit: CANARY_LIMIT,
            text: "========= COMPUTE-SANITIZER\n".into(),
        };
        let row = judge_canary(canary("synccheck"), &Err(hung.into()));
        assert!(!row.flagged);
        assert_eq!(row.line, "canary synccheck did not finish in 60 s");
    }

    #[test]
    fn a_run_past_its_limit_is_stopped_with_its_whole_group() {
        // The shell's `sleep` is a child of its own that holds the output pipe: unless the
        // whole group is killed, reading the output waits for the sleep (or PIPE_GRACE).
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo started; sleep 30; echo never"]);
        let start = Instant::now();
        let e = output_within(&mut cmd, Duration::from_millis(300)).unwrap_err();
        let waited = start.elapsed();
        let t = e.downcast_ref::<TimedOut>().expect("a TimedOut");
        assert_eq!(t.text, "started\n");
        assert!(waited < PIPE_GRACE, "{waited:?}");
        // A run that ends in time comes back whole, stdout then stderr, with its exit code.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let (code, text) = output_within(&mut cmd, Duration::from_secs(10)).unwrap();
        assert_eq!((code, text.as_str()), (3, "out\nerr\n"));
    }

    #[test]
    fn cub_kernels_and_host_errors_are_named() {
        let text = "========= Error: Race reported between Write access at void cub::DeviceReduceKernel<int>(int*)+0x10\n\
            =========     at void cub::DeviceReduceKernel<int>(int*)+0x10\n\
            ========= Leaked 4 bytes at 0x7f0000000000\n";
        let f = parse_findings(text);
        assert_eq!(f[0].kernel, "cub");
        assert_eq!(f[1].kernel, "(host)");
    }
}
