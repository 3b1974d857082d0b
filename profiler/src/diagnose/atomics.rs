//! Atomics that serialise: a chain of read-modify-writes to one address in the L2 (reductions
//! `red` and value-returning `atom` alike; [`super::chain`]), atomics that make the warps wait
//! on fences, and shared-memory atomics that take most of the banks' work. The chain costs
//! what it runs beyond the busiest other unit.

use super::chain::{ATOMIC_BOUND_SHARE, chain};
use super::units::{self, Unit};
use super::{Outcome, Verdict, headroom};
use crate::fmt;
use crate::ncu::metrics::{self as m, Counters};

/// Waiting on fences and the memory queue counts as the atomics' cost when atomics are at
/// least this share of the global memory instructions.
pub const ATOMIC_INST_SHARE: f64 = 0.2;
/// Shared-memory atomics are weighed when they take at least this share of the shared
/// wavefronts.
pub const SHARED_ATOM_SHARE: f64 = 0.3;

pub(super) fn rule(c: &dyn Counters) -> Outcome {
    // The chain overlaps the parallel work: without it the kernel runs at the pace of its
    // busiest other unit (nothing is saved where the chain is not the busiest).
    let l2 = chain(c).and_then(|a| {
        let cost = units::saving(c, |u| if u == Unit::Atomics { 0.0 } else { 1.0 })?;
        let verdict = if a.share >= ATOMIC_BOUND_SHARE {
            "same-address atomics set the pace"
        } else {
            "same-address atomics serialise in the L2"
        };
        let evidence = format!(
            "{}; busiest units: {}",
            a.evidence,
            units::busiest_text(c, 3)
        );
        Some((cost, verdict.to_string(), evidence)).filter(|f| f.0 >= super::MIN_COST)
    });
    let fences = fenced(c);
    let shared = shared_atomics(c);
    let found = [l2, fences, shared]
        .into_iter()
        .flatten()
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match found {
        Some((cost, verdict, evidence)) => Outcome::Found(Verdict::fault(verdict, evidence, cost)),
        None if c.m(m::ATOMIC_UNIT_PCT).is_none()
            && c.m(m::GATOM_INST).is_none()
            && c.m(m::SH_ATOM_INST).is_none() =>
        {
            Outcome::Silent(m::ATOMIC_UNIT_PCT)
        }
        None => Outcome::Clean,
    }
}

/// Atomics the warps wait for: the memory fences of value-returning atomics (`membar`) and the
/// memory queue they fill (`lg_throttle`), in a kernel whose memory instructions are largely
/// atomics.
fn fenced(c: &dyn Counters) -> Option<(f64, String, String)> {
    let atomics = [m::GATOM_INST, m::GATOM_CAS_INST, m::GRED_INST]
        .iter()
        .filter_map(|n| c.m(n))
        .sum::<f64>();
    if atomics <= 0.0 {
        return None;
    }
    let memory = atomics + c.m(m::GLD_INST).unwrap_or(0.0) + c.m(m::GST_INST).unwrap_or(0.0);
    let share = atomics / memory;
    if share < ATOMIC_INST_SHARE {
        return None;
    }
    let membar = c.stall_share("membar").unwrap_or(0.0);
    let queue = c.stall_share("lg_throttle").unwrap_or(0.0) * share;
    let room = headroom(c)?;
    let cost = room * (membar + queue);
    Some((
        cost,
        "atomics the warps wait for (fences, a full memory queue)".into(),
        format!(
            "{} atomic instructions, {} of the global memory instructions; the warps wait on \
             memory fences {} and on the memory queue {} of their stalled states, with {} left \
             in the busiest unit",
            fmt::value(atomics),
            fmt::share(share),
            fmt::share(membar),
            fmt::share(c.stall_share("lg_throttle").unwrap_or(0.0)),
            fmt::share(room)
        ),
    ))
}

/// Shared-memory atomics that make up much of the work of a busy shared memory: each is a
/// read-modify-write of one bank word (a compare-and-swap loop repeats it until it wins), where
/// a reduction in registers first would leave one per warp.
fn shared_atomics(c: &dyn Counters) -> Option<(f64, String, String)> {
    let inst = c.m(m::SH_ATOM_INST).filter(|n| *n > 0.0)?;
    let waves = c.m(m::SH_ATOM_WAVEFRONTS)?;
    let all = c.m(m::SH_WAVEFRONTS).unwrap_or(waves).max(waves);
    let share = waves / all;
    if share < SHARED_ATOM_SHARE {
        return None;
    }
    let cost = units::saving(c, |u| match u {
        Unit::L1 => 1.0 - share,
        Unit::Pipe(p) if p == m::PIPE_LSU => 1.0 - share,
        _ => 1.0,
    })
    .unwrap_or_else(|| {
        let waits = c.stall_share("short_scoreboard").unwrap_or(0.0)
            + c.stall_share("mio_throttle").unwrap_or(0.0);
        headroom(c).unwrap_or(0.0) * waits * share
    });
    Some((
        cost,
        "atomics in shared memory take most of its work".into(),
        format!(
            "{} shared-memory atomics ({} passes through the banks each) are {} of the shared \
             wavefronts; busiest units: {}",
            fmt::value(inst),
            fmt::value(waves / inst),
            fmt::share(share),
            units::busiest_text(c, 3)
        ),
    ))
}
