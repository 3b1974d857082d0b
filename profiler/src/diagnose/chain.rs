//! The chain of atomic updates on the busiest L2 slice: an L2 slice applies the atomics to one
//! address one after another, each waiting for the last (measured on the H200: one `red` every
//! 3.1 L2 cycles, the slice's atomic unit one input cycle each). Atomics to many addresses
//! spread over the slices and overlap; atomics to one address pile onto one slice, whose
//! atomic unit is then far busier than the average slice's. The chain's length is the busiest
//! slice's atomic-unit cycles times the cycles between two dependent updates, whatever
//! instruction (RED, ATOMG, a CAS loop) issued them. The units ([`super::units`]) count the
//! chain as one of the units a kernel keeps busy; the atomics rule costs it.

use crate::fmt;
use crate::ncu::metrics::{self as m, Counters};

/// L2 cycles between two updates of one address when nothing else holds them back: measured
/// on the H200 (1,048,576 `red`s on one slice, one atomic-unit input cycle each, that unit
/// busy 32.3 % of the kernel: 3.1 cycles per `red`).
pub const SAME_ADDRESS_CYCLES: f64 = 3.1;
/// The atomics pile onto few slices (one address, a few lines) when the busiest slice's atomic
/// unit is at least this many times busier than the average slice's (spread over the H200's
/// slices they differ by a factor of one or two).
pub const PILED_RATIO: f64 = 8.0;
/// Without the average slice's busy share: the atomics pile onto one slice when it receives
/// at least this share of the L2's atomic requests (one address: about 2/3, the rest passed on
/// from the far partition; spread over the H200's slices: about 1/50).
pub const ONE_SLICE_SHARE: f64 = 0.25;
/// Bound by the chain outright (the regime) when it fills this share of the kernel.
pub const ATOMIC_BOUND_SHARE: f64 = 0.9;
/// One address's chain of atomics in the L2.
pub struct Chain {
    /// The share of the kernel the chain fills.
    pub share: f64,
    pub evidence: String,
}

/// The chain of atomics on the busiest L2 slice, if the atomics pile onto few slices.
pub fn chain(c: &dyn Counters) -> Option<Chain> {
    let red = c.m(m::RED_REQ).unwrap_or(0.0);
    let atom = c.m(m::ATOM_REQ).unwrap_or(0.0);
    let ops = red + atom;
    if ops < 1.0 {
        return None;
    }
    let busy = c.m(m::ATOMIC_UNIT_PCT).filter(|p| *p > 0.0)?;
    let avg = c.m(m::ATOMIC_UNIT_AVG_PCT);
    let piled = match avg {
        Some(avg) => avg <= 0.0 || busy / avg >= PILED_RATIO,
        // Without the average, the busiest slice's share of the requests says the same.
        None => {
            let top = c.m(m::RED_REQ_MAX_SLICE).unwrap_or(0.0)
                + c.m(m::ATOM_REQ_MAX_SLICE).unwrap_or(0.0);
            top / ops >= ONE_SLICE_SHARE
        }
    };
    if !piled {
        return None;
    }
    let cycles = 100.0 / busy;
    // At one update per SAME_ADDRESS_CYCLES on one address, the chain fills this share; more
    // than all of it means the slice serves several addresses at once, and its atomic unit's
    // busy share is then the time the atomics take.
    let chain = SAME_ADDRESS_CYCLES / cycles;
    let share = chain.min(1.0).max(busy / 100.0);
    Some(Chain {
        share,
        evidence: format!(
            "{} atomic requests in the L2 ({} `red`, {} `atom`) pile onto few slices: the \
             busiest slice's atomic unit is {} busy{}, one update every \
             {cycles:.1} L2 cycles; at {SAME_ADDRESS_CYCLES} cycles per dependent update of \
             one address that chain fills {} of the kernel",
            fmt::value(ops),
            fmt::value(red),
            fmt::value(atom),
            fmt::pct(busy),
            avg.map_or(String::new(), |a| format!(
                " against {} on average",
                fmt::pct(a)
            )),
            fmt::share(chain.min(1.0))
        ),
    })
}
