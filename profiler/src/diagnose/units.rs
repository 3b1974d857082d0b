//! The units a kernel can keep busy, and what removing work from some of them buys.
//!
//! A kernel that keeps one unit near its peak runs at that unit's pace: its time is the
//! busiest unit's work over that unit's rate. Removing a share of the work some units do
//! (the bytes beyond the minimum at a memory level, the idle lanes of a pipe's instructions)
//! speeds it up until the next busiest unit binds; that is [`saving`], the cost every
//! throughput-model rule reports. A kernel that keeps no unit near its peak is paced by its
//! waits instead: the rules then weigh the stall their fault causes (the latency model).

use crate::fmt;
use crate::ncu::metrics::{self as m, Counters};

/// The busiest unit must be at least this busy (%) for the kernel to be paced by it.
pub const BOUND_PCT: f64 = 60.0;

/// What a unit is: a level of the memory hierarchy, a pipe of the SM, or instruction issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Dram,
    L2,
    /// The L1 and shared memory (one data path: global, local and shared accesses).
    L1,
    /// An SM pipe, by its metric ([`m::PIPES`]).
    Pipe(&'static str),
    /// The schedulers' issue slots: one instruction per cycle each, whatever the pipe.
    Issue,
    /// The chain of atomics on the busiest L2 slice, where the atomics pile onto few slices:
    /// busy for the share of the kernel the chain fills ([`super::chain`]).
    Atomics,
}

impl Unit {
    /// Every unit, memory first.
    pub fn all() -> impl Iterator<Item = Unit> {
        [Unit::Dram, Unit::L2, Unit::L1, Unit::Issue, Unit::Atomics]
            .into_iter()
            .chain(m::PIPES.iter().map(|(_, metric)| Unit::Pipe(metric)))
    }

    /// `DRAM`, `L2`, `L1/shared`, `issue`, `FMA pipe`.
    pub fn name(self) -> String {
        match self {
            Unit::Dram => "DRAM".into(),
            Unit::L2 => "L2".into(),
            Unit::L1 => "L1/shared".into(),
            Unit::Issue => "issue".into(),
            Unit::Atomics => "atomic chain".into(),
            Unit::Pipe(metric) => {
                let name = m::PIPES
                    .iter()
                    .find(|(_, p)| *p == metric)
                    .map_or("?", |(n, _)| n);
                format!("{} pipe", name.split(' ').next().unwrap_or(name))
            }
        }
    }

    pub fn is_memory(self) -> bool {
        matches!(self, Unit::Dram | Unit::L2 | Unit::L1)
    }

    /// Its busy share (%), if measured.
    pub fn busy(self, c: &dyn Counters) -> Option<f64> {
        match self {
            Unit::Dram => c.m(m::DRAM_PCT),
            Unit::L2 => c.m(m::L2_PCT),
            Unit::L1 => c.m(m::L1_PCT),
            Unit::Issue => c.m(m::ISSUE_ACTIVE),
            Unit::Atomics => super::chain::chain(c).map(|a| a.share * 100.0),
            Unit::Pipe(metric) => c.m(metric),
        }
    }
}

/// Every measured unit with its busy share (%), busiest first.
pub fn busy(c: &dyn Counters) -> Vec<(Unit, f64)> {
    let mut v: Vec<(Unit, f64)> = Unit::all().filter_map(|u| Some((u, u.busy(c)?))).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v
}

/// The busiest unit and its busy share (%).
pub fn binder(c: &dyn Counters) -> Option<(Unit, f64)> {
    busy(c).into_iter().next()
}

/// Whether the kernel is paced by a unit (the busiest is at least [`BOUND_PCT`] busy).
pub fn paced(c: &dyn Counters) -> bool {
    binder(c).is_some_and(|(_, b)| b >= BOUND_PCT)
}

/// The share of the kernel's time saved (0–1) if each unit's work were scaled by `scale(unit)`
/// (1 = unchanged): the busiest unit's busy share after, over before. None when no unit paces
/// the kernel (the latency model applies instead).
pub fn saving(c: &dyn Counters, scale: impl Fn(Unit) -> f64) -> Option<f64> {
    let units = busy(c);
    let (_, top) = *units.first()?;
    if top < BOUND_PCT {
        return None;
    }
    let after = units
        .iter()
        .map(|(u, b)| b * scale(*u).clamp(0.0, 1.0))
        .fold(0.0, f64::max);
    Some((1.0 - after / top).clamp(0.0, 1.0))
}

/// `L2 88.5 %, DRAM 75.7 %`: the `n` busiest units, for evidence.
pub fn busiest_text(c: &dyn Counters, n: usize) -> String {
    busy(c)
        .iter()
        .take(n)
        .map(|(u, b)| format!("{} {}", u.name(), fmt::pct(*b)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ncu::{Launch, Value};

    fn launch(metrics: &[(&str, f64)]) -> Launch {
        let mut l = Launch::default();
        for (k, v) in metrics {
            l.metrics.insert(k.to_string(), Value::Num(*v));
        }
        l
    }

    #[test]
    fn the_saving_stops_where_the_next_unit_binds() {
        let c = launch(&[(m::L2_PCT, 90.0), (m::DRAM_PCT, 45.0), (m::PIPE_LSU, 20.0)]);
        assert_eq!(binder(&c), Some((Unit::L2, 90.0)));
        // Half the L2's work removed: it falls to 45 %, level with DRAM.
        let half = saving(&c, |u| if u == Unit::L2 { 0.5 } else { 1.0 }).unwrap();
        assert!((half - 0.5).abs() < 1e-9);
        // Nine tenths removed: DRAM binds at 45 %.
        let most = saving(&c, |u| if u == Unit::L2 { 0.1 } else { 1.0 }).unwrap();
        assert!((most - 0.5).abs() < 1e-9);
        // Work removed from a unit that does not bind buys nothing.
        assert_eq!(
            saving(&c, |u| if u == Unit::Dram { 0.1 } else { 1.0 }),
            Some(0.0)
        );
        // Nothing paces a kernel whose busiest unit is idle half the time.
        let idle = launch(&[(m::L2_PCT, 50.0)]);
        assert_eq!(saving(&idle, |_| 0.0), None);
    }
}
