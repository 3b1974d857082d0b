//! The time verdict: is B faster than A, slower, or the same within noise?
//!
//! One rule, in the style of nvbench's compare: the two medians are the same within noise when
//! their difference is no larger than the narrower of the two runs' ranges (max − min of the
//! timed samples, the spread the bench reports as `spread_pct`); otherwise the sign of the
//! difference decides. A run's range is what one process measured of the same launch: a
//! difference inside it is indistinguishable from launch-to-launch noise. It needs only the
//! median, min and max, so results files written before the samples were kept compare too.

use catalog::records::{Row, Status};
use serde::Serialize;

/// Fewest timed samples a side needs for a verdict: the range of fewer says little.
pub const MIN_SAMPLES: usize = 5;

/// The rule, as every output states it.
pub const RULE: &str = "same within noise when |median B - median A| <= the narrower of the \
    two runs' ranges (max - min of the timed samples); otherwise B is faster or slower; no \
    verdict with fewer than 5 samples a side";

/// One run's timed samples of one row, in µs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dist {
    /// Samples timed.
    pub n: usize,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    /// Every sample, fastest first; empty when the source kept only the summary.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub samples_us: Vec<f64>,
}

impl Dist {
    /// The distribution of `samples` (µs); None when there are none.
    pub fn of(mut samples: Vec<f64>) -> Option<Dist> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
            return None;
        }
        samples.sort_by(f64::total_cmp);
        let n = samples.len();
        let median = if n % 2 == 1 {
            samples[n / 2]
        } else {
            (samples[n / 2 - 1] + samples[n / 2]) / 2.0
        };
        Some(Dist {
            n,
            median_us: median,
            min_us: samples[0],
            max_us: samples[n - 1],
            samples_us: samples,
        })
    }

    /// A verified row's timing: its samples when the file kept them, else its summary.
    pub fn from_row(r: &Row) -> Option<Dist> {
        if r.status != Status::Ok {
            return None;
        }
        if !r.samples_us.is_empty() {
            return Dist::of(r.samples_us.clone());
        }
        Some(Dist {
            n: r.reps as usize,
            median_us: r.median_us?,
            min_us: r.min_us?,
            max_us: r.max_us?,
            samples_us: Vec::new(),
        })
    }

    /// Several runs' samples as one distribution (None when a run kept only its summary).
    pub fn pooled(runs: &[&Dist]) -> Option<Dist> {
        if runs.iter().any(|d| d.samples_us.is_empty()) {
            return None;
        }
        Dist::of(runs.iter().flat_map(|d| d.samples_us.clone()).collect())
    }

    /// max − min, µs.
    pub fn range_us(&self) -> f64 {
        self.max_us - self.min_us
    }

    /// (max − min) / median, in percent: the bench's `spread_pct`.
    pub fn spread_pct(&self) -> f64 {
        self.range_us() / self.median_us * 100.0
    }
}

/// What the rule says about B against A.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// B's median is below A's by more than the noise.
    Faster,
    /// B's median is above A's by more than the noise.
    Slower,
    /// The difference is inside both runs' ranges.
    Same,
    /// Live rounds that never agreed twice in a row before the time limit.
    Unsettled,
    /// Too few samples on a side.
    NoVerdict,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same",
            Verdict::Unsettled => "unsettled",
            Verdict::NoVerdict => "no verdict",
        }
    }
}

/// The rule applied to one A and one B.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Judged {
    pub verdict: Verdict,
    /// (median B − median A) / median A, in percent: negative is faster.
    pub delta_pct: f64,
    /// The narrower range, as a percentage of A's median: how far the medians may differ and
    /// still read "same".
    pub noise_pct: f64,
}

/// B against A by [`RULE`].
pub fn judge(a: &Dist, b: &Dist) -> Judged {
    let diff = b.median_us - a.median_us;
    let noise = a.range_us().min(b.range_us());
    let verdict = if a.n < MIN_SAMPLES || b.n < MIN_SAMPLES {
        Verdict::NoVerdict
    } else if diff.abs() <= noise {
        Verdict::Same
    } else if diff < 0.0 {
        Verdict::Faster
    } else {
        Verdict::Slower
    };
    Judged {
        verdict,
        delta_pct: diff / a.median_us * 100.0,
        noise_pct: noise / a.median_us * 100.0,
    }
}

/// The verdict of a series of rounds: the last two rounds' when they agree, else unsettled
/// (one round alone is unsettled: nothing confirmed it).
pub fn settled(rounds: &[Verdict]) -> Verdict {
    match rounds {
        [.., x, y] if x == y => *y,
        _ => Verdict::Unsettled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::{Backend, Dtype};

    fn d(s: &[f64]) -> Dist {
        Dist::of(s.to_vec()).unwrap()
    }

    /// 20 samples around `median` with a total range of `range`.
    fn spread(median: f64, range: f64) -> Dist {
        d(&(0..20)
            .map(|i| median - range / 2.0 + range * i as f64 / 19.0)
            .collect::<Vec<_>>())
    }

    #[test]
    fn a_distribution_is_sorted_and_summarised() {
        let x = d(&[3.0, 1.0, 2.0, 10.0]);
        assert_eq!(x.samples_us, [1.0, 2.0, 3.0, 10.0]);
        assert_eq!((x.n, x.median_us, x.min_us, x.max_us), (4, 2.5, 1.0, 10.0));
        assert_eq!(x.range_us(), 9.0);
        assert!((x.spread_pct() - 360.0).abs() < 1e-9);
        assert_eq!(Dist::of(vec![]), None);
        assert_eq!(Dist::of(vec![1.0, f64::NAN]), None);
        let p = Dist::pooled(&[&d(&[1.0, 3.0]), &d(&[2.0])]).unwrap();
        assert_eq!((p.n, p.median_us), (3, 2.0));
    }

    #[test]
    fn equal_runs_are_the_same() {
        let a = spread(100.0, 2.0);
        let j = judge(&a, &a.clone());
        assert_eq!(j.verdict, Verdict::Same);
        assert_eq!(j.delta_pct, 0.0);
        // Identical samples with no range at all: still the same, not a difference of zero.
        let flat = d(&[5.0; 8]);
        assert_eq!(judge(&flat, &flat.clone()).verdict, Verdict::Same);
    }

    #[test]
    fn a_clear_difference_has_a_direction() {
        let a = spread(2000.0, 20.0);
        let b = spread(320.0, 5.0);
        let j = judge(&a, &b);
        assert_eq!(j.verdict, Verdict::Faster);
        assert!((j.delta_pct + 84.0).abs() < 1e-9, "{j:?}");
        assert_eq!(judge(&b, &a).verdict, Verdict::Slower);
    }

    #[test]
    fn overlapping_runs_use_the_narrower_range() {
        // Medians 1 % apart; A's range 3 %, B's 0.5 %: outside B's range, so B is slower
        // although the difference sits inside A's.
        let a = spread(100.0, 3.0);
        let b = spread(101.0, 0.5);
        let j = judge(&a, &b);
        assert_eq!(j.verdict, Verdict::Slower, "{j:?}");
        assert!((j.noise_pct - 0.5).abs() < 1e-9);
        // Both ranges 3 %: the same 1 % reads as noise.
        assert_eq!(judge(&a, &spread(101.0, 3.0)).verdict, Verdict::Same);
        // Right at the edge counts as the same.
        assert_eq!(judge(&a, &spread(103.0, 3.0)).verdict, Verdict::Same);
        assert_eq!(judge(&a, &spread(103.1, 3.0)).verdict, Verdict::Slower);
    }

    #[test]
    fn too_few_samples_give_no_verdict() {
        let one = d(&[10.0]);
        let many = spread(20.0, 1.0);
        assert_eq!(judge(&one, &many).verdict, Verdict::NoVerdict);
        assert_eq!(judge(&many, &one).verdict, Verdict::NoVerdict);
        let four = d(&[1.0, 1.0, 1.0, 1.0]);
        assert_eq!(judge(&four, &many).verdict, Verdict::NoVerdict);
        assert_eq!(judge(&d(&[1.0; 5]), &many).verdict, Verdict::Slower);
    }

    #[test]
    fn a_row_gives_its_samples_or_its_summary() {
        let mut r = Row::new(
            catalog::Family::Reduce,
            "k",
            Backend::Llvm,
            Dtype::F32,
            4,
            "4".into(),
            16,
        );
        assert_eq!(Dist::from_row(&r), None, "a skipped row has no timing");
        r.status = Status::Ok;
        r.reps = 20;
        (r.median_us, r.min_us, r.max_us) = (Some(2.0), Some(1.0), Some(4.0));
        let s = Dist::from_row(&r).unwrap();
        assert_eq!((s.n, s.median_us, s.range_us()), (20, 2.0, 3.0));
        assert!(s.samples_us.is_empty());
        r.samples_us = vec![1.0, 2.0, 2.0, 4.0, 3.0];
        assert_eq!(
            Dist::from_row(&r).unwrap().samples_us,
            [1.0, 2.0, 2.0, 3.0, 4.0]
        );
    }

    #[test]
    fn rounds_settle_when_two_in_a_row_agree() {
        use Verdict::*;
        assert_eq!(settled(&[Faster]), Unsettled);
        assert_eq!(settled(&[Faster, Faster]), Faster);
        assert_eq!(settled(&[Faster, Same]), Unsettled);
        assert_eq!(settled(&[Faster, Same, Same]), Same);
        assert_eq!(settled(&[]), Unsettled);
    }
}
