//! The compute faults: a GEMM on the wrong pipe, special-function math saturating the XU pipe,
//! idle lanes.

use super::units::{self, Unit};
use super::{Outcome, Verdict, busiest_pipe, busiest_pipe_but};
use crate::fmt;
use crate::ncu::metrics::{self as m, Counters};

/// A matrix product on the FMA pipe: FFMA carries at least this share of the thread
/// instructions ...
pub const GEMM_FFMA_SHARE: f64 = 0.25;
/// ... each FFMA's operands come from loads (at least one warp-level load per this many warp
/// FFMAs: a loop over registers alone is no product of matrices) ...
pub const GEMM_FFMA_PER_LOAD: f64 = 64.0;
/// ... and those loads re-read data on chip: the L1 and shared memory serve at least this
/// many times the bytes DRAM supplied (each operand element used by many outputs).
pub const GEMM_REUSE: f64 = 4.0;
/// The tensor pipe counts as unused below this busy share (%).
pub const TENSOR_IDLE_PCT: f64 = 5.0;
/// On the tensor cores a warp instruction does 4,096 FLOPs (BF16 `mma.sync` m16n8k16) or
/// more (`wgmma`) against an FFMA's 64, and their BF16 peak is ~15x the FP32 FMA peak (TF32
/// ~7x): the FMA GEMM's instruction stream (its FFMAs, the loads that feed them, their issue
/// slots) shrinks to at most this share.
pub const TENSOR_SCALE: f64 = 1.0 / 7.0;
/// Special-function bound when the XU pipe, its idle lanes discounted, is at least this busy
/// (%) and the busiest pipe.
pub const XU_PCT: f64 = 50.0;
/// Divergence / predication when fewer lanes than this work per instruction (of 32).
pub const MIN_ACTIVE_LANES: f64 = 24.0;

/// Names that say "matrix product" (cuBLAS, CUTLASS, Triton, hand-written).
const GEMM_NAMES: [&str; 6] = ["gemm", "matmul", "xmma", "sgemm", "mma", "conv"];

/// Whether a kernel name says it is a matrix product.
pub fn gemm_name(name: &str) -> bool {
    let n = name.to_lowercase();
    GEMM_NAMES.iter().any(|g| n.contains(g))
}

/// What the tensor-core rule measured of the kernel's shape.
struct Shape {
    ffma_share: Option<f64>,
    ffma_per_load: Option<f64>,
    reuse: Option<f64>,
}

fn shape(c: &dyn Counters) -> Shape {
    let ffma = c.m(m::FFMA_THREAD_INST);
    let ffma_share = ffma
        .zip(c.m(m::THREAD_INST).filter(|t| *t > 0.0))
        .map(|(f, t)| f / t);
    let loads = [m::SH_LD_INST, m::GLD_INST, m::LDGSTS_INST]
        .iter()
        .filter_map(|n| c.m(n))
        .sum::<f64>();
    let ffma_per_load = ffma.filter(|_| loads > 0.0).map(|f| f / 32.0 / loads);
    // Bytes served on chip: every shared-memory wavefront carries up to 128 bytes, every L1
    // sector 32.
    let on_chip =
        128.0 * c.m(m::SH_LD_WAVEFRONTS).unwrap_or(0.0) + 32.0 * c.m(m::GLD_SECTORS).unwrap_or(0.0);
    let reuse = c
        .m(m::DRAM_READ_BYTES)
        .filter(|_| on_chip > 0.0)
        .map(|d| on_chip / d.max(32.0));
    Shape {
        ffma_share,
        ffma_per_load,
        reuse,
    }
}

pub(super) fn tensor_cores(c: &dyn Counters) -> Outcome {
    let (Some(fma), Some(tensor)) = (c.m(m::PIPE_FMA), c.m(m::PIPE_TENSOR)) else {
        return Outcome::Silent(m::PIPE_TENSOR);
    };
    if tensor >= TENSOR_IDLE_PCT {
        return Outcome::Clean;
    }
    let s = shape(c);
    let Some(ffma_share) = s.ffma_share else {
        return Outcome::Silent(m::FFMA_THREAD_INST);
    };
    let named = c.name().is_some_and(gemm_name);
    let fed = s.ffma_per_load.is_some_and(|r| r <= GEMM_FFMA_PER_LOAD);
    let reused = s.reuse.is_some_and(|r| r >= GEMM_REUSE);
    if ffma_share < GEMM_FFMA_SHARE || !(fed && (reused || named)) {
        return Outcome::Clean;
    }
    let mut evidence = vec![format!(
        "FFMA is {} of the thread instructions",
        fmt::share(ffma_share)
    )];
    if let Some(r) = s.ffma_per_load {
        evidence.push(format!("{} warp FFMA per load", fmt::value(r)));
    }
    if let Some(r) = s.reuse {
        evidence.push(format!(
            "the L1 and shared memory serve {}x the bytes DRAM supplied (operands reused from \
             on chip)",
            fmt::value(r)
        ));
    }
    if named {
        evidence.push("the name says GEMM".into());
    }
    // The product's instruction stream: the FFMAs (FMA pipe), the loads feeding them (LSU
    // pipe, L1/shared), and their issue slots. On the tensor cores it shrinks; the rest stays.
    let stream = |u: Unit| match u {
        Unit::Pipe(p) if p == m::PIPE_FMA || p == m::PIPE_LSU => TENSOR_SCALE,
        Unit::Issue | Unit::L1 => TENSOR_SCALE,
        _ => 1.0,
    };
    let busiest = [
        fma,
        c.m(m::PIPE_LSU).unwrap_or(0.0),
        c.m(m::ISSUE_ACTIVE).unwrap_or(0.0),
    ]
    .into_iter()
    .fold(0.0, f64::max);
    let cost = units::saving(c, stream).unwrap_or(busiest / 100.0 * (1.0 - TENSOR_SCALE));
    Outcome::Found(Verdict::fault(
        "tensor cores unused: a matrix product on the FMA pipe".into(),
        format!(
            "{}; FMA pipe {} busy, tensor pipe {}; busiest units: {}",
            evidence.join(", "),
            fmt::pct(fma),
            fmt::pct(tensor),
            units::busiest_text(c, 3)
        ),
        cost,
    ))
}

/// Average working lanes per warp instruction (of 32), if measured.
fn lanes(c: &dyn Counters) -> Option<f64> {
    c.m(m::THREADS_PER_INST)
}

pub(super) fn sfu(c: &dyn Counters) -> Outcome {
    let Some(xu) = c.m(m::PIPE_XU) else {
        return Outcome::Silent(m::PIPE_XU);
    };
    // Idle lanes inflate every pipe's warp instructions: where lanes diverge, what the XU would
    // need with its lanes packed is its busy share times the working lanes' share. Divergence
    // is then the cause, and its own rule weighs it.
    let packed = lanes(c)
        .filter(|l| *l < MIN_ACTIVE_LANES)
        .map_or(1.0, |l| (l / 32.0).clamp(0.0, 1.0));
    let needed = xu * packed;
    let next = busiest_pipe_but(c, m::PIPE_XU);
    let next_pct = next.map_or(0.0, |n| n.1);
    if needed < XU_PCT || needed <= next_pct {
        return Outcome::Clean;
    }
    Outcome::Found(Verdict::fault(
        "special-function math saturates the XU pipe".into(),
        format!(
            "XU pipe (MUFU: sin, cos, ex2, rsqrt, conversions) {} busy{}{}",
            fmt::pct(xu),
            if packed < 1.0 {
                format!(", {} with its idle lanes packed", fmt::pct(needed))
            } else {
                String::new()
            },
            next.map_or(String::new(), |(n, p)| format!(
                ", the next busiest pipe ({n}) {}",
                fmt::pct(p)
            ))
        ),
        (needed - next_pct) / 100.0,
    ))
}

pub(super) fn divergence(c: &dyn Counters) -> Outcome {
    let (Some(lanes), Some(issue)) = (lanes(c), c.m(m::ISSUE_ACTIVE)) else {
        return Outcome::Silent(m::THREADS_PER_INST);
    };
    if lanes >= MIN_ACTIVE_LANES {
        return Outcome::Clean;
    }
    let working = lanes / 32.0;
    // Packing the working lanes into fewer warps divides every pipe's instructions and the
    // issue slots by the idle share, and the shared-memory wavefronts with them (one per
    // instruction whatever its lanes); global bytes stay what they are.
    let shared = c.m(m::SH_WAVEFRONTS).unwrap_or(0.0);
    let global = (c.m(m::GLD_SECTORS).unwrap_or(0.0) + c.m(m::GST_SECTORS).unwrap_or(0.0)) / 4.0;
    let shared_share = if shared + global > 0.0 {
        shared / (shared + global)
    } else {
        0.0
    };
    let cost = units::saving(c, |u| match u {
        Unit::L1 => 1.0 - shared_share * (1.0 - working),
        Unit::Pipe(_) | Unit::Issue => working,
        _ => 1.0,
    })
    .unwrap_or((1.0 - working) * issue / 100.0);
    Outcome::Found(Verdict::fault(
        "divergence / predication: lanes sit idle".into(),
        format!(
            "{} of 32 lanes work per warp instruction ({} idle); the schedulers issue {} of \
             their cycles; busiest units: {}",
            fmt::value(lanes),
            fmt::share(1.0 - working),
            fmt::pct(issue),
            units::busiest_text(c, 3)
        ),
        cost,
    ))
}

/// The pipe a throttle stall comes from: for `mio_throttle`, shared memory or the XU pipe
/// (both queue through the MIO); for `math_pipe_throttle`, the busiest math pipe.
pub fn throttled_pipe(c: &dyn Counters, reason: &str) -> Option<String> {
    match reason {
        "mio_throttle" | "short_scoreboard" => {
            let shared = c.m(m::SHARED_PIPE_PCT);
            let xu = c.m(m::PIPE_XU);
            match (shared, xu) {
                (Some(s), Some(x)) if x > s => Some(format!(
                    "the XU pipe (special functions, {}), not shared memory ({})",
                    fmt::pct(x),
                    fmt::pct(s)
                )),
                (Some(s), x) => Some(format!(
                    "shared memory ({} of its wavefront peak{})",
                    fmt::pct(s),
                    x.map_or(String::new(), |x| format!("; XU pipe {}", fmt::pct(x)))
                )),
                (None, Some(x)) => Some(format!("the XU pipe ({})", fmt::pct(x))),
                (None, None) => None,
            }
        }
        "math_pipe_throttle" => {
            busiest_pipe(c).map(|(name, p)| format!("the {name} pipe ({})", fmt::pct(p)))
        }
        _ => None,
    }
}
