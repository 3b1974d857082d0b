//! A user's claims about an experiment (given as `--predict`): each names a counter and the
//! way it moves, checked against a comparison. (The model's predicted times are
//! `catalog::model`'s; what the chapter expects ncu to measure, `crate::profiles::expected`.)
//!
//! Syntax (`bench --record … --predict`, `compare --predict`): clauses separated by commas,
//! each `COUNTER DIRECTION [AMOUNT]`:
//!
//! - COUNTER: an ncu metric (`dram__bytes_read.sum`, `smsp__inst_executed.sum`), a column of
//!   `ncu-table` / `ncu-transpose` by its key (`inst`, `sh_ld_conflicts_per_block`,
//!   `dram_pct`, …), or `time` (the bench's median);
//! - DIRECTION: `up`, `down` or `same` (B against A);
//! - AMOUNT: `N%`: up or down by at least N %, or the same within ±N %.
//!
//! Without an amount a counter must move by more than [`COUNTER_NOISE_PCT`] (and stay within it
//! for `same`); `time` follows the time verdict (`down` = faster, `up` = slower, `same` =
//! same within noise), and an amount also bounds the change of the medians.
//!
//! Example: `--predict "dram__bytes_read.sum down, smsp__inst_executed.sum down 30%, time down"`.

use super::verdict::Verdict;
use crate::profiles::metrics;
use anyhow::{Result, bail};
use serde::Serialize;

/// How far a counter may move between two profiled launches and still count as unmoved, in %.
pub const COUNTER_NOISE_PCT: f64 = 1.0;

/// The pseudo-counter for the bench's time.
pub const TIME: &str = "time";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Up,
    Down,
    Same,
}

/// One `COUNTER DIRECTION [N%]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Clause {
    pub counter: String,
    pub direction: Direction,
    /// `N%`, when given.
    pub amount_pct: Option<f64>,
}

impl std::fmt::Display for Clause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dir = match self.direction {
            Direction::Up => "up",
            Direction::Down => "down",
            Direction::Same => "same",
        };
        write!(f, "{} {dir}", self.counter)?;
        if let Some(a) = self.amount_pct {
            write!(f, " {a}%")?;
        }
        Ok(())
    }
}

/// Every column key of the chapter's tables (what a clause may name besides an ncu metric).
fn column_keys() -> Vec<&'static str> {
    metrics::reduction_columns()
        .into_iter()
        .chain(metrics::transpose_columns())
        .map(|c| c.key)
        .collect()
}

/// Parses a prediction; an unknown direction, amount or counter is one line naming it.
pub fn parse(spec: &str) -> Result<Vec<Clause>> {
    let usage = "a prediction is `COUNTER up|down|same [N%]`, comma-separated \
                 (e.g. \"dram__bytes_read.sum down, inst down 30%, time down\")";
    let mut clauses = Vec::new();
    for part in spec.split(',').map(str::trim) {
        if part.is_empty() {
            bail!("empty clause in the prediction '{spec}': {usage}");
        }
        let words: Vec<&str> = part.split_whitespace().collect();
        let (counter, direction, amount) = match words[..] {
            [c, d] => (c, d, None),
            [c, d, a] => (c, d, Some(a)),
            _ => bail!("'{part}': {usage}"),
        };
        let direction = match direction {
            "up" => Direction::Up,
            "down" => Direction::Down,
            "same" => Direction::Same,
            other => bail!("'{other}' in '{part}' is not up, down or same: {usage}"),
        };
        let amount_pct = match amount {
            None => None,
            Some(a) => match a.strip_suffix('%').and_then(|n| n.parse::<f64>().ok()) {
                Some(n) if n.is_finite() && n >= 0.0 => Some(n),
                _ => bail!("'{a}' in '{part}' is not an amount like 30%: {usage}"),
            },
        };
        let keys = column_keys();
        if counter != TIME && !counter.contains("__") && !keys.contains(&counter) {
            bail!(
                "'{counter}' is not a counter: name an ncu metric (unit__counter.rollup), `time`, or a table column ({})",
                keys.join(", ")
            );
        }
        clauses.push(Clause {
            counter: counter.to_string(),
            direction,
            amount_pct,
        });
    }
    Ok(clauses)
}

/// The ncu metrics the clauses name directly (they are collected beside the chapter's).
pub fn raw_metrics(clauses: &[Clause]) -> Vec<String> {
    clauses
        .iter()
        .filter(|c| c.counter.contains("__"))
        .map(|c| c.counter.clone())
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Held,
    Missed,
    /// The counter was not measured (no ncu, or not in the report).
    Unmeasured,
}

/// One clause against the measurements.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    pub clause: String,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// (B − A) / A in percent (infinite when A is 0 and B is not).
    pub change_pct: Option<f64>,
    pub outcome: Outcome,
}

/// (B − A) / A in percent; 0 → 0 is no change, 0 → x an infinite one.
pub fn change_pct(a: f64, b: f64) -> f64 {
    if a == 0.0 {
        if b == 0.0 {
            0.0
        } else {
            f64::INFINITY * b.signum()
        }
    } else {
        (b - a) / a.abs() * 100.0
    }
}

/// What the time side offers a clause: A's and B's medians and the verdict.
#[derive(Clone, Copy, Debug)]
pub struct TimeSide {
    pub a_us: f64,
    pub b_us: f64,
    pub verdict: Verdict,
}

/// Checks every clause; `counter(name)` gives A's and B's value of a counter (a column key or an
/// ncu metric), None when it was not measured.
pub fn check(
    clauses: &[Clause],
    time: Option<TimeSide>,
    counter: &dyn Fn(&str) -> Option<(f64, f64)>,
) -> Vec<Check> {
    clauses
        .iter()
        .map(|c| {
            let values = if c.counter == TIME {
                time.map(|t| (t.a_us, t.b_us))
            } else {
                counter(&c.counter)
            };
            let Some((a, b)) = values else {
                return Check {
                    clause: c.to_string(),
                    a: None,
                    b: None,
                    change_pct: None,
                    outcome: Outcome::Unmeasured,
                };
            };
            let change = change_pct(a, b);
            let held = if c.counter == TIME {
                let verdict = time.expect("values came from it").verdict;
                time_holds(c, verdict, change)
            } else {
                moved(c, change, COUNTER_NOISE_PCT)
            };
            Check {
                clause: c.to_string(),
                a: Some(a),
                b: Some(b),
                change_pct: Some(change),
                outcome: if held { Outcome::Held } else { Outcome::Missed },
            }
        })
        .collect()
}

/// A counter clause: moved past the amount (or the noise floor) the stated way.
fn moved(c: &Clause, change: f64, floor: f64) -> bool {
    match (c.direction, c.amount_pct) {
        (Direction::Up, Some(n)) => change >= n,
        (Direction::Up, None) => change > floor,
        (Direction::Down, Some(n)) => change <= -n,
        (Direction::Down, None) => change < -floor,
        (Direction::Same, n) => change.abs() <= n.unwrap_or(floor),
    }
}

/// A time clause: the verdict says the direction; an amount bounds the medians' change too.
fn time_holds(c: &Clause, verdict: Verdict, change: f64) -> bool {
    match c.direction {
        Direction::Up => verdict == Verdict::Slower && c.amount_pct.is_none_or(|n| change >= n),
        Direction::Down => verdict == Verdict::Faster && c.amount_pct.is_none_or(|n| change <= -n),
        Direction::Same => match c.amount_pct {
            Some(n) => change.abs() <= n,
            None => verdict == Verdict::Same,
        },
    }
}

/// `held 2/2: dram__bytes_read.sum -48.1%, time -83.4%`; `missed 1/2: …`; `unmeasured 0/1: …`.
pub fn summary(checks: &[Check]) -> String {
    let held = checks.iter().filter(|c| c.outcome == Outcome::Held).count();
    let word = if checks.iter().any(|c| c.outcome == Outcome::Missed) {
        "missed"
    } else if held > 0 {
        "held"
    } else {
        "unmeasured"
    };
    let parts: Vec<String> = checks
        .iter()
        .map(|c| {
            let what = match c.change_pct {
                Some(x) => fmt_change(x),
                None => "not measured".into(),
            };
            let mark = match c.outcome {
                Outcome::Held => "held",
                Outcome::Missed => "missed",
                Outcome::Unmeasured => "unmeasured",
            };
            format!("{} ({mark}: {what})", c.clause)
        })
        .collect();
    format!("{word} {held}/{}: {}", checks.len(), parts.join(", "))
}

/// `-48.1%`, `+2.0%`, `0.0%`, `from 0`.
pub fn fmt_change(x: f64) -> String {
    if x.is_infinite() {
        "from 0".into()
    } else if x == 0.0 {
        "0.0%".into()
    } else {
        format!("{x:+.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_syntax_names_a_counter_a_direction_and_an_amount() {
        let c = parse("dram__bytes_read.sum down, smsp__inst_executed.sum down 30%, time same 2%")
            .unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(
            c[1],
            Clause {
                counter: "smsp__inst_executed.sum".into(),
                direction: Direction::Down,
                amount_pct: Some(30.0),
            }
        );
        assert_eq!(c[2].to_string(), "time same 2%");
        assert_eq!(parse("inst up").unwrap()[0].direction, Direction::Up);
        assert_eq!(
            raw_metrics(&c),
            ["dram__bytes_read.sum", "smsp__inst_executed.sum"]
        );
    }

    #[test]
    fn a_bad_prediction_is_one_line_naming_the_fault() {
        for (spec, names) in [
            ("inst sideways", "'sideways'"),
            ("inst down thirty", "'thirty'"),
            ("inst down -5%", "'-5%'"),
            ("instructions down", "'instructions' is not a counter"),
            ("inst down,", "empty clause"),
            ("inst", "'inst'"),
            ("inst down 3% extra", "'inst down 3% extra'"),
        ] {
            let e = parse(spec).unwrap_err().to_string();
            assert!(e.contains(names), "{spec}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    fn one(spec: &str, a: f64, b: f64) -> Outcome {
        let c = parse(spec).unwrap();
        check(&c, None, &|_| Some((a, b)))[0].outcome
    }

    #[test]
    fn counters_must_move_past_the_noise_or_the_amount() {
        assert_eq!(one("inst down", 100.0, 98.0), Outcome::Held);
        assert_eq!(one("inst down", 100.0, 99.5), Outcome::Missed, "inside 1 %");
        assert_eq!(one("inst down", 100.0, 120.0), Outcome::Missed);
        assert_eq!(one("inst down 30%", 100.0, 70.0), Outcome::Held);
        assert_eq!(one("inst down 30%", 100.0, 71.0), Outcome::Missed);
        assert_eq!(one("inst up", 100.0, 102.0), Outcome::Held);
        assert_eq!(one("inst same", 100.0, 100.9), Outcome::Held);
        assert_eq!(one("inst same", 100.0, 102.0), Outcome::Missed);
        assert_eq!(one("inst same 5%", 100.0, 104.0), Outcome::Held);
        // From zero: any conflict at all is up; none stays the same.
        assert_eq!(one("sh_ld_conflicts up", 0.0, 3.0), Outcome::Held);
        assert_eq!(one("sh_ld_conflicts same", 0.0, 0.0), Outcome::Held);
        let c = parse("dram__bytes_read.sum down").unwrap();
        let r = check(&c, None, &|_| None);
        assert_eq!(r[0].outcome, Outcome::Unmeasured);
    }

    #[test]
    fn time_follows_the_verdict() {
        let t = |verdict, b_us| {
            Some(TimeSide {
                a_us: 100.0,
                b_us,
                verdict,
            })
        };
        let c = parse("time down, time down 10%, time same, time up").unwrap();
        let r = check(&c, t(Verdict::Faster, 95.0), &|_| None);
        let got: Vec<Outcome> = r.iter().map(|x| x.outcome).collect();
        use Outcome::*;
        assert_eq!(got, [Held, Missed, Missed, Missed]);
        let r = check(&c, t(Verdict::Same, 99.0), &|_| None);
        assert_eq!(r[2].outcome, Held);
        assert_eq!(r[0].outcome, Missed, "a drop inside the noise is not down");
        let r = check(&c, None, &|_| Some((1.0, 2.0)));
        assert_eq!(r[0].outcome, Unmeasured, "time never comes from a counter");
    }

    #[test]
    fn the_summary_counts_and_lists() {
        let c = parse("inst down, dram__bytes_read.sum down").unwrap();
        let r = check(&c, None, &|name| (name == "inst").then_some((200.0, 100.0)));
        assert_eq!(
            summary(&r),
            "held 1/2: inst down (held: -50.0%), dram__bytes_read.sum down (unmeasured: not measured)"
        );
        let r = check(&c, None, &|_| Some((100.0, 100.0)));
        assert!(summary(&r).starts_with("missed 0/2"), "{}", summary(&r));
        let r = check(&c, None, &|_| None);
        assert!(summary(&r).starts_with("unmeasured 0/2"));
        assert_eq!(fmt_change(f64::INFINITY), "from 0");
    }
}
