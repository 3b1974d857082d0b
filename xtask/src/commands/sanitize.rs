//! `cargo xtask sanitize`: every kernel (all reductions f32/i32, transposes, bump, CUB, the
//! launch-gap graph demo), every backend (llvm, nvvm, nvcc), under compute-sanitizer's memcheck, racecheck,
//! synccheck and initcheck, at sizes that exercise the edges. One line per kernel × tool:
//! clean, or the first error. Any finding fails the command.

use crate::profiler::tools::{self, SANITIZER};
use crate::util;
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    #[arg(long, value_enum, default_value_t = util::Format::Table)]
    format: util::Format,
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
    let kernels = kernel_names(&lab)?;
    let root = util::root();
    let out = root.join(&args.output);
    std::fs::create_dir_all(&out)?;

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

    let results = run_parallel(jobs, 4);
    let mut log = String::new();
    let mut table: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut failures = 0;
    for (tool, label, cmd, outcome) in &results {
        log += &format!("===== {tool} · {label}\n$ {}\n", tools::show(cmd));
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
    let mut summary = format!(
        "# cargo xtask sanitize — {} — commit {}\n# cases: reductions n = 1, 31, 257, 2^20+3 (offsets 0..3), transposes 1x1, 33x31, 1000x777, 64x64; bump; CUB; launch-gap graph demo; backends llvm, nvvm and nvcc (the CUDA C++ twins)\n",
        util::now_utc(),
        util::git_commit(&root)
    );
    for r in &rows {
        match &r.first_error {
            None => summary += &format!("{:<24} {:<10} clean\n", r.kernel, r.tool),
            Some(e) => summary += &format!("{:<24} {:<10} FAILED  {e}\n", r.kernel, r.tool),
        }
    }
    summary += &format!("{failures} finding(s)\n");
    match args.format {
        util::Format::Table => print!("{summary}"),
        util::Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"schema_version": 1, "findings": failures, "rows": rows})
            )?
        ),
        util::Format::Csv => {
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

/// Every single kernel name `lab run --list` knows (groups excluded).
fn kernel_names(lab: &Path) -> Result<Vec<String>> {
    let listing = tools::output(Command::new(lab).args(["run", "--list"]))?;
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

fn run_parallel(
    jobs: Vec<(String, String, Command)>,
    width: usize,
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
                    let outcome = cmd
                        .output()
                        .with_context(|| format!("starting {}", tools::show(&cmd)))
                        .map(|o| {
                            let text = String::from_utf8_lossy(&o.stdout).into_owned()
                                + &String::from_utf8_lossy(&o.stderr);
                            (o.status.code().unwrap_or(-1), text)
                        });
                    done.lock().unwrap().push((i, (tool, label, cmd, outcome)));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
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
