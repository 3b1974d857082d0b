//! What the chapter expects ncu to measure, and the check of each expectation against what it
//! did measure. (The model's predicted times are `catalog::model`'s; a user's claims about
//! counters, `compare --predict`, are `crate::compare::claims`'.)
//!
//! Each [`Expectation`] names a kernel, a table column, what is expected (a number with a
//! stated tolerance, or a relation to another kernel of the same backend), where it comes from,
//! and where a deviation has a known cause, that cause in one line. An expectation that does
//! not hold is a finding, not an error: `ncu-table` prints it, flagged, and carries on.
//!
//! - [`reductions`]: the chapter's section 6, per block of 256 threads.
//! - [`transposes`]: the chapter's section 7, per warp-wide request.

mod reductions;
mod transposes;

pub use reductions::reductions;
pub use transposes::transposes;

use super::metrics::{Column, Profiled};
use profiler::fmt;
use profiler::ncu::Counters;

/// How far a measurement may sit from an expected number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tol {
    Abs(f64),
    /// A fraction of the expected value.
    Rel(f64),
}

/// What an expectation asks of the measured value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Expect {
    /// Within the tolerance of a number.
    Near(f64, Tol),
    /// At least this value.
    AtLeast(f64),
    /// Within `rel` of the same column of `kernel` (same backend).
    SameAs { kernel: &'static str, rel: f64 },
    /// Greater than `kernel`'s value (same backend).
    Above { kernel: &'static str },
    /// At most `factor` × `kernel`'s value (same backend).
    Below { kernel: &'static str, factor: f64 },
    /// The smallest value of this column among the table's kernels (same backend).
    Lowest,
    /// The largest stall reason (column `top_stall`).
    DominantStall(&'static str),
}

/// One expectation about one kernel.
#[derive(Clone, Debug)]
pub struct Expectation {
    /// Kernel name as in the tables: `reduce_v2`.
    pub kernel: &'static str,
    /// A column key (`sh_ld_req_per_block`), or `top_stall`.
    pub column: &'static str,
    pub expect: Expect,
    /// Where the number comes from: `chapter §6 (v2)`, or `derived: …` for ones worked out
    /// from this project's kernel source.
    pub source: &'static str,
    /// A known reason for a deviation, printed when the check does not hold.
    pub if_off: Option<&'static str>,
}

/// Did the expectation hold?
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Held,
    Off,
    /// The value (or the kernel it is compared with) was not measured.
    Missing,
}

/// One expectation checked against one row.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Check {
    pub label: String,
    pub kernel: String,
    pub backend: String,
    pub column: String,
    /// The column's header, for printing.
    pub header: String,
    pub measured: Option<f64>,
    /// Measured value as printed (stall reasons are text).
    pub measured_text: String,
    /// What was expected, with its tolerance: `94 ±2`, `= reduce_v3 ±5%`.
    pub expected: String,
    pub status: Status,
    pub source: String,
    /// Known reason, when the check did not hold and one is known.
    pub reason: Option<String>,
}

impl Expect {
    /// The expectation in words, with its tolerance.
    pub fn describe(&self) -> String {
        match *self {
            Expect::Near(v, Tol::Abs(t)) => format!("{} ±{}", fmt::value(v), fmt::value(t)),
            Expect::Near(v, Tol::Rel(r)) => format!("{} ±{:.0}%", fmt::value(v), r * 100.0),
            Expect::AtLeast(v) => format!("≥ {}", fmt::value(v)),
            Expect::SameAs { kernel, rel } => format!("= {kernel} ±{:.0}%", rel * 100.0),
            Expect::Above { kernel } => format!("> {kernel}"),
            Expect::Below {
                kernel,
                factor: 1.0,
            } => format!("< {kernel}"),
            Expect::Below { kernel, factor } => format!("≤ {factor}× {kernel}"),
            Expect::Lowest => "lowest".to_string(),
            Expect::DominantStall(r) => format!("top stall {r}"),
        }
    }
}

/// Checks every expectation against every row of its kernel (each backend separately).
pub fn evaluate(rows: &[Profiled], columns: &[Column], preds: &[Expectation]) -> Vec<Check> {
    let value = |row: &Profiled, key: &str| {
        columns
            .iter()
            .find(|c| c.key == key)
            .and_then(|c| (c.get)(row))
    };
    let header = |key: &str| {
        if key == "top_stall" {
            "top stall".to_string()
        } else {
            columns
                .iter()
                .find(|c| c.key == key)
                .map_or(key.to_string(), |c| c.header.to_string())
        }
    };
    let mut out = Vec::new();
    for pred in preds {
        for row in rows.iter().filter(|r| r.kernel == pred.kernel) {
            let other = |k: &str| {
                rows.iter()
                    .find(|r| r.kernel == k && r.backend == row.backend)
                    .and_then(|r| value(r, pred.column))
            };
            let (measured, measured_text, held) = if let Expect::DominantStall(want) = pred.expect {
                match row.dominant_stall() {
                    Some((r, _, share)) => (
                        None,
                        format!("{r} ({:.0}%)", share * 100.0),
                        Some(r == want),
                    ),
                    None => (None, "n/a".into(), None),
                }
            } else {
                let m = value(row, pred.column);
                let held = m.and_then(|m| match pred.expect {
                    Expect::Near(v, Tol::Abs(t)) => Some((m - v).abs() <= t),
                    Expect::Near(v, Tol::Rel(r)) => Some((m - v).abs() <= r * v.abs()),
                    Expect::AtLeast(v) => Some(m >= v),
                    Expect::SameAs { kernel, rel } => {
                        other(kernel).map(|o| o != 0.0 && (m / o - 1.0).abs() <= rel)
                    }
                    Expect::Above { kernel } => other(kernel).map(|o| m > o),
                    Expect::Below { kernel, factor } => other(kernel).map(|o| m <= factor * o),
                    Expect::Lowest => {
                        let peers: Vec<f64> = rows
                            .iter()
                            .filter(|r| r.backend == row.backend && preds_mention(preds, &r.kernel))
                            .filter_map(|r| value(r, pred.column))
                            .collect();
                        (peers.len() > 1).then(|| peers.iter().all(|&p| m <= p))
                    }
                    Expect::DominantStall(_) => unreachable!("handled above"),
                });
                (m, m.map_or("n/a".into(), fmt::value), held)
            };
            let status = match held {
                Some(true) => Status::Held,
                Some(false) => Status::Off,
                None => Status::Missing,
            };
            out.push(Check {
                label: row.label.clone(),
                kernel: row.kernel.clone(),
                backend: row.backend.clone(),
                column: pred.column.to_string(),
                header: header(pred.column),
                measured,
                measured_text,
                expected: pred.expect.describe(),
                status,
                source: pred.source.to_string(),
                reason: (status == Status::Off)
                    .then_some(pred.if_off)
                    .flatten()
                    .map(str::to_string),
            });
        }
    }
    out
}

/// Kernels the expectations talk about (the peers of a `Lowest` comparison).
fn preds_mention(preds: &[Expectation], kernel: &str) -> bool {
    preds.iter().any(|p| p.kernel == kernel)
}

/// `held 21, off 3, not measured 0`.
pub fn tally(checks: &[Check]) -> (usize, usize, usize) {
    let n = |s| checks.iter().filter(|c| c.status == s).count();
    (n(Status::Held), n(Status::Off), n(Status::Missing))
}

#[cfg(test)]
mod tests {
    use super::reductions::level_requests;
    use super::*;

    #[test]
    fn v5_requests_are_its_three_shared_levels() {
        let v5 = reductions()
            .into_iter()
            .find(|p| p.kernel == "reduce_v5" && p.column == "sh_ld_req_per_block")
            .unwrap();
        assert_eq!(v5.expect, Expect::Near(14.0, Tol::Abs(2.0)));
        // v3's whole tree is the chapter's 24 by the same count.
        let tree: f64 = [128, 64, 32, 16, 8, 4, 2, 1]
            .map(level_requests)
            .iter()
            .sum();
        assert_eq!(tree, 24.0);
    }

    #[test]
    fn descriptions_state_the_tolerance() {
        assert_eq!(Expect::Near(94.0, Tol::Abs(2.0)).describe(), "94 ±2");
        assert_eq!(Expect::Near(70.0, Tol::Rel(0.15)).describe(), "70 ±15%");
        assert_eq!(
            Expect::Below {
                kernel: "reduce_v3",
                factor: 0.5
            }
            .describe(),
            "≤ 0.5× reduce_v3"
        );
    }
}
