//! The canaries: one kernel per tool that is wrong on purpose (`gpu-kernels/src/canary.rs`,
//! launched by the hidden `lab canary <tool>`). A tool, or a reading of its output, that misses
//! a planted fault would report every kernel clean too, so each canary must be flagged before
//! any kernel is checked.

use super::findings::{headline, is_host_side, last_line, parse_findings, parse_summary};
use super::sanitizer_cmd;
use crate::process::{Outcome, TimedOut, run_parallel};
use anyhow::{Result, bail};
use std::path::Path;
use std::time::Duration;

/// A kernel that is wrong on purpose, one per tool.
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

/// How long one canary may run under its tool (each takes seconds). The synccheck canary's
/// fault is undefined behaviour that could hang its warp; a canary that takes longer fails
/// the command instead of stalling it.
pub const CANARY_LIMIT: Duration = Duration::from_secs(60);

/// How a canary came back, for the report.
#[derive(serde::Serialize)]
pub struct CanaryCheck {
    pub tool: &'static str,
    pub kernel: &'static str,
    pub flagged: bool,
    pub errors: u64,
    pub warnings: u64,
    /// The report line: `canary memcheck: flagged (1 error) — expected (…)`, or why it failed.
    pub line: String,
}

/// Runs each selected tool's canary under that tool, writes their output to `canaries.log`, and
/// fails, naming each canary, unless every one was flagged where it was planted.
pub fn run_canaries(
    sanitizer: &Path,
    lab: &Path,
    selected: &[String],
    out: &Path,
) -> Result<Vec<CanaryCheck>> {
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
    files::write_atomic(&log_path, log.as_bytes())?;
    check_canaries(&rows, &log_path)?;
    Ok(rows)
}

/// The one line that fails the command when any canary was not flagged.
pub fn check_canaries(rows: &[CanaryCheck], log: &Path) -> Result<()> {
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
pub fn judge_canary(c: &Canary, outcome: &Outcome) -> CanaryCheck {
    let mut row = CanaryCheck {
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

fn plural(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
