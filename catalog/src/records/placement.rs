//! Where the reductions' result word was, and the per-slot times that chose it: what
//! `lab bench` records in its results file (`config.placement`) and `lab run --placement` and
//! `lab placement` print. The slots and their timing are `lab`'s (`host::placement`); this is
//! the record and its arithmetic, with no GPU.

use serde::{Deserialize, Serialize};

/// Two slots are in different groups when their sorted times are separated by a gap larger
/// than this share of the fastest (the H200's groups are ~5 % apart; event jitter at 120 µs
/// is well under 0.5 %).
pub const GROUP_GAP: f64 = 0.015;

/// Slots whose times lie together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub slots: Vec<usize>,
    pub min_us: f64,
    pub max_us: f64,
}

/// Per-slot median times of one kernel, split into groups.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlotTimes {
    /// `reduce_v1 [llvm] f32 2^24`.
    pub label: String,
    /// Median µs with the result word in slot k.
    pub us: Vec<f64>,
    /// The fastest group, then the slower one if the times split.
    pub fast: Group,
    pub slow: Option<Group>,
}

impl SlotTimes {
    pub fn new(label: String, us: Vec<f64>) -> SlotTimes {
        let (fast, slow) = split_groups(&us);
        SlotTimes {
            label,
            us,
            fast,
            slow,
        }
    }

    /// Slow group's median over the fast group's, 1 when the times do not split.
    pub fn slow_over_fast(&self) -> f64 {
        let med = |g: &Group| median(g.slots.iter().map(|&k| self.us[k]).collect());
        self.slow.as_ref().map_or(1.0, |s| med(s) / med(&self.fast))
    }

    /// `fast 33 slots 121.2–121.9 µs, slow 31 slots 127.0–128.8 µs (1.048×)`.
    pub fn summary(&self) -> String {
        let g = |name: &str, g: &Group| {
            format!(
                "{name} {} slots {:.1}–{:.1} µs",
                g.slots.len(),
                g.min_us,
                g.max_us
            )
        };
        match &self.slow {
            Some(s) => format!(
                "{}, {} ({:.3}×)",
                g("fast", &self.fast),
                g("slow", s),
                self.slow_over_fast()
            ),
            None => format!("{} (one group)", g("all", &self.fast)),
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Splits per-slot times at the largest gap between consecutive sorted values when it exceeds
/// [`GROUP_GAP`] of the fastest time; otherwise all slots form one group.
pub fn split_groups(us: &[f64]) -> (Group, Option<Group>) {
    let mut order: Vec<usize> = (0..us.len()).collect();
    order.sort_by(|&a, &b| us[a].total_cmp(&us[b]));
    let group = |slots: &[usize]| {
        let mut slots = slots.to_vec();
        slots.sort_unstable();
        Group {
            min_us: slots.iter().map(|&k| us[k]).fold(f64::INFINITY, f64::min),
            max_us: slots
                .iter()
                .map(|&k| us[k])
                .fold(f64::NEG_INFINITY, f64::max),
            slots,
        }
    };
    let cut = order
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i + 1, us[w[1]] - us[w[0]]))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|&(_, gap)| gap > GROUP_GAP * us[order[0]]);
    match cut {
        Some((i, _)) => (group(&order[..i]), Some(group(&order[i..]))),
        None => (group(&order), None),
    }
}

/// Which of the candidate words the reductions added into, and how it was chosen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    pub slot: usize,
    pub offset_bytes: usize,
    pub stride_bytes: usize,
    pub slots: usize,
    /// The times that chose the slot (None: slot 0, not calibrated).
    pub calibration: Option<SlotTimes>,
}

impl Placement {
    /// One line for report headers: which slot, and why.
    pub fn describe(&self) -> String {
        let at = format!(
            "slot {} of {} ({} B into a pool of words {} B apart)",
            self.slot, self.slots, self.offset_bytes, self.stride_bytes
        );
        match &self.calibration {
            Some(t) => format!(
                "result word: {at}, {:.1} µs, {} for same-address atomics by {}: {}",
                t.us[self.slot],
                if t.fast.slots.contains(&self.slot) {
                    "in the fast group"
                } else {
                    "in the slow group"
                },
                t.label,
                t.summary()
            ),
            None => format!("result word: {at}, not calibrated"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_groups_split_at_the_gap() {
        // Half the slots near 1917 µs, half near 2012 µs (v1 at 2^28 on the H200).
        let us: Vec<f64> = (0..64)
            .map(|k| {
                if k % 3 == 0 {
                    2012.0 + k as f64 * 0.5
                } else {
                    1917.0 + k as f64 * 0.1
                }
            })
            .collect();
        let (fast, slow) = split_groups(&us);
        let slow = slow.expect("two groups");
        assert!(fast.slots.iter().all(|k| k % 3 != 0));
        assert!(slow.slots.iter().all(|k| k % 3 == 0));
        assert_eq!(fast.slots.len() + slow.slots.len(), 64);
        assert!(fast.max_us < slow.min_us);
        let t = SlotTimes::new("t".into(), us);
        assert!(
            (t.slow_over_fast() - 1.05).abs() < 0.01,
            "{}",
            t.slow_over_fast()
        );
        assert!(t.summary().contains("fast 42 slots"), "{}", t.summary());
        let p = Placement {
            slot: 1,
            offset_bytes: 100,
            stride_bytes: 100,
            slots: 64,
            calibration: Some(t),
        };
        assert!(
            p.describe()
                .starts_with("result word: slot 1 of 64 (100 B into a pool of words 100 B apart), 1917.1 µs, in the fast group for same-address atomics by t: fast 42 slots"),
            "{}",
            p.describe()
        );
    }

    #[test]
    fn jitter_alone_is_one_group() {
        let us: Vec<f64> = (0..64).map(|k| 120.0 + (k % 7) as f64 * 0.05).collect();
        let (all, slow) = split_groups(&us);
        assert!(slow.is_none());
        assert_eq!(all.slots.len(), 64);
        let t = SlotTimes::new("t".into(), us);
        assert_eq!(t.slow_over_fast(), 1.0);
        assert!(t.summary().contains("one group"), "{}", t.summary());
    }
}
