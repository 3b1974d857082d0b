//! The model: how long each measured roof says one launch of a catalogue kernel takes, from
//! what the launch does (its [`Counts`], `crate::kernels::counts`). No CUDA: `lab bench` puts a
//! prediction on every row with it, `lab run --predict` prints one without a GPU, `cargo xtask
//! compare` sets predicted against measured deltas, and `cargo xtask model-check` holds it to a
//! results file ([`check`]).
//!
//! # The rule
//! Each count divided by the rate of its [`Roof`] is that roof's time. The roofs overlap: a
//! launch takes the longest of them (its *bound*), plus the launch cost ([`RULE`]). Two pairs
//! cannot overlap:
//! - the L2 slice that holds the reductions' result word serves its share of the input stream
//!   *and* every block's `red`, one L2 cycle each, and a stream interleaved over all slices
//!   runs at the pace of its slowest slice; so [`Roof::ResultSlice`] is the stream's time plus
//!   one L2 cycle per `red`;
//! - a block that loads its elements into shared memory before its tree holds its slot on the
//!   SM through the load, so fewer blocks are in their trees at once than the SM holds;
//!   [`Roof::Slots`] is the tree at that occupancy ([`slots_ns_per_block`]).
//!
//! docs/model.md says why, with the measurements behind each.

pub mod check;

use crate::kernels::Kernel;
pub use crate::kernels::counts::{Counts, CountsFn, Problem, Size, blocks, resident_blocks_per_sm};
use crate::records::results::{Cache, Row};
use crate::roofs::LoadWait;
use crate::{Backend, Dtype, Roofs};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The rule every prediction follows, as the bench and `lab run --predict` print it.
pub const RULE: &str = "predicted = launches x launch time + the longest roof time \
     (each count / its measured rate; the roofs overlap), where the result word's L2 slice \
     (read+red) takes the stream's time plus one L2 cycle per red, and a tree whose blocks \
     first load (slots) runs at the occupancy their loads leave it (Little's law); each tree \
     is its own compiler's when the run measured it; the read, copy and \
     tile-order rates are the streams' at the row's own size when the run measured them \
     there (over their time less the launch), else at the largest size";

/// L2 cycles per `red.global.add.f32` in a chain of `red`s to one word (the fast slot), of
/// which one is the slice's atomic-input cycle: ncu on the H200, `lts__cycles_elapsed.max` ÷
/// `lts__t_requests_op_red.max` of reduce_v1 at 2^28 (docs/result-word.md). The measured
/// same-address roof divided by this is one L2 cycle.
pub const RED_CHAIN_L2_CYCLES: f64 = 3.10;

/// The result word's slice is a term of its own only when its reds add at least this share to
/// the stream's time: a one-wave reduction's thousand reds (under 1 µs) leave it the stream's.
pub const SLICE_SHARE: f64 = 0.05;

/// The mechanisms a launch can be bound by, each with a rate measured in the bench's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Roof {
    /// The host's launch call and the GPU's start of the kernel: added, never overlapped.
    Launch,
    /// Bytes read ÷ the read stream's rate (a kernel that writes nothing).
    Read,
    /// Bytes read + written ÷ the device-to-device copy's rate.
    Copy,
    /// Same-address `red`s × the measured time per `red` of a chain to one word (f32: the
    /// roof's `red` type).
    Atomic,
    /// The result word's L2 slice: the stream's time (read or copy) plus one L2 cycle per `red`.
    ResultSlice,
    /// L1 data-pipe wavefronts (shared memory's and coalesced global accesses') ÷ the
    /// measured shared-memory wavefront rate.
    Shared,
    /// L2 sectors of a scattering launch ÷ the measured rate of one-lane sector stores.
    Scatter,
    /// Bytes moved in the 32×32 tile order ÷ that order's measured rate (`tile_copy`).
    Tiles,
    /// Blocks × the time per block of the kernel's own tree run alone (`tree_v1` …): a roof
    /// of the kernel's code, not of the hardware.
    Tree,
    /// Blocks × the tree's time per block at the occupancy the blocks' loads leave it: each
    /// block holds its slot through its load (the `load_wait` roof), so fewer are in their
    /// trees at once ([`slots_ns_per_block`]).
    Slots,
    /// Blocks ÷ the measured rate of empty blocks.
    Blocks,
    /// FP32 instructions ÷ the FMA peak's instruction rate (half its FLOP rate).
    Fma,
}

impl Roof {
    /// `read`, `copy`, `atomic`, `read+red`, …: the bench's `bound` column.
    pub fn name(self) -> &'static str {
        match self {
            Roof::Launch => "launch",
            Roof::Read => "read",
            Roof::Copy => "copy",
            Roof::Atomic => "atomic",
            Roof::ResultSlice => "read+red",
            Roof::Shared => "shared",
            Roof::Scatter => "scatter",
            Roof::Tiles => "tiles",
            Roof::Tree => "tree",
            Roof::Slots => "slots",
            Roof::Blocks => "blocks",
            Roof::Fma => "fma",
        }
    }

    /// What the roof's rate is, for `--predict` and the check's header.
    pub fn about(self) -> &'static str {
        match self {
            Roof::Launch => "launch cost per kernel",
            Roof::Read => "read stream, bytes read per second",
            Roof::Copy => "D2D copy, bytes read + written per second",
            Roof::Atomic => "same-address red chain, ns per red",
            Roof::ResultSlice => "the result word's L2 slice: stream + one L2 cycle per red",
            Roof::Shared => "L1 data-pipe wavefronts (shared + global) per second",
            Roof::Scatter => "L2 sectors per second, stores one lane per sector",
            Roof::Tiles => "the 32x32 tile order's copy, bytes read + written per second",
            Roof::Tree => "the kernel's block tree run alone, ns per block",
            Roof::Slots => "the tree at the occupancy its blocks' loads leave it, ns per block",
            Roof::Blocks => "empty blocks per second",
            Roof::Fma => "FP32 FMA peak, FLOP per second",
        }
    }
}

impl std::fmt::Display for Roof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One roof's time for a launch.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Term {
    pub roof: Roof,
    pub seconds: f64,
}

/// A launch's predicted time and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub counts: Counts,
    /// The time of every roof the counts touch whose rate was measured, longest first.
    pub terms: Vec<Term>,
    /// The longest term: the roof the launch is predicted to be bound by.
    pub bound: Roof,
    /// Launches × the launch cost (0 when the launch roof was not measured: see `missing`).
    pub launch_s: f64,
    /// The prediction: the bound's time + `launch_s`.
    pub seconds: f64,
    /// Roofs the counts touch whose rate was not measured, so the prediction leaves them out.
    pub missing: Vec<Roof>,
}

impl Prediction {
    /// The predicted time, in µs.
    pub fn us(&self) -> f64 {
        self.seconds * 1e6
    }

    /// The bound's time, in seconds.
    pub fn bound_s(&self) -> f64 {
        self.terms.first().map_or(0.0, |t| t.seconds)
    }

    /// Predicted over measured, in percent: how close the launch ran to its bound (100: on it;
    /// above: faster than the model allows, so the model is wrong).
    pub fn pct_of(&self, measured_us: f64) -> f64 {
        self.us() / measured_us * 100.0
    }

    /// `read+red 318.2 us (read 232.7, atomic 237.2, …; launch 5.4)`: one line.
    pub fn describe(&self) -> String {
        let terms: Vec<String> = self
            .terms
            .iter()
            .map(|t| format!("{} {:.1}", t.roof, t.seconds * 1e6))
            .collect();
        let mut s = format!(
            "{} {:.1} us ({}; launch {:.1})",
            self.bound,
            self.us(),
            terms.join(", "),
            self.launch_s * 1e6
        );
        if !self.missing.is_empty() {
            let m: Vec<&str> = self.missing.iter().map(|r| r.name()).collect();
            s += &format!("; not measured: {}", m.join(", "));
        }
        s
    }
}

/// Whether the launch's prediction is within `within` (0.10: 10 %) of `measured_us`.
pub fn holds(predicted_us: f64, measured_us: f64, within: f64) -> bool {
    ((predicted_us - measured_us) / measured_us).abs() <= within
}

/// `kernel`'s counts for `p`, None for a kernel without counts (the roofs themselves, the
/// launch-gap demo).
pub fn counts(kernel: &Kernel, p: &Problem) -> Option<Counts> {
    kernel.counts.map(|f| f(kernel, p))
}

/// The prediction for one launch of `kernel` at `p` against `roofs`; None for a kernel
/// without counts, or when no roof its counts touch was measured.
pub fn predict(kernel: &Kernel, p: &Problem, roofs: &Roofs) -> Option<Prediction> {
    let c = counts(kernel, p)?;
    predict_counts(&c, p, roofs)
}

/// The prediction for one launch of `kernel` at `p` in a run whose rows are `rows`, for a
/// row with the L2 `cache`: [`predict`] against `roofs` with the read and copy roofs at the
/// launch's own size where the run measured the stream there ([`Roofs::at_size`]).
pub fn predict_in_run(
    kernel: &Kernel,
    p: &Problem,
    roofs: &Roofs,
    rows: &[Row],
    cache: Cache,
) -> Option<Prediction> {
    let c = counts(kernel, p)?;
    let at = roofs.at_size(rows, cache, c.read_bytes, c.footprint());
    predict_counts(&c, p, &at)
}

/// The prediction for `c`, the counts of a launch at `p`, against `roofs` (see [`predict`]).
pub fn predict_counts(c: &Counts, p: &Problem, roofs: &Roofs) -> Option<Prediction> {
    let dtype = p.dtype;
    let mut terms = Vec::new();
    let mut missing = Vec::new();
    let mut term = |roof: Roof, count: u64, per_second: Option<f64>| {
        if count == 0 {
            return;
        }
        match per_second.filter(|r| *r > 0.0) {
            Some(rate) => terms.push(Term {
                roof,
                seconds: count as f64 / rate,
            }),
            None => missing.push(roof),
        }
    };
    let stream = if c.written_bytes > 0 {
        term(Roof::Copy, c.footprint(), Some(roofs.copy_bytes_per_s));
        Roof::Copy
    } else {
        term(Roof::Read, c.read_bytes, Some(roofs.read_bytes_per_s));
        Roof::Read
    };
    // Each element type's chain of reds has its own rate.
    let chain_ns = match dtype {
        Dtype::F32 | Dtype::Bf16 => roofs.atomic_same_ns,
        Dtype::I32 | Dtype::U32 => roofs.atomic_same_i32_ns,
    };
    term(
        Roof::Atomic,
        c.same_address_reds,
        chain_ns.map(|ns| 1e9 / ns),
    );
    // A launch without shared memory gets no term: its coalesced wavefronts (one per 128
    // bytes, one per SM per clock) take an eighth of its stream's time or less.
    if c.shared_wavefronts > 0 {
        term(
            Roof::Shared,
            c.shared_wavefronts + c.global_wavefronts,
            roofs.shared_wavefronts_per_s,
        );
    }
    term(
        Roof::Scatter,
        c.scattered_sectors,
        roofs.scattered_store_sectors_per_s,
    );
    term(Roof::Tiles, c.tile_order_bytes, roofs.tile_copy_bytes_per_s);
    if let Some(tree) = c.tree {
        let entry = format!("{}_{}", tree.roof(), dtype.name());
        let curve = tree_curve(roofs, &entry, p.backend);
        // The tree alone at the launch's occupancy: its compiler's curve, else the fastest row.
        let alone = match curve {
            Some(curve) => Some(tree_ns_at(curve, c.resident_per_sm as f64)),
            None => roofs.tree_ns.get(&entry).copied(),
        };
        term(Roof::Tree, c.blocks, alone.map(|ns| 1e9 / ns));
        // A run without the occupancy rows or the load roof has no slots term (files written
        // before they were measured): the tree alone stands.
        if let (true, Some(curve), Some(load)) = (c.loads_before_tree, curve, roofs.load_wait) {
            let ns = slots_ns_per_block(curve, c.resident_per_sm, &load, p.sm_count);
            term(Roof::Slots, c.blocks, Some(1e9 / ns));
        }
    }
    term(Roof::Blocks, c.blocks, roofs.blocks_per_s);
    // The FMA peak counts two FLOPs per FMA; the pipes issue one FP32 instruction per lane.
    term(Roof::Fma, c.fp32_ops, Some(roofs.fma_flop_per_s / 2.0));
    // The result word's slice: the stream's share plus one L2 cycle per red, for either type
    // (one input cycle whatever the red adds). The cycle is the chain's time per red over its
    // cycles, from the chain without blocks retiring when the run measured it.
    if c.same_address_reds > 0 && c.footprint() > 0 {
        let stream_s = terms.iter().find(|t| t.roof == stream).map(|t| t.seconds);
        let chain = roofs.atomic_same_looped_ns.or(roofs.atomic_same_ns);
        match (stream_s, chain) {
            (Some(s), Some(ns)) => {
                let reds_s = c.same_address_reds as f64 * ns * 1e-9 / RED_CHAIN_L2_CYCLES;
                if reds_s >= SLICE_SHARE * s {
                    terms.push(Term {
                        roof: Roof::ResultSlice,
                        seconds: s + reds_s,
                    });
                }
            }
            _ => missing.push(Roof::ResultSlice),
        }
    }
    // A row times each sample with one pair of events, so each launch costs what one launch
    // timed alone does, not the back-to-back figure (when the run measured it).
    let launch_s = match roofs.launch_cost_s() {
        Some(l) => l * c.launches as f64,
        None => {
            missing.push(Roof::Launch);
            0.0
        }
    };
    terms.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    let bound = terms.first()?;
    Some(Prediction {
        counts: *c,
        bound: bound.roof,
        seconds: bound.seconds + launch_s,
        terms,
        launch_s,
        missing,
    })
}

/// Tree `entry`'s times per block by resident blocks per SM: `backend`'s when the run held its
/// tree to several occupancies, else the curve of the compiler fastest at its fullest.
fn tree_curve<'a>(
    roofs: &'a Roofs,
    entry: &str,
    backend: Option<Backend>,
) -> Option<&'a BTreeMap<u32, f64>> {
    let by_backend = roofs.tree_resident_ns.get(entry)?;
    backend
        .and_then(|b| by_backend.get(b.name()))
        .or_else(|| {
            let fullest =
                |c: &BTreeMap<u32, f64>| c.last_key_value().map_or(f64::MAX, |(_, ns)| *ns);
            by_backend
                .values()
                .min_by(|a, b| fullest(a).total_cmp(&fullest(b)))
        })
        .filter(|c| !c.is_empty())
}

/// A block's time in its tree with `r` blocks in theirs on each SM, over the SM count: by
/// Little's law r × τ(r), where τ is the curve's time per block (chip-wide) at that
/// occupancy. Linear in r between measured occupancies; above the highest, τ stays; below the
/// lowest, the block's time in its tree stays (it takes no less than it did there).
fn tree_resident_time(curve: &BTreeMap<u32, f64>, r: f64) -> f64 {
    let w = |(&k, &ns): (&u32, &f64)| (k as f64, k as f64 * ns);
    let points: Vec<(f64, f64)> = curve.iter().map(w).collect();
    let (first, last) = (points[0], points[points.len() - 1]);
    if r <= first.0 {
        return first.1;
    }
    if r >= last.0 {
        return r * last.1 / last.0;
    }
    let i = points
        .iter()
        .position(|p| p.0 >= r)
        .unwrap_or(points.len() - 1);
    let (a, b) = (points[i - 1], points[i]);
    a.1 + (b.1 - a.1) * (r - a.0) / (b.0 - a.0)
}

/// The curve's time per block (chip-wide ns) with `r` blocks in their trees on each SM.
fn tree_ns_at(curve: &BTreeMap<u32, f64>, r: f64) -> f64 {
    tree_resident_time(curve, r) / r
}

/// Nanoseconds per block (chip-wide) of a tree whose blocks, `resident` to an SM, each first
/// hold their slot for `load`'s slot time L (Little's law over the slots): with the SM
/// retiring X blocks per ns, X·L slots wait on loads and r = resident − X·L blocks are in
/// their trees, where the tree alone at occupancy r retires X = 1 / (SMs · τ(r)). Solved for r
/// by bisection (r + X(r)·L grows with r); the answer is τ(r).
pub fn slots_ns_per_block(
    curve: &BTreeMap<u32, f64>,
    resident: u32,
    load: &LoadWait,
    sm_count: u32,
) -> f64 {
    let (sms, slots, l) = (
        sm_count.max(1) as f64,
        resident.max(1) as f64,
        load.slot_ns(sm_count),
    );
    // Blocks per ns per SM with r in their trees: r over a block's time in its tree.
    let x = |r: f64| 1.0 / (sms * tree_ns_at(curve, r));
    let (mut lo, mut hi) = (1e-6, slots);
    for _ in 0..100 {
        let r = 0.5 * (lo + hi);
        if r + x(r) * l > slots {
            hi = r;
        } else {
            lo = r;
        }
    }
    tree_ns_at(curve, lo)
}

#[cfg(test)]
mod tests;
