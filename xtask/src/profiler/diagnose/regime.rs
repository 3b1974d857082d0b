//! The Speed of Light regime, and the chain of same-address atomics that can bound it.

use super::*;

pub(super) fn regime(r: &Row) -> Option<Verdict> {
    let compute = r.m(m::SM_PCT)?;
    if let Some((share, a)) = atomic_chain(r)
        && share >= ATOMIC_BOUND_SHARE
    {
        // Neither SOL number is high when one address's chain of atomics sets the pace: name
        // it instead of calling the kernel latency-bound.
        return Some(Verdict {
            verdict: "atomic-bound (one result word)".into(),
            evidence: a.evidence,
            fix: None,
        });
    }
    let memory = r.m(m::MEM_PCT)?;
    let dram = r.m(m::DRAM_PCT);
    let mut evidence = format!("compute (SM) {}, memory {}", pct(compute), pct(memory));
    if let Some(d) = dram {
        evidence += &format!(", DRAM {}", pct(d));
    }
    evidence += &format!(" (high = >= {HIGH_PCT:.0} %)");
    let (verdict, fix) = match (compute >= HIGH_PCT, memory >= HIGH_PCT) {
        (true, false) => (
            "compute-bound",
            "healthy unless on the wrong pipe: check the pipe mix (tensor vs FMA), cut redundant work",
        ),
        (false, true) => match dram {
            Some(d) if d >= DRAM_SHARE * memory => (
                "memory-bound (DRAM)",
                "efficiently memory-bound: the fix is algorithmic (move fewer bytes, fuse with \
                 neighbours), not tuning",
            ),
            _ => (
                "memory-bound (L1/L2, DRAM well below)",
                "coalescing or working-set problem: check sectors per request and shared-memory \
                 wavefronts",
            ),
        },
        (false, false) => (
            "latency-bound",
            "neither unit is busy: read occupancy, the dominant stall, divergence and the tail",
        ),
        (true, true) => (
            "roofline crossover",
            "a streaming kernel at its roofline crossover: usually healthy",
        ),
    };
    Some(Verdict {
        verdict: verdict.to_string(),
        evidence,
        fix: Some(fix.to_string()),
    })
}

pub(super) fn atomics(r: &Row) -> Option<Verdict> {
    atomic_chain(r)
        .filter(|(share, _)| *share >= ATOMIC_CHAIN_SHARE)
        .map(|(_, v)| v)
}

/// The share of the kernel that its chain of same-address `red`s fills, and the finding.
fn atomic_chain(r: &Row) -> Option<(f64, Verdict)> {
    let reds = r.m(m::RED_REQ_MAX_SLICE).filter(|n| *n >= 1.0)?;
    if reds < ONE_SLICE_SHARE * r.blocks()? {
        return None;
    }
    // One atomic-unit input cycle per `red` (measured): its busy % is the `red`s' rate.
    let busy = r.m(m::ATOMIC_UNIT_PCT).filter(|p| *p > 0.0)?;
    let cycles = 100.0 / busy;
    let share = SAME_ADDRESS_RED_CYCLES / cycles;
    let ns = r
        .m(m::DURATION)
        .map_or(String::new(), |d| format!(", {:.2} ns", d / reds));
    let fabric = r.m(m::FABRIC_REQ).map_or(String::new(), |f| {
        format!(
            "; {} L2 requests came over the partition fabric",
            fmt_value(f)
        )
    });
    Some((
        share,
        Verdict {
            verdict: format!(
                "paced by same-address atomics: {} `red`s to one address, {cycles:.1} L2 cycles{ns} each",
                fmt_value(reds)
            ),
            evidence: format!(
                "the busiest L2 slice takes every block's `red`; its atomic unit is busy {}, one cycle \
                 per `red`; at {SAME_ADDRESS_RED_CYCLES} cycles each the chain alone fills {:.0} % of \
                 the kernel{fabric}",
                pct(busy),
                share * 100.0
            ),
            fix: None,
        },
    ))
}
