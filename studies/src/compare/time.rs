//! The time side of the report: per pair, both distributions (pooled over the rounds), each
//! round's verdict, and the verdict that stands.

use super::pairs::Pairing;
use super::verdict::{Dist, Judged, Verdict, judge, settled};
use serde::Serialize;

/// One pair's timing.
#[derive(Clone, Debug, Serialize)]
pub struct TimeRow {
    pub label: String,
    /// A's samples over every round.
    pub a: Dist,
    pub b: Dist,
    /// (median B − median A) / median A over every round's samples, in percent.
    pub delta_pct: f64,
    /// median A / median B: above 1 is B faster.
    pub speedup: f64,
    /// The verdict that stands: two rounds in a row agreeing (live), or the one comparison of
    /// two results files.
    pub verdict: Verdict,
    /// Each round's comparison, in order.
    pub rounds: Vec<Judged>,
    /// The change the lab's performance model predicts, in percent ([`super::model`]); None
    /// when a side's kernel has no counts or its results no roofs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_delta_pct: Option<f64>,
}

/// The time rows of one or more rounds of pairings, in the first round's order. `live`: the
/// rounds were repeated runs, so a verdict must hold twice in a row to stand.
pub fn tabulate(rounds: &[Pairing], live: bool) -> Vec<TimeRow> {
    let Some(first) = rounds.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in &first.pairs {
        let mut a_runs = Vec::new();
        let mut b_runs = Vec::new();
        let mut judged = Vec::new();
        for round in rounds {
            let Some(q) = round.pairs.iter().find(|q| q.label == p.label) else {
                continue;
            };
            let (Some(a), Some(b)) = (Dist::from_row(&q.a), Dist::from_row(&q.b)) else {
                continue;
            };
            judged.push(judge(&a, &b));
            a_runs.push(a);
            b_runs.push(b);
        }
        let (Some(last_a), Some(last_b)) = (a_runs.last(), b_runs.last()) else {
            continue;
        };
        let pool = |runs: &[Dist], last: &Dist| {
            Dist::pooled(&runs.iter().collect::<Vec<_>>()).unwrap_or_else(|| last.clone())
        };
        let (a, b) = (pool(&a_runs, last_a), pool(&b_runs, last_b));
        let verdicts: Vec<Verdict> = judged.iter().map(|j| j.verdict).collect();
        let verdict = if live {
            settled(&verdicts)
        } else {
            verdicts[verdicts.len() - 1]
        };
        out.push(TimeRow {
            label: p.label.clone(),
            delta_pct: (b.median_us - a.median_us) / a.median_us * 100.0,
            speedup: a.median_us / b.median_us,
            a,
            b,
            verdict,
            rounds: judged,
            predicted_delta_pct: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::pairs::{Axis, Filter, pair};
    use catalog::records::{Row, Status};
    use catalog::{Backend, Dtype, Family};

    fn row(kernel: &str, samples: &[f64]) -> Row {
        let mut r = Row::new(
            Family::Reduce,
            kernel,
            Backend::Llvm,
            Dtype::F32,
            1,
            "2^28".into(),
            4,
        );
        let d = Dist::of(samples.to_vec()).unwrap();
        r.status = Status::Ok;
        r.reps = d.n as u32;
        (r.median_us, r.min_us, r.max_us) = (Some(d.median_us), Some(d.min_us), Some(d.max_us));
        r.samples_us = d.samples_us;
        r
    }

    fn round(a: &[f64], b: &[f64]) -> Pairing {
        let axis = Axis::Kernels {
            a: "x".into(),
            b: "y".into(),
        };
        pair(&axis, &Filter::default(), &[row("x", a)], &[row("y", b)])
    }

    #[test]
    fn rounds_pool_their_samples_and_settle_on_two_alike() {
        let slow = [10.0, 10.1, 10.2, 10.3, 10.4];
        let fast = [5.0, 5.1, 5.2, 5.3, 5.4];
        let rounds = [
            round(&slow, &fast),
            round(&slow, &slow),
            round(&slow, &fast),
            round(&slow, &fast),
        ];
        let t = tabulate(&rounds, true);
        assert_eq!(t.len(), 1);
        let v: Vec<Verdict> = t[0].rounds.iter().map(|j| j.verdict).collect();
        assert_eq!(
            v,
            [
                Verdict::Faster,
                Verdict::Same,
                Verdict::Faster,
                Verdict::Faster
            ]
        );
        assert_eq!(t[0].verdict, Verdict::Faster);
        assert_eq!((t[0].a.n, t[0].b.n), (20, 20));
        assert_eq!(t[0].a.median_us, 10.2);
        // B: 15 fast samples and 5 slow: the median among the fast ones.
        assert_eq!(t[0].b.median_us, 5.3);
        assert!((t[0].speedup - 10.2 / 5.3).abs() < 1e-12);
        // The last two rounds disagreeing: unsettled.
        let t = tabulate(&rounds[..2], true);
        assert_eq!(t[0].verdict, Verdict::Unsettled);
        // One comparison of two files stands as it is.
        let t = tabulate(&rounds[..1], false);
        assert_eq!(t[0].verdict, Verdict::Faster);
        assert!(tabulate(&[], true).is_empty());
    }
}
