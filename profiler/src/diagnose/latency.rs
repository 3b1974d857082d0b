//! The latency faults: what the warps wait for when neither the pipes nor memory are full.
//! Barriers, memory latency not hidden, and too few warps to hide it: the warps a launch can
//! keep resident are the fewest of what the grid supplies and what each SM's resources allow,
//! and the fault is whichever of the two sets that number (occupancy, a partial last wave, a
//! grid too small for the GPU); and the dominant stall as context.

use super::compute::throttled_pipe;
use super::units::{self, Unit};
use super::{HIGH_PCT, Kind, Outcome, Verdict, busiest_pipe, busiest_pipe_but, headroom};
use crate::fmt;
use crate::ncu::metrics::{self as m, Counters};

/// The stall metrics the latency rules read (for the message when they are missing).
const STALL_BARRIER: &str = "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio";
const STALL_LONG_SCOREBOARD: &str =
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio";

/// Barrier-bound when barrier waits are at least this share of the stalled states.
pub const BARRIER_SHARE: f64 = 0.3;
/// Occupancy is a problem below this theoretical occupancy (%), or when achieved falls below
/// [`ACHIEVED_SHARE`] of theoretical ...
pub const LOW_THEORETICAL_PCT: f64 = 50.0;
pub const ACHIEVED_SHARE: f64 = 0.7;
/// ... unless a pipe or the memory is at least this busy (%): then the cap costs nothing.
pub const SATURATED_PCT: f64 = 60.0;
/// A grid below this many waves per SM cannot fill the GPU.
pub const MIN_WAVES: f64 = 0.95;
/// Warp schedulers per SM: a warp issues from one of them, so an SM with fewer resident warps
/// leaves some idle.
pub const SCHEDULERS: f64 = 4.0;
/// A last partial wave that leaves this share of the SMs' time idle is a tail effect.
pub const MAX_TAIL_IDLE: f64 = 0.2;

pub(super) fn barrier(c: &dyn Counters) -> Outcome {
    let (Some(share), Some(room), Some((top, _, _))) =
        (c.stall_share("barrier"), headroom(c), c.dominant_stall())
    else {
        return Outcome::Silent(STALL_BARRIER);
    };
    // Warps that wait at a barrier for their block's loads are waiting on memory: the barrier
    // is the fault only where it, not the loads, is what the warps wait for most.
    if share < BARRIER_SHARE || top != "barrier" {
        return Outcome::Clean;
    }
    // The barriers themselves execute on the ADU pipe: where it is the busiest pipe, the
    // barrier instructions are what the SM is busy with, and what they cost is how far the ADU
    // stands above the next busiest unit (as for the XU pipe), not the idle slots left: nothing
    // where another unit (memory, a chain of atomics) is busier still.
    let adu = c.m(m::PIPE_ADU).unwrap_or(0.0);
    let next = busiest_pipe_but(c, m::PIPE_ADU).map_or(0.0, |(_, p)| p);
    let issue = if units::binder(c).is_some_and(|(u, _)| u == Unit::Pipe(m::PIPE_ADU)) {
        ((adu - next) / 100.0).max(0.0)
    } else {
        0.0
    };
    let waiting = if units::paced(c) { 0.0 } else { room * share };
    Outcome::Found(Verdict::fault(
        "barrier-bound: warps wait at __syncthreads".into(),
        if issue > waiting {
            format!(
                "barrier waits are {} of the warps' stalled states and the ADU pipe, which \
                 executes the barriers, is {} busy, {:.1} points above the next busiest pipe",
                fmt::share(share),
                fmt::pct(adu),
                adu - next
            )
        } else {
            format!(
                "barrier waits are {} of the warps' stalled states, with {} left in the busiest \
                 unit",
                fmt::share(share),
                fmt::share(room)
            )
        },
        issue.max(waiting),
    ))
}

pub(super) fn memory_latency(c: &dyn Counters) -> Outcome {
    let (Some((reason, _, share)), Some(mem), Some(room)) =
        (c.dominant_stall(), c.m(m::MEM_PCT), headroom(c))
    else {
        return Outcome::Silent(STALL_LONG_SCOREBOARD);
    };
    // Waiting on memory at a busy memory system is what memory-bound looks like (the seeds'
    // rule 1); cp.async kernels have their own rule.
    if reason != "long_scoreboard"
        || mem >= HIGH_PCT
        || c.m(m::LDGSTS_INST).is_some_and(|n| n > 0.0)
    {
        return Outcome::Clean;
    }
    // Local memory waits on the same scoreboard: that share is the spills rule's.
    let global = super::memory::global_share(c);
    Outcome::Found(Verdict::fault(
        "memory latency not hidden: too few loads in flight".into(),
        format!(
            "long_scoreboard holds {} of the stalls while the memory SOL is only {}, {} left in \
             the busiest unit{}{}",
            fmt::share(share),
            fmt::pct(mem),
            fmt::share(room),
            c.m(m::ACHIEVED_OCC).map_or(String::new(), |o| format!(
                "; achieved occupancy {}",
                fmt::pct(o)
            )),
            if global < 1.0 {
                format!("; {} of the L1's bytes are global", fmt::share(global))
            } else {
                String::new()
            }
        ),
        room * share * (1.0 - mem / 100.0) * global,
    ))
}

/// The waits more resident warps would hide: a stalled warp on these waits for a result or a
/// barrier while another could issue. Throttles, dispatch stalls and `not_selected` (a warp
/// was eligible) are not hidden by more warps.
const HIDDEN_BY_WARPS: [&str; 7] = [
    "long_scoreboard",
    "short_scoreboard",
    "wait",
    "barrier",
    "membar",
    "branch_resolving",
    "imc_miss",
];

/// The share of the warps' stalled states more warps would hide (1 when stalls were not
/// collected: the cap is then weighed by the empty slots alone).
fn hideable(c: &dyn Counters) -> f64 {
    let shares: Vec<f64> = HIDDEN_BY_WARPS
        .iter()
        .filter_map(|r| c.stall_share(r))
        .collect();
    if shares.is_empty() {
        1.0
    } else {
        shares.iter().sum::<f64>().clamp(0.0, 1.0)
    }
}

/// How many warps each SM can hold and what sets that number.
struct Warps {
    /// Warp slots per SM.
    slots: f64,
    /// Warps the SM's resources allow (theoretical occupancy).
    allowed: Option<f64>,
    /// Warps the grid supplies per SM, when it is less than one full wave.
    supplied: Option<f64>,
    /// Warps resident on average (achieved occupancy).
    achieved: f64,
}

fn warps(c: &dyn Counters) -> Option<Warps> {
    let achieved_pct = c.m(m::ACHIEVED_OCC)?;
    let slots = c.m(m::MAX_WARPS_PER_SM).unwrap_or(64.0);
    let allowed = c.m(m::THEORETICAL_OCC).map(|t| t / 100.0 * slots);
    let per_block = c.m(m::BLOCK_SIZE).map(|b| (b / 32.0).ceil());
    let supplied = match (per_block, c.blocks(), c.m(m::SM_COUNT)) {
        (Some(w), Some(blocks), Some(sms)) if sms > 0.0 => Some(w * blocks / sms),
        _ => None,
    }
    .filter(|s| allowed.is_none_or(|a| *s < a));
    Some(Warps {
        slots,
        allowed,
        supplied,
        achieved: achieved_pct / 100.0 * slots,
    })
}

pub(super) fn occupancy(c: &dyn Counters) -> Outcome {
    let (Some(w), Some(room)) = (warps(c), headroom(c)) else {
        return Outcome::Silent(m::ACHIEVED_OCC);
    };
    let achieved = w.achieved / w.slots * 100.0;
    let theoretical = w.allowed.map(|a| a / w.slots * 100.0);
    let limits: Vec<(&str, f64)> = m::OCC_LIMITS
        .iter()
        .filter_map(|(what, name)| Some((*what, c.m(name)?)))
        .collect();
    let limiter = limits.iter().min_by(|a, b| a.1.total_cmp(&b.1)).copied();
    let low_theoretical = theoretical.is_some_and(|t| t < LOW_THEORETICAL_PCT);
    let low_achieved = theoretical.is_some_and(|t| achieved < ACHIEVED_SHARE * t)
        || (theoretical.is_none() && achieved < LOW_THEORETICAL_PCT);
    if !low_theoretical && !low_achieved {
        return Outcome::Clean;
    }
    // A grid that supplies fewer warps than the resources allow sets the occupancy itself:
    // the undersized-grid rule weighs it, and the resource cap does not bind.
    if w.supplied.is_some() {
        return Outcome::Clean;
    }
    // A kernel that saturates a pipe or the memory gains nothing from more warps: its cap is a
    // design choice (a GEMM's register-heavy tile), not a fault.
    let saturated = busiest_pipe(c)
        .filter(|(_, p)| *p >= SATURATED_PCT)
        .map(|(n, p)| format!("the {n} pipe is {} busy", fmt::pct(p)))
        .or_else(|| {
            c.m(m::MEM_PCT)
                .filter(|p| *p >= SATURATED_PCT)
                .map(|p| format!("the memory SOL is {}", fmt::pct(p)))
        });
    let mut evidence = format!("achieved {}", fmt::pct(achieved));
    if let Some(t) = theoretical {
        evidence += &format!(" of theoretical {}", fmt::pct(t));
    }
    if !limits.is_empty() {
        let list: Vec<String> = limits
            .iter()
            .map(|(w, n)| format!("{w} {}", fmt::value(*n)))
            .collect();
        evidence += &format!("; blocks/SM allowed by {}", list.join(", "));
    }
    if let Some(regs) = c.m(m::REGISTERS) {
        evidence += &format!("; {} registers/thread", fmt::value(regs));
    }
    evidence += &format!("; {} left in the busiest unit", fmt::share(room));
    let (verdict, fix) = if low_theoretical {
        let (what, fix) = match limiter.map(|l| l.0) {
            Some("registers") => (
                "registers",
                "fewer live values per thread (shorter live ranges, smaller tiles), a register \
                 budget (launch bounds, maxrregcount)",
            ),
            Some("shared memory") => (
                "shared memory",
                "less shared memory per block (smaller tile, fewer buffers)",
            ),
            Some("blocks") => (
                "the blocks-per-SM limit",
                "larger blocks: the SM holds a fixed number of blocks",
            ),
            Some("warps") => ("warps per block", "smaller blocks or more of them"),
            _ => ("an unknown limiter", "see ncu's Occupancy section"),
        };
        (format!("occupancy capped by {what}"), fix.to_string())
    } else {
        (
            "achieved occupancy well below theoretical".to_string(),
            "warps finish unevenly or too few blocks are resident: check the tail (waves per \
             SM) and the balance of work across blocks"
                .to_string(),
        )
    };
    // More warps fill the idle issue slots only as far as the warps' waits are ones another
    // warp could issue through.
    let hidden = hideable(c);
    let cost = match &saturated {
        Some(_) => 0.0,
        None => room * (1.0 - achieved / 100.0) * hidden,
    };
    evidence += &format!(
        "; more warps would hide {} of the stalled states",
        fmt::share(hidden)
    );
    if let Some(s) = saturated {
        evidence += &format!("; but {s}: more warps would not help");
    }
    Outcome::Found(Verdict::fault(verdict, evidence, cost).with_fix(fix))
}

/// The SMs' idle share: cycles with no warp resident, averaged over SMs.
fn sm_idle(c: &dyn Counters) -> Option<f64> {
    let active = c.m(m::SM_ACTIVE_CYCLES)?;
    let elapsed = c.m(m::SM_ELAPSED_CYCLES).filter(|e| *e > 0.0)?;
    Some((1.0 - active / elapsed).clamp(0.0, 1.0))
}

fn launch_evidence(c: &dyn Counters, waves: f64, idle: Option<f64>) -> String {
    let mut e = format!("{} waves per SM", fmt::value(waves));
    if let Some(b) = c.blocks() {
        e += &format!(", {} blocks", fmt::value(b));
    }
    if let Some(sms) = c.m(m::SM_COUNT) {
        e += &format!(", {} SMs", fmt::value(sms));
    }
    if let Some(i) = idle {
        e += &format!("; the SMs sit idle {} of the kernel", fmt::share(i));
    }
    e
}

pub(super) fn tail(c: &dyn Counters) -> Outcome {
    let Some(waves) = c.m(m::WAVES) else {
        return Outcome::Silent(m::WAVES);
    };
    if !(1.0..4.0).contains(&waves) {
        return Outcome::Clean;
    }
    let full = waves.ceil();
    let predicted = (full - waves) / full;
    if predicted <= MAX_TAIL_IDLE {
        return Outcome::Clean;
    }
    let idle = sm_idle(c);
    Outcome::Found(Verdict::fault(
        "tail effect: the last wave is partial".into(),
        launch_evidence(c, waves, idle)
            + &format!(
                "; the last wave alone would leave {} idle",
                fmt::share(predicted)
            ),
        idle.unwrap_or(predicted),
    ))
}

pub(super) fn undersized(c: &dyn Counters) -> Outcome {
    let Some(waves) = c.m(m::WAVES) else {
        return Outcome::Silent(m::WAVES);
    };
    if waves >= MIN_WAVES {
        return Outcome::Clean;
    }
    let idle = sm_idle(c);
    let mut evidence =
        launch_evidence(c, waves, idle) + &format!("; {} of one wave", fmt::share(waves));
    // Three costs: SMs with no block at all; on the SMs that have one, schedulers with no warp
    // (an SM issues from four, one warp each at most per cycle); and warp slots the resources
    // would allow but the grid leaves empty (latency no warp is there to hide).
    let mut cost = idle.unwrap_or(1.0 - waves);
    if let (Some(w), Some(room)) = (warps(c), headroom(c))
        && let (Some(supplied), Some(allowed)) = (w.supplied, w.allowed)
    {
        evidence += &format!(
            "; the grid supplies {} warps per SM where the resources allow {} (of {} slots), \
             {} resident on average",
            fmt::value(supplied),
            fmt::value(allowed),
            fmt::value(w.slots),
            fmt::value(w.achieved)
        );
        let schedulers = (1.0 - w.achieved.min(SCHEDULERS) / SCHEDULERS).clamp(0.0, 1.0);
        if schedulers > 0.0 {
            evidence += &format!(
                "; {} of each SM's {SCHEDULERS:.0} schedulers have no warp",
                fmt::share(schedulers)
            );
        }
        let hidden = room * (1.0 - w.achieved / allowed).clamp(0.0, 1.0) * hideable(c);
        cost = cost.max(schedulers).max(hidden);
    }
    if let Some((size, fit)) = cluster_placement(c) {
        evidence += &format!(
            "; a cluster launch whose grid holds every cluster the GPU places at once: {} \
             clusters of {} blocks, each within one GPC",
            fmt::value(fit),
            fmt::value(size)
        );
        return Outcome::Found(
            Verdict::fault(
                "cluster placement: the clusters that fit at once cannot fill the GPU".into(),
                evidence,
                cost,
            )
            .with_fix(
                "a cluster shape the GPCs hold whole: fewer blocks per cluster, or more blocks \
                 per SM (fewer registers or threads a block); or the load-balancing placement \
                 (cudaClusterSchedulingPolicyLoadBalancing), which stacks a cluster's blocks on \
                 fewer SMs so that more clusters fit (measure both: on the H200 it was faster \
                 at 16 blocks a cluster and slower at 8, docs/part2.md); a larger grid places \
                 no more clusters at once",
            ),
        );
    }
    Outcome::Found(Verdict::fault(
        "undersized grid: it cannot fill the GPU".into(),
        evidence,
        cost,
    ))
}

/// A cluster launch whose grid has at least the clusters the GPU holds at once: (blocks per
/// cluster, clusters at once). Its missing warps are the clusters' placement, not the grid's
/// size.
fn cluster_placement(c: &dyn Counters) -> Option<(f64, f64)> {
    let size = c.m(m::CLUSTER_SIZE).filter(|s| *s > 1.0)?;
    let fit = c.m(m::CLUSTER_MAX_ACTIVE).filter(|f| *f > 0.0)?;
    let clusters = c.m(m::GRID_SIZE)? / size;
    (clusters >= fit).then_some((size, fit))
}

/// What a stall reason means and which way its fix goes.
pub fn stall_meaning(reason: &str) -> (&'static str, &'static str) {
    match reason {
        "long_scoreboard" => (
            "waiting for global/local memory (L1TEX)",
            "more independent loads in flight: coarsen, unroll, vector loads, more warps",
        ),
        "barrier" => (
            "waiting at a block barrier (__syncthreads)",
            "fewer barriers per byte: coarsen, warp shuffles for the last levels",
        ),
        "mio_throttle" => (
            "the MIO queue (shared memory, special functions) is full",
            "fewer MIO instructions: fewer or wider shared accesses, fewer special functions",
        ),
        "short_scoreboard" => (
            "waiting for a shared-memory or special-function (MIO) result",
            "fewer, conflict-free shared-memory accesses; fewer special functions",
        ),
        "wait" => (
            "fixed-latency dependencies",
            "more instruction-level parallelism: independent accumulators, unrolling",
        ),
        "not_selected" => (
            "eligible but another warp was picked",
            "none: enough warps, the scheduler is saturated",
        ),
        "math_pipe_throttle" => (
            "a math pipe is saturated",
            "cheaper instruction mix, or the tensor cores",
        ),
        "lg_throttle" => (
            "the local/global queue is full",
            "fewer, wider memory instructions (16-byte vector loads)",
        ),
        "membar" => ("waiting on a memory fence", "fewer fences and atomics"),
        "branch_resolving" => (
            "waiting for a branch target",
            "fewer divergent branches, predication",
        ),
        "no_instruction" => (
            "no instruction fetched (i-cache miss, after a jump)",
            "smaller code, fewer jumps",
        ),
        "drain" => (
            "waiting for stores to drain at exit",
            "usually none: the kernel's end",
        ),
        "dispatch_stall" => ("the dispatcher stalled", "rare: check pipeline conflicts"),
        "imc_miss" => (
            "constant-cache miss",
            "fewer divergent constant loads, keep constants uniform",
        ),
        "tex_throttle" => ("the texture queue is full", "fewer texture/L1TEX requests"),
        "sleeping" => ("warps asleep (nanosleep, yield)", "shorter sleeps"),
        "gmma" => ("waiting on warpgroup MMA", "deeper MMA pipelining"),
        _ => ("miscellaneous", "see ncu's Warp State section"),
    }
}

pub(super) fn stall(c: &dyn Counters) -> Outcome {
    let Some((reason, _, share)) = c.dominant_stall() else {
        return Outcome::Silent(STALL_LONG_SCOREBOARD);
    };
    let top: Vec<String> = c
        .stalls()
        .iter()
        .filter(|(s, _)| *s != "selected")
        .take(3)
        .map(|(s, v)| format!("{s} {v:.2}"))
        .collect();
    let (meaning, fix) = stall_meaning(reason);
    let dram = c.m(m::DRAM_PCT);
    // The seeds' rule 1: long_scoreboard at high DRAM throughput is what memory-bound looks like.
    let expected = reason == "long_scoreboard" && dram.is_some_and(|d| d >= HIGH_PCT);
    let fix = if expected {
        "none in the kernel: with DRAM this busy, waiting for memory is expected; move fewer bytes"
            .to_string()
    } else {
        fix.to_string()
    };
    let pipe = throttled_pipe(c, reason).map_or(String::new(), |p| format!("; from {p}"));
    Outcome::Found(Verdict {
        kind: Kind::Context,
        verdict: format!("dominant stall: {reason} ({meaning})"),
        evidence: format!(
            "{} of all stalls; top: {} (warps stalled per issued instruction){}{pipe}",
            fmt::share(share),
            top.join(", "),
            dram.map_or(String::new(), |d| format!("; DRAM {}", fmt::pct(d)))
        ),
        fix: Some(fix),
        cost: None,
    })
}
