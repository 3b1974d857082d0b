//! The causes, in the microscope chapter's reading order: coalescing, bank conflicts,
//! occupancy, the dominant stall, tail effect, spills, divergence.

use super::*;

pub(super) fn coalescing(r: &Row) -> Option<Verdict> {
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

pub(super) fn bank_conflicts(r: &Row) -> Option<Verdict> {
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

pub(super) fn occupancy(r: &Row) -> Option<Verdict> {
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

pub(super) fn stall(r: &Row) -> Option<Verdict> {
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

pub(super) fn tail(r: &Row) -> Option<Verdict> {
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

pub(super) fn spills(r: &Row) -> Option<Verdict> {
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

pub(super) fn divergence(r: &Row) -> Option<Verdict> {
    let lanes = r.m(m::THREADS_PER_INST)?;
    (lanes < MIN_ACTIVE_LANES).then(|| Verdict {
        verdict: "divergence / predication: lanes sit idle".into(),
        evidence: format!("{} of 32 lanes work per warp instruction", fmt_value(lanes)),
        fix: None,
    })
}
