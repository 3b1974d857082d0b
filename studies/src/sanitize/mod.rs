//! Every kernel (all reductions f32/i32, transposes, the row-wise kernels, bump, CUB, the
//! launch-gap graph demo), every backend (llvm, nvvm, nvcc), under compute-sanitizer's memcheck,
//! racecheck, synccheck and initcheck, at sizes that exercise the edges: one line per kernel ×
//! tool, clean or the first error (`cargo xtask sanitize`).
//!
//! - [`canary`]: the kernels that are wrong on purpose, which each tool must flag first.
//! - [`findings`]: compute-sanitizer's output read: findings per kernel, summary counts.

pub mod canary;
pub mod findings;

pub use canary::{CANARIES, CANARY_LIMIT, Canary, CanaryCheck, check_canaries, judge_canary};
pub use findings::{Finding, Summary, parse_findings, parse_summary};

use crate::process::run_parallel;
use anyhow::{Result, bail};
use findings::last_line;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The tools, in the order they run and report.
pub const TOOLS: [&str; 4] = ["memcheck", "racecheck", "synccheck", "initcheck"];

/// Fails unless every name in `tools` is one of [`TOOLS`].
pub fn check_tools(tools: &[String]) -> Result<()> {
    for t in tools {
        if !TOOLS.contains(&t.as_str()) {
            bail!("unknown tool '{t}': choose from {}", TOOLS.join(", "));
        }
    }
    Ok(())
}

/// The label of the launch-gap demo's run (it has no kernel list of its own).
const GRAPH_DEMO: &str = "launch-gap graph demo";

/// What the summary says the runs cover (the [`CASES`], the demo and the backends).
const CASES_LINE: &str = "# cases: reductions n = 1, 31, 257, 2^20+3 (offsets 0..3), transposes and the row-wise kernels (f32) 1x1, 33x31, 1000x777, 64x64; bump; CUB; launch-gap graph demo; backends llvm, nvvm and nvcc (the CUDA C++ twins)\n";

/// One kernel × tool result.
#[derive(serde::Serialize)]
pub struct KernelCheck {
    pub kernel: String,
    pub tool: String,
    pub clean: bool,
    pub first_error: Option<String>,
}

/// Whether a finding's kernel (a PTX entry such as `reduce_v3_f32`, or a run label) is the
/// listed kernel `name` (`reduce_v3` is the f32 entry).
pub fn same_kernel(finding: &str, name: &str) -> bool {
    finding == name || finding == format!("{name}_f32") || finding.starts_with(&format!("{name} ["))
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

/// The catalogue's kernels the sanitizer runs: all but the fault catalogue, which `lab run`
/// launches at its profiling sizes (a 4096³ GEMM, 1 GiB streams), far too slow under the
/// sanitizer's instrumentation; the GPU tests check those kernels at small sizes.
fn sanitized() -> impl Iterator<Item = &'static catalog::Kernel> {
    catalog::KERNELS
        .iter()
        .filter(|k| k.family != catalog::Family::Faults)
}

/// `compute-sanitizer --tool TOOL` with the flags every run gets.
pub(crate) fn sanitizer_cmd(sanitizer: &Path, tool: &str) -> Command {
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

/// What the kernels' runs found.
pub struct Checked {
    /// One row per kernel × tool, then one per finding in a kernel not on the list.
    pub rows: Vec<KernelCheck>,
    /// Findings, and runs that failed by themselves.
    pub findings: usize,
    /// Every run's command line and output.
    pub log: String,
}

/// Runs every kernel of the catalogue under each of `tools`, each (tool, case) its own
/// process, four at a time.
pub fn check_kernels(sanitizer: &Path, lab: &Path, tools: &[String]) -> Checked {
    let mut jobs: Vec<(String, String, Command)> = Vec::new();
    for tool in tools {
        for c in &CASES {
            let list: Vec<&str> = sanitized()
                .filter(|k| !c.reductions_only || k.family == catalog::Family::Reduce)
                .map(|k| k.name)
                .collect();
            let mut cmd = sanitizer_cmd(sanitizer, tool);
            cmd.arg(lab)
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
        let mut cmd = sanitizer_cmd(sanitizer, tool);
        cmd.arg(lab).args([
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
    tally(tools, &run_parallel(jobs, 4, None))
}

/// The runs' findings as rows: clean, or the first finding, per kernel × tool.
fn tally(
    tools: &[String],
    results: &[(String, String, Command, crate::process::Outcome)],
) -> Checked {
    let mut log = String::new();
    let mut table: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut failures = 0;
    for (tool, label, cmd, outcome) in results {
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

    // Every sanitized kernel of the catalogue, in its order, then the demo.
    let listed = || sanitized().map(|k| k.name).chain([GRAPH_DEMO]);
    let mut rows: Vec<KernelCheck> = Vec::new();
    for tool in tools {
        for k in listed() {
            let first = table
                .iter()
                .find(|((f, t), _)| t == tool && same_kernel(f, k))
                .map(|(_, v)| v[0].clone());
            rows.push(KernelCheck {
                kernel: k.into(),
                tool: tool.clone(),
                clean: first.is_none(),
                first_error: first,
            });
        }
    }
    // Findings in kernels not on the list (CUB's internal kernels) or from a failed run.
    for ((f, tool), msgs) in &table {
        if !listed().any(|k| same_kernel(f, k)) {
            rows.push(KernelCheck {
                kernel: f.clone(),
                tool: tool.clone(),
                clean: false,
                first_error: Some(msgs[0].clone()),
            });
        }
    }
    Checked {
        rows,
        findings: failures,
        log,
    }
}

/// `# cargo xtask sanitize — DATE — commit C`: the summary's first line.
pub fn header(root: &Path) -> String {
    format!(
        "# cargo xtask sanitize — {} — commit {}\n",
        crate::util::now_utc(),
        crate::util::git_commit(root)
    )
}

/// The canaries' report lines.
pub fn canary_lines(canaries: &[CanaryCheck]) -> String {
    canaries.iter().map(|c| format!("{}\n", c.line)).collect()
}

/// The summary as printed and kept: the header, the cases, the canaries, one line per row, the
/// count of findings.
pub fn summary(header: &str, canaries: &[CanaryCheck], checked: &Checked) -> String {
    let mut summary = header.to_string() + CASES_LINE + &canary_lines(canaries);
    for r in &checked.rows {
        match &r.first_error {
            None => summary += &format!("{:<24} {:<10} clean\n", r.kernel, r.tool),
            Some(e) => summary += &format!("{:<24} {:<10} FAILED  {e}\n", r.kernel, r.tool),
        }
    }
    summary += &format!("{} finding(s)\n", checked.findings);
    summary
}

#[cfg(test)]
mod tests;
