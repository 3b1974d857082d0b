//! The compute faults: a GEMM on the wrong pipe, special-function math saturating the XU pipe,
//! idle lanes.

use super::{Outcome, Verdict, busiest_pipe, busiest_pipe_but};
use crate::fmt;
use crate::ncu::metrics::{self as m, Counters};

/// GEMM-shaped: at least this share of the thread instructions are FFMA ...
pub const GEMM_FFMA_SHARE: f64 = 0.4;
/// ... reusing operands from shared memory: at least this many FFMA per shared load (a
/// register-blocked tile), unless the kernel's name says it is a GEMM.
pub const GEMM_FFMA_PER_SHARED_LOAD: f64 = 4.0;
/// On the FMA pipe: at least this busy (%) ...
pub const GEMM_FMA_PCT: f64 = 40.0;
/// ... while the tensor pipe stays below this (%).
pub const TENSOR_IDLE_PCT: f64 = 5.0;
/// Special-function bound when the XU pipe is at least this busy (%) and the busiest pipe.
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

pub(super) fn tensor_cores(c: &dyn Counters) -> Outcome {
    let (Some(fma), Some(tensor)) = (c.m(m::PIPE_FMA), c.m(m::PIPE_TENSOR)) else {
        return Outcome::Silent;
    };
    if fma < GEMM_FMA_PCT || tensor >= TENSOR_IDLE_PCT {
        return Outcome::Clean;
    }
    // The shape: FFMA-heavy and reusing each operand it loads from shared memory in several
    // FFMA (a register-blocked tile), or a name that says GEMM.
    let ffma = c.m(m::FFMA_THREAD_INST);
    let ffma_share = ffma
        .zip(c.m(m::THREAD_INST).filter(|t| *t > 0.0))
        .map(|(f, t)| f / t);
    let reuse = ffma
        .zip(c.m(m::SH_LD_INST).filter(|l| *l > 0.0))
        .map(|(f, l)| f / 32.0 / l);
    let named = c.name().is_some_and(gemm_name);
    let counted = ffma_share.is_some_and(|s| s >= GEMM_FFMA_SHARE)
        && reuse.is_some_and(|r| r >= GEMM_FFMA_PER_SHARED_LOAD);
    if !named && !counted {
        return if ffma_share.is_none() {
            Outcome::Silent
        } else {
            Outcome::Clean
        };
    }
    let mut shape = Vec::new();
    if let Some(s) = ffma_share {
        shape.push(format!(
            "FFMA is {} of the thread instructions",
            fmt::share(s)
        ));
    }
    if let Some(r) = reuse {
        shape.push(format!(
            "{} FFMA per shared load (operands reused from a tile)",
            fmt::value(r)
        ));
    }
    if named {
        shape.push("the name says GEMM".into());
    }
    Outcome::Found(Verdict::fault(
        "tensor cores unused: a matrix product on the FMA pipe".into(),
        format!(
            "{}; FMA pipe {} busy, tensor pipe {}",
            shape.join(", "),
            fmt::pct(fma),
            fmt::pct(tensor)
        ),
        fma / 100.0 * 0.9,
    ))
}

pub(super) fn sfu(c: &dyn Counters) -> Outcome {
    let Some(xu) = c.m(m::PIPE_XU) else {
        return Outcome::Silent;
    };
    let next = busiest_pipe_but(c, m::PIPE_XU);
    let next_pct = next.map_or(0.0, |n| n.1);
    if xu < XU_PCT || xu <= next_pct {
        return Outcome::Clean;
    }
    Outcome::Found(Verdict::fault(
        "special-function math saturates the XU pipe".into(),
        format!(
            "XU pipe (MUFU: sin, cos, ex2, rsqrt, conversions) {} busy{}",
            fmt::pct(xu),
            next.map_or(String::new(), |(n, p)| format!(
                ", the next busiest pipe ({n}) {}",
                fmt::pct(p)
            ))
        ),
        (xu - next_pct) / 100.0,
    ))
}

pub(super) fn divergence(c: &dyn Counters) -> Outcome {
    let (Some(lanes), Some(issue)) = (c.m(m::THREADS_PER_INST), c.m(m::ISSUE_ACTIVE)) else {
        return Outcome::Silent;
    };
    if lanes >= MIN_ACTIVE_LANES {
        return Outcome::Clean;
    }
    let idle = 1.0 - lanes / 32.0;
    Outcome::Found(Verdict::fault(
        "divergence / predication: lanes sit idle".into(),
        format!(
            "{} of 32 lanes work per warp instruction ({} idle); the schedulers issue {} of \
             their cycles",
            fmt::value(lanes),
            fmt::share(idle),
            fmt::pct(issue)
        ),
        idle * issue / 100.0,
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
