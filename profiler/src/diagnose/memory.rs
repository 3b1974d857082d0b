//! The memory faults: bytes fetched and not used, bank conflicts, local memory, asynchronous
//! copies with too few stages; and the note on an L2-resident working set.

use super::units::{self, Unit};
use super::{Kind, Outcome, Verdict, headroom};
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

/// The bytes each memory level moved for the kernel's global accesses, and the least it could
/// have moved: the bytes the threads asked for (sectors partly used at the L1; the same data
/// fetched again from the L2 or DRAM). A level that moves bytes beyond that minimum wastes its
/// bandwidth only where it binds: an L1 that re-serves partly used sectors from its own lines
/// costs nothing while DRAM paces the kernel.
struct Excess {
    /// Requested bytes over moved bytes, per level (1 = nothing wasted).
    l1: f64,
    l2: f64,
    dram: f64,
    evidence: Vec<String>,
}

fn excess(c: &dyn Counters) -> Option<Excess> {
    // Loads through cp.async or the tensor memory accelerator, and texture fetches, ask for
    // bytes no SASS-level counter reports: such a kernel's loads are not weighed.
    let hidden = [m::LDGSTS_INST, m::TMA_LD_INST, m::TEX_INST]
        .iter()
        .any(|n| c.m(n).is_some_and(|x| x > 0.0));
    let local_ld = c.m(m::LOCAL_LD_BYTES).unwrap_or(0.0);
    let local_st = c.m(m::LOCAL_ST_BYTES).unwrap_or(0.0);
    let ld = c.m(m::GLD_DATA_BYTES).filter(|b| *b > 0.0 && !hidden);
    let st = c
        .m(m::GST_DATA_BYTES)
        .filter(|b| *b > 0.0 && c.m(m::TMA_ST_INST).is_none_or(|x| x <= 0.0));
    if ld.is_none() && st.is_none() {
        return None;
    }
    // Each direction's bytes asked and moved per level, added over the directions weighed.
    let mut asked = 0.0;
    let (mut l1, mut l2, mut dram) = (0.0, 0.0, 0.0);
    if let Some(ld) = ld {
        asked += ld + local_ld;
        l1 += 32.0 * c.m(m::GLD_SECTORS).unwrap_or(0.0) + local_ld;
        // What the L1 missed is what it asked the L2 for, where the L2's count is missing.
        l2 += 32.0
            * c.m(m::L2_READ_SECTORS)
                .or(c.m(m::GLD_MISS_SECTORS))
                .unwrap_or(0.0);
        dram += c.m(m::DRAM_READ_BYTES).unwrap_or(0.0);
    }
    if let Some(st) = st {
        asked += st + local_st;
        l1 += 32.0 * c.m(m::GST_SECTORS).unwrap_or(0.0) + local_st;
        // Stores write through the L1: each sector it takes is a sector the L2 takes.
        l2 += 32.0
            * c.m(m::L2_WRITE_SECTORS)
                .or(c.m(m::GST_SECTORS))
                .unwrap_or(0.0);
        dram += c.m(m::DRAM_WRITE_BYTES).unwrap_or(0.0);
    }
    let used = |moved: f64| if moved > asked { asked / moved } else { 1.0 };
    let mut evidence = vec![format!(
        "the threads asked for {} MB of global {}",
        fmt::value(asked / 1e6),
        match (ld, st) {
            (Some(_), Some(_)) => "loads and stores",
            (Some(_), None) => "loads",
            _ => "stores",
        }
    )];
    for (level, moved) in [("the L1", l1), ("the L2", l2), ("DRAM", dram)] {
        if moved > 0.0 {
            evidence.push(format!(
                "{level} moved {} MB ({:.2}x)",
                fmt::value(moved / 1e6),
                moved / asked
            ));
        }
    }
    Some(Excess {
        l1: used(l1),
        l2: used(l2),
        dram: used(dram),
        evidence,
    })
}

pub(super) fn coalescing(c: &dyn Counters) -> Outcome {
    let Some(x) = excess(c) else {
        return if c.m(m::GLD_DATA_BYTES).is_none() {
            Outcome::Silent(m::GLD_DATA_BYTES)
        } else {
            Outcome::Clean
        };
    };
    let per_sector = c.m(m::GLD_BYTES_PER_SECTOR).filter(|b| *b > 0.0);
    let partial = per_sector.is_some_and(|b| b < MIN_BYTES_PER_SECTOR) || x.l1 < 0.5;
    let beyond = x.l2.min(x.dram) < 0.5;
    if !partial && !beyond {
        return Outcome::Clean;
    }
    // What the fix removes: each level's bytes beyond what the threads asked for.
    let scale = |u: Unit| match u {
        Unit::L1 => x.l1,
        Unit::L2 => x.l2,
        Unit::Dram => x.dram,
        _ => 1.0,
    };
    let cost = units::saving(c, scale).unwrap_or_else(|| {
        // Paced by no unit: each wasted sector lengthens the wait for the request that
        // fetched it.
        let waits = c.stall_share("long_scoreboard").unwrap_or(0.0);
        headroom(c).unwrap_or(0.0) * waits * (1.0 - x.l2.min(x.l1))
    });
    let mut evidence = x.evidence.join(", ");
    if let Some(b) = per_sector {
        evidence += &format!(
            "; global loads use {} of the 32 bytes of each sector they touch",
            fmt::value(b)
        );
    }
    if let Some(s) = c.ratio(m::GLD_SECTORS, m::GLD_REQ) {
        evidence += &format!(", {} sectors/request", fmt::value(s));
    }
    evidence += &format!("; busiest units: {}", units::busiest_text(c, 3));
    let verdict = if beyond {
        "uncoalesced global access: bytes fetched and not used"
    } else {
        "uncoalesced global access: partly used sectors re-served by the L1"
    };
    Outcome::Found(Verdict::fault(verdict.into(), evidence, cost))
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
        return Outcome::Silent(m::SH_LD_REQ);
    }
    if bad.is_empty() {
        return Outcome::Clean;
    }
    // The conflicts' share of every pass through the banks, and how busy the banks are. Where
    // a unit paces the kernel, the passes cost only if the L1/shared is that unit.
    let waste = c.ratio(m::SH_CONFLICTS, m::SH_WAVEFRONTS).unwrap_or(0.5);
    let busy = c
        .m(m::SHARED_PIPE_PCT)
        .or(c.m(m::L1_PCT))
        .map_or(0.5, |p| p / 100.0);
    let cost =
        units::saving(c, |u| if u == Unit::L1 { 1.0 - waste } else { 1.0 }).unwrap_or(waste * busy);
    Outcome::Found(Verdict::fault(
        "shared-memory bank conflicts".into(),
        format!(
            "{}; conflicts are {} of the shared wavefronts, the banks {} busy (conflict-free: 0 \
             extra, 1 wavefront/request for 4-byte lanes)",
            bad.join("; "),
            fmt::share(waste),
            fmt::share(busy)
        ),
        cost,
    ))
}

pub(super) fn spills(c: &dyn Counters) -> Outcome {
    let (Some(ld), Some(st)) = (c.m(m::LOCAL_LD_BYTES), c.m(m::LOCAL_ST_BYTES)) else {
        return Outcome::Silent(m::LOCAL_LD_BYTES);
    };
    let local = ld + st;
    if local <= 0.0 {
        return Outcome::Clean;
    }
    let global = 32.0 * (c.m(m::GLD_SECTORS).unwrap_or(0.0) + c.m(m::GST_SECTORS).unwrap_or(0.0));
    let share = local / (local + global);
    let busy = c.m(m::L1_PCT).map_or(0.5, |p| p / 100.0);
    // Two ways spills cost: the L1 bandwidth their bytes take, and, where no unit paces the
    // kernel, the waits on local loads (the long scoreboard, shared with global loads by the
    // bytes each moved).
    let waits = c.stall_share("long_scoreboard").unwrap_or(0.0);
    let latency = if units::paced(c) {
        0.0
    } else {
        headroom(c).unwrap_or(0.0) * waits * share
    };
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
                "; {} registers/thread; the warps wait on memory {} of their stalled states",
                fmt::value(x),
                fmt::share(waits)
            ))
        ),
        (share * busy).max(latency),
    ))
}

pub(super) fn async_stages(c: &dyn Counters) -> Outcome {
    let Some(copies) = c.m(m::LDGSTS_INST) else {
        return Outcome::Silent(m::LDGSTS_INST);
    };
    if copies <= 0.0 {
        return Outcome::Clean;
    }
    let (Some(mem), Some((reason, _, share)), Some(room)) =
        (c.m(m::MEM_PCT), c.dominant_stall(), headroom(c))
    else {
        return Outcome::Silent(m::MEM_PCT);
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
    // What the L2 served the SMs (an L1 that re-serves its own lines is no L2 reuse), and
    // what DRAM had to supply: the rest were re-reads the L2 served (ncu flushed it before
    // this pass, so none came from an earlier kernel).
    let l2_reads = c
        .m(m::L2_READ_SECTORS)
        .or(c.m(m::GLD_MISS_SECTORS))
        .or(c.m(m::GLD_SECTORS));
    let (Some(sectors), Some(dram), Some(mem)) =
        (l2_reads, c.m(m::DRAM_READ_BYTES), c.m(m::MEM_PCT))
    else {
        return Outcome::Silent(m::DRAM_READ_BYTES);
    };
    let requested = sectors * 32.0;
    let fits = c.m(m::L2_BYTES).is_none_or(|l2| dram < l2);
    if !(requested >= CACHE_REUSE * dram.max(1.0) && fits && mem >= RESIDENT_MEMORY_PCT) {
        return Outcome::Clean;
    }
    Outcome::Found(Verdict {
        kind: Kind::Note,
        verdict: "cache-resident working set: fast here, slower where neighbours evict it".into(),
        evidence: format!(
            "the L2 served {} MB, DRAM supplied {} MB ({:.1}x re-read from the L2){}{}",
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
