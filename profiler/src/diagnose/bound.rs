//! The regime: which unit the kernel keeps busy, named, or that none is busy.

use super::chain::{ATOMIC_BOUND_SHARE, chain};
use super::units::{self, Unit};
use super::{DRAM_SHARE, HIGH_PCT, Kind, Outcome, Verdict};
use crate::fmt;
use crate::ncu::metrics::{self as m, Counters};

/// The regime's verdict.
pub(super) fn rule(c: &dyn Counters) -> Outcome {
    regime(c).map_or(Outcome::Silent(m::SM_PCT), Outcome::Found)
}

/// `memory-bound (DRAM 91 %)`, `compute-bound (FMA pipe 80 %)`, `latency-bound (…)`: the
/// unit the kernel keeps busy, named.
pub(super) fn regime(c: &dyn Counters) -> Option<Verdict> {
    let compute = c.m(m::SM_PCT)?;
    let memory = c.m(m::MEM_PCT)?;
    let mut evidence = format!(
        "compute (SM) {}, memory {}",
        fmt::pct(compute),
        fmt::pct(memory)
    );
    if let Some(a) = chain(c)
        && a.share >= ATOMIC_BOUND_SHARE
    {
        // Neither SOL number is high when one address's chain of atomics sets the pace: name
        // it instead of calling the kernel latency-bound (the atomics finding has the numbers).
        return Some(Verdict {
            kind: Kind::Bound,
            verdict: "atomic-bound (one address)".into(),
            evidence: format!(
                "{evidence}: neither is high; the chain of atomics to one address fills {} of \
                 the kernel",
                fmt::share(a.share)
            ),
            fix: None,
            cost: None,
        });
    }
    let measured = units::busy(c);
    if !measured.is_empty() {
        evidence += &format!(
            "; busiest units: {} (high = >= {HIGH_PCT:.0} %)",
            units::busiest_text(c, 4)
        );
    }
    let (verdict, fix) = match named(c, compute, memory) {
        Regime::Memory(level) => match level {
            Unit::Dram => (
                format!("memory-bound (DRAM {})", pct(c, Unit::Dram)),
                "at the DRAM roof: move fewer bytes (fuse with neighbours, narrower types), not \
                 tuning",
            ),
            Unit::L2 => (
                format!(
                    "memory-bound in L2 (L2 {}, DRAM {})",
                    pct(c, Unit::L2),
                    pct(c, Unit::Dram)
                ),
                "the L2 is the bottleneck, not DRAM: check what each byte it moves is used for \
                 (partly used sectors, data read twice)",
            ),
            _ => (
                format!(
                    "memory-bound in L1/shared (L1 {}{})",
                    pct(c, Unit::L1),
                    c.m(m::PIPE_LSU)
                        .map_or(String::new(), |p| format!(", LSU pipe {}", fmt::pct(p)))
                ),
                "the L1 and shared memory are the bottleneck: fewer, wider accesses per byte \
                 used (register reuse, vector loads), no bank conflicts",
            ),
        },
        Regime::Compute(unit) => (
            match (unit, busiest_pipe(c)) {
                // Issue slots full: name the pipe that takes most of them too.
                (Some(Unit::Issue), Some((pipe, p))) => format!(
                    "compute-bound (issue {}, {pipe} {})",
                    pct(c, Unit::Issue),
                    fmt::pct(p)
                ),
                (Some(u), _) => format!("compute-bound ({} {})", u.name(), pct(c, u)),
                (None, _) => format!("compute-bound (SM {})", fmt::pct(compute)),
            },
            "busy computing: check that the work is needed and on the right pipe (tensor cores \
             for matrix products)",
        ),
        Regime::Crossover(unit, level) => (
            format!(
                "at the roofline crossover ({} {}, {} {})",
                unit.name(),
                pct(c, unit),
                level.name(),
                pct(c, level)
            ),
            "compute and memory both near peak: little left to tune",
        ),
        Regime::Latency => (
            match units::binder(c) {
                Some((u, b)) => {
                    format!("latency-bound (busiest unit: {} {})", u.name(), fmt::pct(b))
                }
                None => format!(
                    "latency-bound (SM {}, memory {})",
                    fmt::pct(compute),
                    fmt::pct(memory)
                ),
            },
            "neither units nor memory are busy: the faults below say what the warps wait for",
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

enum Regime {
    /// A memory level binds (`Unit::Dram`, `Unit::L2` or `Unit::L1`).
    Memory(Unit),
    /// A pipe or the issue slots bind (None: only the SM's SOL says so).
    Compute(Option<Unit>),
    /// A math unit and DRAM or the L2 are both high.
    Crossover(Unit, Unit),
    Latency,
}

/// The regime from the units' busy shares, or from the two SOL numbers where the units were
/// not collected.
fn named(c: &dyn Counters, compute: f64, memory: f64) -> Regime {
    let all = units::busy(c);
    if all.is_empty() {
        return match (compute >= HIGH_PCT, memory >= HIGH_PCT) {
            (true, _) => Regime::Compute(None),
            (false, true) => Regime::Memory(
                if c.m(m::DRAM_PCT).is_some_and(|d| d >= DRAM_SHARE * memory) {
                    Unit::Dram
                } else {
                    Unit::L1
                },
            ),
            (false, false) => Regime::Latency,
        };
    }
    // The memory level: the lowest one within reach of the busiest (a stream at the DRAM roof
    // keeps its L2 as busy; traffic that stops in the L2 leaves DRAM well below), and itself
    // high where the busiest is: a DRAM at 64 % under an L2 at 72 % is not at its roof (the
    // lab's LayerNorm at 0.74 x copy, whose L2 also serves part of its weights again each row).
    let top_memory = all
        .iter()
        .filter(|(u, _)| u.is_memory())
        .map(|(_, b)| *b)
        .fold(0.0, f64::max);
    let floor = if top_memory >= HIGH_PCT {
        (DRAM_SHARE * top_memory).max(HIGH_PCT)
    } else {
        DRAM_SHARE * top_memory
    };
    let level = [Unit::Dram, Unit::L2, Unit::L1]
        .into_iter()
        .find(|u| u.busy(c).is_some_and(|b| b >= floor))
        .unwrap_or(Unit::L1);
    // The LSU pipe issues the memory instructions: when it is the busiest compute unit, the
    // L1 it feeds is the bottleneck, not the math.
    let math = all
        .iter()
        .find(|(u, _)| matches!(u, Unit::Pipe(_) | Unit::Issue) && *u != Unit::Pipe(m::PIPE_LSU))
        .copied();
    let lsu = c.m(m::PIPE_LSU).unwrap_or(0.0);
    // Memory instructions that fill the LSU pipe fill the issue slots too: the L1 binds when
    // the LSU pipe is busier than any math pipe.
    let top_math_pipe = all
        .iter()
        .filter(|(u, _)| matches!(u, Unit::Pipe(p) if *p != m::PIPE_LSU))
        .map(|(_, b)| *b)
        .fold(0.0, f64::max);
    if lsu >= HIGH_PCT && lsu > top_math_pipe && level == Unit::L1 {
        return Regime::Memory(Unit::L1);
    }
    let math_high =
        math.is_some_and(|(_, b)| b >= HIGH_PCT) || (math.is_none() && compute >= HIGH_PCT);
    let memory_high = top_memory >= HIGH_PCT || lsu >= HIGH_PCT;
    match (math_high, memory_high) {
        (true, true) if matches!(level, Unit::Dram | Unit::L2) => {
            Regime::Crossover(math.map_or(Unit::Issue, |(u, _)| u), level)
        }
        (true, _) => Regime::Compute(math.map(|(u, _)| u)),
        (false, true) if top_memory >= HIGH_PCT => Regime::Memory(level),
        (false, true) => Regime::Memory(Unit::L1),
        (false, false) => Regime::Latency,
    }
}

/// The busiest pipe, named as the regime names it (`FMA pipe`), and its busy share (%).
fn busiest_pipe(c: &dyn Counters) -> Option<(String, f64)> {
    units::busy(c)
        .into_iter()
        .find(|(u, _)| matches!(u, Unit::Pipe(_)))
        .map(|(u, b)| (u.name(), b))
}

fn pct(c: &dyn Counters, u: Unit) -> String {
    u.busy(c).map_or("n/a".into(), fmt::pct)
}
