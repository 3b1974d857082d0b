//! The Speed of Light regime, and the chain of same-address atomics that can set it.

use super::{DRAM_SHARE, HIGH_PCT, Kind, Outcome, Verdict};
use crate::fmt;
use crate::ncu::metrics::{self as m, Counters};

/// Every block's `red` lands on one L2 slice when the busiest slice takes at least this share
/// of the blocks' `red`s (the other slices also count about half as many again: requests
/// passed on from the far L2 partition).
pub const ONE_SLICE_SHARE: f64 = 0.9;
/// L2 cycles between two `red`s to one address when nothing else holds them back: measured on
/// the H200 (1,048,576 `red`s on one slice, one atomic-unit input cycle each, that unit busy
/// 32.3 % of the kernel: 3.1 cycles per `red`).
pub const SAME_ADDRESS_RED_CYCLES: f64 = 3.1;
/// Bound by same-address atomics outright (the regime) when their chain fills this share.
pub const ATOMIC_BOUND_SHARE: f64 = 0.9;

/// The regime's verdict.
pub(super) fn rule(c: &dyn Counters) -> Outcome {
    regime(c).map_or(Outcome::Silent, Outcome::Found)
}

/// `compute-bound (SM 85 %)`, `memory-bound (DRAM 91 %)`, …: what the kernel is busy with.
pub(super) fn regime(c: &dyn Counters) -> Option<Verdict> {
    let compute = c.m(m::SM_PCT)?;
    if let Some((share, _)) = atomic_chain(c)
        && share >= ATOMIC_BOUND_SHARE
    {
        // Neither SOL number is high when one address's chain of atomics sets the pace: name
        // it instead of calling the kernel latency-bound (the atomics finding has the numbers).
        return Some(Verdict {
            kind: Kind::Bound,
            verdict: "atomic-bound (one result word)".into(),
            evidence: format!(
                "compute (SM) {}, memory {}: neither is high, the chain of `red`s to one \
                 address fills {} of the kernel",
                fmt::pct(compute),
                c.m(m::MEM_PCT).map_or("n/a".into(), fmt::pct),
                fmt::share(share)
            ),
            fix: None,
            cost: None,
        });
    }
    let memory = c.m(m::MEM_PCT)?;
    let dram = c.m(m::DRAM_PCT);
    let mut evidence = format!(
        "compute (SM) {}, memory {}",
        fmt::pct(compute),
        fmt::pct(memory)
    );
    if let Some(d) = dram {
        evidence += &format!(", DRAM {}", fmt::pct(d));
    }
    if let Some(l2) = c.m(m::L2_PCT) {
        evidence += &format!(", L2 {}", fmt::pct(l2));
    }
    if let Some(l1) = c.m(m::L1_PCT) {
        evidence += &format!(", L1 {}", fmt::pct(l1));
    }
    evidence += &format!(" (high = >= {HIGH_PCT:.0} %)");
    let in_dram = dram.is_some_and(|d| d >= DRAM_SHARE * memory);
    let (verdict, fix) = match (compute >= HIGH_PCT, memory >= HIGH_PCT) {
        (true, false) => (
            match super::busiest_pipe(c) {
                Some((pipe, p)) => format!(
                    "compute-bound (SM {}, {pipe} pipe {})",
                    fmt::pct(compute),
                    fmt::pct(p)
                ),
                None => format!("compute-bound (SM {})", fmt::pct(compute)),
            },
            "busy computing: check that the work is needed and on the right pipe (tensor cores \
             for matrix products)",
        ),
        (false, true) if in_dram => (
            format!("memory-bound (DRAM {})", fmt::pct(dram.unwrap_or(memory))),
            "at the DRAM roof: move fewer bytes (fuse with neighbours, narrower types), not tuning",
        ),
        (false, true) => (
            format!(
                "memory-bound in L1/L2 (memory {}, DRAM well below)",
                fmt::pct(memory)
            ),
            "the caches are the bottleneck: check what each byte fetched is used for",
        ),
        (false, false) => (
            format!(
                "latency-bound (SM {}, memory {})",
                fmt::pct(compute),
                fmt::pct(memory)
            ),
            "neither units nor memory are busy: the faults below say what the warps wait for",
        ),
        (true, true) => (
            format!(
                "at the roofline crossover (SM {}, memory {})",
                fmt::pct(compute),
                fmt::pct(memory)
            ),
            "compute and memory both near peak: little left to tune",
        ),
    };
    Some(Verdict {
        kind: Kind::Bound,
        verdict,
        evidence,
        fix: Some(fix.into()),
        cost: None,
    })
}

/// The share of the kernel that its chain of same-address `red`s fills (None when the `red`s
/// do not all land on one slice, or the L2 counters were not collected).
pub fn atomic_chain_share(c: &dyn Counters) -> Option<f64> {
    atomic_chain(c).map(|(share, _)| share)
}

/// The chain's share and the numbers behind it.
pub(super) fn atomic_chain(c: &dyn Counters) -> Option<(f64, String)> {
    let reds = c.m(m::RED_REQ_MAX_SLICE).filter(|n| *n >= 1.0)?;
    if reds < ONE_SLICE_SHARE * c.blocks()? {
        return None;
    }
    // One atomic-unit input cycle per `red` (measured): its busy % is the `red`s' rate.
    let busy = c.m(m::ATOMIC_UNIT_PCT).filter(|p| *p > 0.0)?;
    let cycles = 100.0 / busy;
    let share = SAME_ADDRESS_RED_CYCLES / cycles;
    let ns = c
        .m(m::DURATION)
        .map_or(String::new(), |d| format!(", {:.2} ns each", d / reds));
    let fabric = c.m(m::FABRIC_REQ).map_or(String::new(), |f| {
        format!(
            "; {} L2 requests came over the partition fabric",
            fmt::value(f)
        )
    });
    Some((
        share,
        format!(
            "{} `red`s to one address, one every {cycles:.1} L2 cycles{ns}: the busiest L2 \
             slice takes every block's `red`, its atomic unit busy {} (one cycle per `red`); at \
             {SAME_ADDRESS_RED_CYCLES} cycles each the chain alone fills {} of the kernel{fabric}",
            fmt::value(reds),
            fmt::pct(busy),
            fmt::share(share)
        ),
    ))
}
