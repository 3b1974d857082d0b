//! The automatic diagnosis: the seeds' reading order as one table of rules.
//!
//! First the Speed of Light regime (compute-bound, memory-bound, latency-bound, roofline
//! crossover), then the causes in the order the microscope chapter reads them: coalescing,
//! bank conflicts, occupancy and its limiter, the dominant stall, tail effect (waves per SM),
//! spills, divergence. Each rule states when it fires, prints the numbers behind its verdict,
//! and names the fix direction. A rule whose metrics were not collected stays silent.

use super::metrics::{self as m, Row};
use super::predict::fmt_value;

/// "High" in the SOL triage: ≥ 70 % of peak (the seeds' threshold).
pub const HIGH_PCT: f64 = 70.0;
/// Memory-bound in DRAM when DRAM throughput is at least this share of the memory SOL.
pub const DRAM_SHARE: f64 = 0.8;
/// Uncoalesced when a warp uses fewer than this many bytes of every 32-byte sector it moves.
pub const MIN_BYTES_PER_SECTOR: f64 = 16.0;
/// Bank conflicts when shared-memory requests take more extra passes (ncu's bank-conflict
/// count: wavefronts beyond the access's minimum) than this on average.
pub const MAX_CONFLICTS_PER_REQUEST: f64 = 0.5;
/// Without the conflict counter: bank conflicts when requests take more passes than this on
/// average (right for 4-byte accesses; a 16-byte access needs 4 passes without any conflict).
pub const MAX_WAVEFRONTS_PER_REQUEST: f64 = 1.5;
/// Occupancy is a problem below this theoretical occupancy (%), or when achieved falls below
/// [`ACHIEVED_SHARE`] of theoretical.
pub const LOW_THEORETICAL_PCT: f64 = 50.0;
pub const ACHIEVED_SHARE: f64 = 0.7;
/// A grid below this many waves per SM cannot fill the GPU.
pub const MIN_WAVES: f64 = 0.95;
/// A last partial wave that leaves this share of the SMs' time idle is a tail effect.
pub const MAX_TAIL_IDLE: f64 = 0.2;
/// Every block's `red` lands on one L2 slice when the busiest slice takes at least this share
/// of the blocks' `red`s (the other slices also count about half as many again: requests
/// passed on from the far L2 partition).
pub const ONE_SLICE_SHARE: f64 = 0.9;
/// L2 cycles between two `red`s to one address when nothing else holds them back: v1 at 2^28
/// f32 on the H200 with the result word in a fast slot (1,048,576 `red`s on one slice, one
/// atomic-unit input cycle each, that unit busy 32.3 % of the kernel: 3.1 cycles per `red`;
/// 3.3 in a slow slot). `results/profile/atomics/`.
pub const SAME_ADDRESS_RED_CYCLES: f64 = 3.1;
/// Paced by same-address atomics when that chain alone, at [`SAME_ADDRESS_RED_CYCLES`], fills
/// at least this share of the kernel ...
pub const ATOMIC_CHAIN_SHARE: f64 = 0.7;
/// ... and bound by them outright (the regime) from this share on.
pub const ATOMIC_BOUND_SHARE: f64 = 0.9;
/// Divergence / predication when fewer lanes than this work per instruction (of 32).
pub const MIN_ACTIVE_LANES: f64 = 24.0;

/// What a rule found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Finding {
    /// The rule's id: `regime`, `coalescing`, …
    pub rule: &'static str,
    /// One line: `memory-bound (DRAM)`.
    pub verdict: String,
    /// The numbers behind it.
    pub evidence: String,
    /// Which way the fix goes.
    pub fix: String,
}

/// A rule's result before the table adds its id and default fix.
struct Verdict {
    verdict: String,
    evidence: String,
    /// Replaces the rule's own fix where the case needs a different one.
    fix: Option<String>,
}

/// One diagnosis rule.
pub struct Rule {
    pub id: &'static str,
    /// When it fires, with its thresholds.
    pub when: &'static str,
    /// The fix direction.
    pub fix: &'static str,
    eval: fn(&Row) -> Option<Verdict>,
}

/// Every rule, in reading order. The first, `regime`, fires whenever SOL was collected.
pub const RULES: [Rule; 9] = [
    Rule {
        id: "regime",
        when: "SOL compute (SM) and memory throughput, each high at >= 70 % of peak: compute-bound, \
               memory-bound, latency-bound (both low) or roofline crossover (both high)",
        fix: "",
        eval: regime,
    },
    Rule {
        id: "atomics",
        when: "the busiest L2 slice takes >= 90 % of the blocks' `red`s (every block adds to one \
               result word), and that chain at 3.1 L2 cycles per `red` fills >= 70 % of the kernel \
               (regime: atomic-bound from 90 %)",
        fix: "fewer same-address atomics: more elements per block (v4's coarsening), one wave of \
              blocks (v6), or per-block partials summed by a second pass",
        eval: atomics,
    },
    Rule {
        id: "coalescing",
        when: "global loads or stores use < 16 of the 32 bytes of each sector they move \
               (sectors/request far above 4 for 4-byte lanes)",
        fix: "make a warp's lanes touch consecutive addresses: stage through shared memory \
              (transpose the tile), change the layout, vectorize",
        eval: coalescing,
    },
    Rule {
        id: "bank-conflicts",
        when: "shared-memory requests take > 0.5 extra wavefronts (bank conflicts: passes through \
               the banks beyond the access's minimum) on average; without the conflict counter, \
               > 1.5 wavefronts per request",
        fix: "pad the tile (+1 column), swizzle, or address so a warp's active lanes sit on \
              different banks (sequential addressing)",
        eval: bank_conflicts,
    },
    Rule {
        id: "occupancy",
        when: "theoretical occupancy < 50 %, or achieved < 70 % of theoretical",
        fix: "",
        eval: occupancy,
    },
    Rule {
        id: "stall",
        when: "always: the largest warp stall reason and its share of all stalls",
        fix: "",
        eval: stall,
    },
    Rule {
        id: "tail",
        when: "waves per SM < 0.95 (the grid cannot fill the GPU), or 1 <= waves < 4 with a last \
               partial wave leaving > 20 % of the SMs' time idle",
        fix: "more work per launch (batch, larger problem), or a one-wave grid-stride kernel \
              sized from the occupancy API",
        eval: tail,
    },
    Rule {
        id: "spills",
        when: "any local-memory traffic (register spills, local arrays)",
        fix: "fewer live values (smaller tiles, less unrolling), a register budget per thread; \
              look for ld.local/st.local with `cargo xtask asm`",
        eval: spills,
    },
    Rule {
        id: "divergence",
        when: "fewer than 24 of 32 lanes do work (predicate on) per warp instruction",
        fix: "keep the working lanes packed into few warps (v3's sequential addressing) so \
              whole warps go idle, or give idle lanes other work",
        eval: divergence,
    },
];

/// Every rule that fires for `row`, regime first.
pub fn diagnose(row: &Row) -> Vec<Finding> {
    RULES
        .iter()
        .filter_map(|rule| {
            let v = (rule.eval)(row)?;
            Some(Finding {
                rule: rule.id,
                verdict: v.verdict,
                evidence: v.evidence,
                fix: v.fix.unwrap_or_else(|| rule.fix.to_string()),
            })
        })
        .collect()
}

/// The rules table as text (`cargo xtask profile --rules`).
pub fn rules_text() -> String {
    let mut out = String::from("Diagnosis rules, in reading order:\n");
    for r in &RULES {
        out += &format!("\n[{}]\n  fires: {}\n", r.id, r.when);
        if !r.fix.is_empty() {
            out += &format!("  fix:   {}\n", r.fix);
        } else {
            out += "  fix:   depends on the case (printed with the verdict)\n";
        }
    }
    out
}

/// `compute-bound`, `memory-bound (DRAM)`, … : the regime alone, for a table column.
pub fn regime_of(row: &Row) -> Option<String> {
    regime(row).map(|v| v.verdict)
}

fn pct(x: f64) -> String {
    format!("{x:.1} %")
}

fn regime(r: &Row) -> Option<Verdict> {
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

fn atomics(r: &Row) -> Option<Verdict> {
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

fn coalescing(r: &Row) -> Option<Verdict> {
    let mut bad = Vec::new();
    for (op, bytes, sectors, requests) in [
        ("loads", m::GLD_BYTES_PER_SECTOR, m::GLD_SECTORS, m::GLD_REQ),
        (
            "stores",
            m::GST_BYTES_PER_SECTOR,
            m::GST_SECTORS,
            m::GST_REQ,
        ),
    ] {
        // No requests of this kind (a reduction stores nothing but its atomic): nothing to
        // judge, whatever the bytes-per-sector ratio reads (ncu prints 0 for it).
        if r.m(requests) == Some(0.0) {
            continue;
        }
        let per_req = r.ratio(sectors, requests);
        let used = r.m(bytes);
        let uncoalesced = match used {
            Some(b) => b < MIN_BYTES_PER_SECTOR,
            // Without the SASS metric, 16 sectors/request is the most a coalesced warp of
            // 16-byte lanes moves.
            None => per_req.is_some_and(|s| s > 16.0),
        };
        if uncoalesced {
            let mut facts = Vec::new();
            if let Some(s) = per_req {
                facts.push(format!("{} sectors/request", fmt_value(s)));
            }
            if let Some(b) = used {
                facts.push(format!("{} of 32 bytes used per sector", fmt_value(b)));
            }
            bad.push(format!("global {op}: {}", facts.join(", ")));
        }
    }
    (!bad.is_empty()).then(|| Verdict {
        verdict: "uncoalesced global access".into(),
        evidence: bad.join("; ") + " (coalesced 4-byte lanes: 4 sectors/request, 32 bytes used)",
        fix: None,
    })
}

fn bank_conflicts(r: &Row) -> Option<Verdict> {
    let mut bad = Vec::new();
    for (op, wavefronts, requests, conflicts) in [
        (
            "loads",
            m::SH_LD_WAVEFRONTS,
            m::SH_LD_REQ,
            m::SH_LD_CONFLICTS,
        ),
        (
            "stores",
            m::SH_ST_WAVEFRONTS,
            m::SH_ST_REQ,
            m::SH_ST_CONFLICTS,
        ),
    ] {
        let Some(w) = r.ratio(wavefronts, requests) else {
            continue;
        };
        // ncu counts as conflicts the wavefronts beyond what the access needs at best (1 for
        // 4-byte lanes, 4 for 16-byte ones), so conflicts per request judge vector accesses
        // too; wavefronts per request only stand in when the counter was not collected.
        let extra = r.ratio(conflicts, requests);
        let conflicted = match extra {
            Some(x) => x > MAX_CONFLICTS_PER_REQUEST,
            None => w > MAX_WAVEFRONTS_PER_REQUEST,
        };
        if conflicted {
            let mut e = format!("shared {op}: {} wavefronts/request", fmt_value(w));
            if let (Some(c), Some(x)) = (r.m(conflicts), extra) {
                e += &format!(
                    ", {} conflicts ({} extra wavefronts/request)",
                    fmt_value(c),
                    fmt_value(x)
                );
            }
            bad.push(e);
        }
    }
    (!bad.is_empty()).then(|| Verdict {
        verdict: "shared-memory bank conflicts".into(),
        evidence: bad.join("; ")
            + " (conflict-free: 0 extra, 1 wavefront/request for 4-byte lanes)",
        fix: None,
    })
}

fn occupancy(r: &Row) -> Option<Verdict> {
    let achieved = r.m(m::ACHIEVED_OCC)?;
    let theoretical = r.m(m::THEORETICAL_OCC);
    let limits: Vec<(&str, f64)> = m::OCC_LIMITS
        .iter()
        .filter_map(|(what, name)| Some((*what, r.m(name)?)))
        .collect();
    let limiter = limits.iter().min_by(|a, b| a.1.total_cmp(&b.1)).copied();
    let low_theoretical = theoretical.is_some_and(|t| t < LOW_THEORETICAL_PCT);
    let low_achieved = theoretical.is_some_and(|t| achieved < ACHIEVED_SHARE * t)
        || (theoretical.is_none() && achieved < LOW_THEORETICAL_PCT);
    if !low_theoretical && !low_achieved {
        return None;
    }
    let mut evidence = format!("achieved {}", pct(achieved));
    if let Some(t) = theoretical {
        evidence += &format!(" of theoretical {}", pct(t));
    }
    if !limits.is_empty() {
        let list: Vec<String> = limits
            .iter()
            .map(|(w, n)| format!("{w} {}", fmt_value(*n)))
            .collect();
        evidence += &format!("; blocks/SM allowed by {}", list.join(", "));
    }
    if let Some(regs) = r.m(m::REGISTERS) {
        evidence += &format!("; {} registers/thread", fmt_value(regs));
    }
    let (verdict, fix) = if low_theoretical {
        let (what, fix) = match limiter.map(|l| l.0) {
            Some("registers") => (
                "registers",
                "fewer live values per thread, a register budget (launch bounds), smaller tiles",
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
        (
            format!("occupancy capped by {what}"),
            format!("{fix}; or accept it if the kernel already saturates a unit"),
        )
    } else {
        (
            "achieved occupancy well below theoretical".to_string(),
            "warps finish unevenly or too few blocks are resident: check the tail (waves per SM) \
             and load balance across blocks"
                .to_string(),
        )
    };
    Some(Verdict {
        verdict,
        evidence,
        fix: Some(fix),
    })
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
            "the MIO queue (shared memory, special math) is full",
            "fewer or wider shared-memory instructions",
        ),
        "short_scoreboard" => (
            "waiting for a shared-memory or MIO result",
            "fewer, conflict-free shared-memory accesses",
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

fn stall(r: &Row) -> Option<Verdict> {
    let (reason, _, share) = r.dominant_stall()?;
    let top: Vec<String> = r
        .stalls()
        .iter()
        .filter(|(s, _)| *s != "selected")
        .take(3)
        .map(|(s, v)| format!("{s} {v:.2}"))
        .collect();
    let (meaning, fix) = stall_meaning(reason);
    let dram = r.m(m::DRAM_PCT);
    // The seeds' rule 1: long_scoreboard at high DRAM throughput is what memory-bound looks like.
    let expected = reason == "long_scoreboard" && dram.is_some_and(|d| d >= HIGH_PCT);
    let fix = if expected {
        "none in the kernel: with DRAM this busy, waiting for memory is expected; move fewer bytes"
            .to_string()
    } else {
        fix.to_string()
    };
    Some(Verdict {
        verdict: format!("dominant stall: {reason} ({meaning})"),
        evidence: format!(
            "{:.0} % of all stalls; top: {} (warps stalled per issued instruction){}",
            share * 100.0,
            top.join(", "),
            dram.map_or(String::new(), |d| format!("; DRAM {}", pct(d)))
        ),
        fix: Some(fix),
    })
}

fn tail(r: &Row) -> Option<Verdict> {
    let waves = r.m(m::WAVES)?;
    let evidence = |extra: String| {
        let mut e = format!("{} waves per SM", fmt_value(waves));
        if let Some(b) = r.blocks() {
            e += &format!(", {} blocks", fmt_value(b));
        }
        if let Some(sms) = r.m(m::SM_COUNT) {
            e += &format!(", {} SMs", fmt_value(sms));
        }
        e + &extra
    };
    if waves < MIN_WAVES {
        return Some(Verdict {
            verdict: "undersized grid: it cannot fill the GPU".into(),
            evidence: evidence(format!("; {:.0} % of one wave", waves * 100.0)),
            fix: None,
        });
    }
    let full = waves.ceil();
    let idle = (full - waves) / full;
    if (1.0..4.0).contains(&waves) && idle > MAX_TAIL_IDLE {
        return Some(Verdict {
            verdict: "tail effect: the last wave is partial".into(),
            evidence: evidence(format!(
                "; the last wave leaves {:.0} % of the SMs' time idle",
                idle * 100.0
            )),
            fix: None,
        });
    }
    None
}

fn spills(r: &Row) -> Option<Verdict> {
    let ld = r.m(m::LOCAL_LD_BYTES);
    let st = r.m(m::LOCAL_ST_BYTES);
    let total = ld.unwrap_or(0.0) + st.unwrap_or(0.0);
    (total > 0.0).then(|| Verdict {
        verdict: "local-memory traffic (register spills)".into(),
        evidence: format!(
            "{} bytes loaded, {} bytes stored from local memory{}",
            fmt_value(ld.unwrap_or(0.0)),
            fmt_value(st.unwrap_or(0.0)),
            r.m(m::REGISTERS).map_or(String::new(), |x| format!(
                "; {} registers/thread",
                fmt_value(x)
            ))
        ),
        fix: None,
    })
}

fn divergence(r: &Row) -> Option<Verdict> {
    let lanes = r.m(m::THREADS_PER_INST)?;
    (lanes < MIN_ACTIVE_LANES).then(|| Verdict {
        verdict: "divergence / predication: lanes sit idle".into(),
        evidence: format!("{} of 32 lanes work per warp instruction", fmt_value(lanes)),
        fix: None,
    })
}
