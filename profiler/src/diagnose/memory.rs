//! The memory faults: bytes fetched and not used, bank conflicts, local memory, asynchronous
//! copies with too few stages; and the note on an L2-resident working set.

use super::{Kind, Outcome, Verdict, headroom, memory_busy};
use crate::fmt;
use crate::ncu::metrics::{self as m, Counters};

/// Uncoalesced when a warp uses fewer than this many bytes of every 32-byte sector it moves.
pub const MIN_BYTES_PER_SECTOR: f64 = 16.0;
/// Bank conflicts when shared-memory requests take more extra passes (ncu's bank-conflict
/// count: wavefronts beyond the access's minimum) than this on average.
pub const MAX_CONFLICTS_PER_REQUEST: f64 = 0.5;
/// Without the conflict counter: bank conflicts when requests take more passes than this on
/// average (right for 4-byte accesses; a 16-byte access needs 4 passes without any conflict).
pub const MAX_WAVEFRONTS_PER_REQUEST: f64 = 1.5;
/// Asynchronous copies are short of stages only while the memory SOL stays below this (%).
pub const ASYNC_MEMORY_PCT: f64 = 60.0;
/// Cache-resident: the warps read at least this many times what DRAM supplied ...
pub const CACHE_REUSE: f64 = 4.0;
/// ... in a kernel whose memory system is at least this busy (%): a kernel that computes
/// gains little from where its bytes come from.
pub const RESIDENT_MEMORY_PCT: f64 = 50.0;

pub(super) fn coalescing(c: &dyn Counters) -> Outcome {
    let (Some(ld), Some(st)) = (c.m(m::GLD_SECTORS), c.m(m::GST_SECTORS)) else {
        return Outcome::Silent;
    };
    // Sectors of every kind of global access: what the wasted ones are a share of.
    let traffic = ld + st;
    if traffic <= 0.0 {
        return Outcome::Clean;
    }
    let mut bad = Vec::new();
    let mut cost = 0.0;
    for (op, used, sectors, requests) in [
        ("loads", m::GLD_BYTES_PER_SECTOR, ld, m::GLD_REQ),
        ("stores", m::GST_BYTES_PER_SECTOR, st, m::GST_REQ),
    ] {
        // 0 bytes per sector is no measurement: the SASS-level counter sees LDG/STG only, and a
        // kernel that loads through cp.async (or stores nothing but an atomic) has none.
        let Some(b) = c.m(used).filter(|b| *b > 0.0) else {
            continue;
        };
        if b >= MIN_BYTES_PER_SECTOR || sectors <= 0.0 {
            continue;
        }
        let waste = 1.0 - b / 32.0;
        let share = sectors / traffic;
        cost += waste * share;
        let mut e = format!("global {op}: {} of 32 bytes used per sector", fmt::value(b));
        if let Some(s) = c.ratio(
            match op {
                "loads" => m::GLD_SECTORS,
                _ => m::GST_SECTORS,
            },
            requests,
        ) {
            e += &format!(", {} sectors/request", fmt::value(s));
        }
        e += &format!(", {} of the global sectors", fmt::share(share));
        bad.push(e);
    }
    if bad.is_empty() {
        return Outcome::Clean;
    }
    let busy = memory_busy(c).unwrap_or(1.0);
    Outcome::Found(Verdict::fault(
        "uncoalesced global access: bytes fetched and not used".into(),
        bad.join("; ") + " (coalesced 4-byte lanes: 32 bytes used, 4 sectors/request)",
        cost * busy,
    ))
}

pub(super) fn bank_conflicts(c: &dyn Counters) -> Outcome {
    let mut bad = Vec::new();
    let mut measured = false;
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
        // Requests counted (none, in a kernel without shared memory) is a measurement.
        if c.m(requests).is_some() {
            measured = true;
        }
        let Some(w) = c.ratio(wavefronts, requests) else {
            continue;
        };
        // ncu counts as conflicts the wavefronts beyond what the access needs at best (1 for
        // 4-byte lanes, 4 for 16-byte ones), so conflicts per request judge vector accesses
        // too; wavefronts per request only stand in when the counter was not collected.
        let extra = c.ratio(conflicts, requests);
        let conflicted = match extra {
            Some(x) => x > MAX_CONFLICTS_PER_REQUEST,
            None => w > MAX_WAVEFRONTS_PER_REQUEST,
        };
        if conflicted {
            let mut e = format!("shared {op}: {} wavefronts/request", fmt::value(w));
            if let (Some(n), Some(x)) = (c.m(conflicts), extra) {
                e += &format!(
                    ", {} conflicts ({} extra wavefronts/request)",
                    fmt::value(n),
                    fmt::value(x)
                );
            }
            bad.push(e);
        }
    }
    if !measured {
        return Outcome::Silent;
    }
    if bad.is_empty() {
        return Outcome::Clean;
    }
    // The conflicts' share of every pass through the banks, and how busy the banks are.
    let waste = c.ratio(m::SH_CONFLICTS, m::SH_WAVEFRONTS).unwrap_or(0.5);
    let busy = c
        .m(m::SHARED_PIPE_PCT)
        .or(c.m(m::L1_PCT))
        .map_or(0.5, |p| p / 100.0);
    Outcome::Found(Verdict::fault(
        "shared-memory bank conflicts".into(),
        format!(
            "{}; conflicts are {} of the shared wavefronts, the banks {} busy (conflict-free: 0 \
             extra, 1 wavefront/request for 4-byte lanes)",
            bad.join("; "),
            fmt::share(waste),
            fmt::share(busy)
        ),
        waste * busy,
    ))
}

pub(super) fn spills(c: &dyn Counters) -> Outcome {
    let (Some(ld), Some(st)) = (c.m(m::LOCAL_LD_BYTES), c.m(m::LOCAL_ST_BYTES)) else {
        return Outcome::Silent;
    };
    let local = ld + st;
    if local <= 0.0 {
        return Outcome::Clean;
    }
    let global = 32.0 * (c.m(m::GLD_SECTORS).unwrap_or(0.0) + c.m(m::GST_SECTORS).unwrap_or(0.0));
    let share = local / (local + global);
    let busy = c.m(m::L1_PCT).map_or(0.5, |p| p / 100.0);
    Outcome::Found(Verdict::fault(
        "local-memory traffic (register spills or a dynamically indexed array)".into(),
        format!(
            "{} bytes loaded, {} bytes stored from local memory: {} of the L1's global and local \
             bytes, the L1 {} busy{}",
            fmt::value(ld),
            fmt::value(st),
            fmt::share(share),
            fmt::share(busy),
            c.m(m::REGISTERS).map_or(String::new(), |x| format!(
                "; {} registers/thread",
                fmt::value(x)
            ))
        ),
        share * busy,
    ))
}

pub(super) fn async_stages(c: &dyn Counters) -> Outcome {
    let Some(copies) = c.m(m::LDGSTS_INST) else {
        return Outcome::Silent;
    };
    if copies <= 0.0 {
        return Outcome::Clean;
    }
    let (Some(mem), Some((reason, _, share)), Some(room)) =
        (c.m(m::MEM_PCT), c.dominant_stall(), headroom(c))
    else {
        return Outcome::Silent;
    };
    if mem >= ASYNC_MEMORY_PCT || !matches!(reason, "long_scoreboard" | "barrier") {
        return Outcome::Clean;
    }
    // A stage is waited for twice: its wait_group (long_scoreboard) and the barrier that
    // publishes it to the block. Both are the copy's latency showing; the memory left unused is
    // what overlapping the stages could fill.
    let waits =
        c.stall_share("long_scoreboard").unwrap_or(0.0) + c.stall_share("barrier").unwrap_or(0.0);
    Outcome::Found(Verdict::fault(
        "asynchronous copies without enough stages in flight".into(),
        format!(
            "{} cp.async (LDGSTS) instructions, yet the memory SOL is {} and waiting on the \
             copies and the barriers after them holds {} of the stalls ({reason} {}): the warps \
             wait for each copy instead of overlapping it with the next",
            fmt::value(copies),
            fmt::pct(mem),
            fmt::share(waits),
            fmt::share(share)
        ),
        room * waits,
    ))
}

/// The global accesses' share of the bytes the L1 moved for global and local memory (1 when
/// there is no local traffic, or it was not collected).
pub(super) fn global_share(c: &dyn Counters) -> f64 {
    let local = c.m(m::LOCAL_LD_BYTES).unwrap_or(0.0) + c.m(m::LOCAL_ST_BYTES).unwrap_or(0.0);
    let global = 32.0 * (c.m(m::GLD_SECTORS).unwrap_or(0.0) + c.m(m::GST_SECTORS).unwrap_or(0.0));
    if local + global <= 0.0 {
        1.0
    } else {
        global / (local + global)
    }
}

pub(super) fn l2_resident(c: &dyn Counters) -> Outcome {
    let (Some(sectors), Some(dram), Some(mem)) = (
        c.m(m::GLD_SECTORS),
        c.m(m::DRAM_READ_BYTES),
        c.m(m::MEM_PCT),
    ) else {
        return Outcome::Silent;
    };
    // What the warps asked for, and what DRAM had to supply: the rest were re-reads the
    // caches served (ncu flushed them before this pass, so none came from an earlier kernel).
    let requested = sectors * 32.0;
    let fits = c.m(m::L2_BYTES).is_none_or(|l2| dram < l2);
    if !(requested >= CACHE_REUSE * dram.max(1.0) && fits && mem >= RESIDENT_MEMORY_PCT) {
        return Outcome::Clean;
    }
    Outcome::Found(Verdict {
        kind: Kind::Note,
        verdict: "cache-resident working set: fast here, slower where neighbours evict it".into(),
        evidence: format!(
            "the warps read {} MB, DRAM supplied {} MB ({:.1}x re-read from L1/L2){}{}",
            fmt::value(requested / 1e6),
            fmt::value(dram / 1e6),
            requested / dram.max(1.0),
            c.m(m::L2_READ_HIT_PCT).map_or(String::new(), |h| format!(
                ", {} of L2 reads hit",
                fmt::pct(h)
            )),
            c.m(m::L2_BYTES).map_or(String::new(), |l2| format!(
                "; the DRAM reads fit in the {} MB L2",
                fmt::value(l2 / 1e6)
            ))
        ),
        fix: None,
        cost: None,
    })
}
