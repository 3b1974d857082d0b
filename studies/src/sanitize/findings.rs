//! Reading compute-sanitizer's output: the first finding of each kernel, and the counts of its
//! closing summary lines.

use catalog::Runner;

/// The first error compute-sanitizer reported for one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kernel: String,
    pub message: String,
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

/// The kernel a finding is in: its name, or `cub` for any of CUB's kernels.
fn kernel_of(at: &str) -> String {
    let name = at.split(['+', ' ', '(']).next().unwrap_or(at);
    let cub = Runner::Cub.name();
    if at.contains(&format!("{cub}::")) || name.contains(cub) {
        cub.into()
    } else {
        name.to_string()
    }
}

/// Errors compute-sanitizer reports from the host: failed API calls (after a stopped kernel,
/// every later call fails) and leaks.
pub fn is_host_side(message: &str) -> bool {
    message.starts_with("Program hit") || message.starts_with("Leaked")
}

/// A finding's message without its location (`Error: Race reported between Write access at
/// <function>+0x60 in mod.rs:2269` reads `Error: Race reported between Write access`).
pub fn headline(message: &str) -> &str {
    message.split(" at ").next().unwrap_or(message)
}

/// The last line of a run's output that is not blank.
pub fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}
