//! The measured roofs of one bench run: the rates the lab's kernels can be bound by, each
//! measured by a small ceiling kernel in the same run as the rows it bounds, and read back from
//! those rows ([`Roofs::from_rows`]). The record they are written as ([`Roofs`]) is the results
//! file's (`crate::records::roofs`); here are the roof kernels' names and the rules that read
//! each roof off its rows.

use crate::Dtype;
use crate::records::results::{Cache, Row, Status};
pub use crate::records::roofs::{LoadWait, Roofs};
use std::collections::BTreeMap;

/// The roof kernels' catalogue names (`catalog::kernels`), which are also their rows' names in
/// the bench.
pub const ATOMIC_SAME: &str = "atomic_same";
pub const ATOMIC_SPREAD: &str = "atomic_spread";
pub const SHARED_RW: &str = "shared_rw";
pub const EMPTY_BLOCKS: &str = "empty_blocks";
pub const SCATTER_STORE: &str = "scatter_store";
pub const TILE_COPY: &str = "tile_copy";
/// The reductions' block trees alone (`catalog::kernels::Tree`).
pub const TREE_V1: &str = "tree_v1";
pub const TREE_V2: &str = "tree_v2";
pub const TREE_V3: &str = "tree_v3";
pub const TREE_V5: &str = "tree_v5";
/// Every tree roof.
pub const TREES: [&str; 4] = [TREE_V1, TREE_V2, TREE_V3, TREE_V5];
/// The reductions' load phase alone (one element per thread into shared memory, a barrier),
/// and its row without the load (`n = 0` to the kernel: the same block, nothing loaded).
pub const LOAD_WAIT: &str = "load_wait";
pub const LOAD_WAIT_BASE: &str = "load_wait_base";
/// The row of [`ATOMIC_SAME`] launched as one wave of blocks that each loop (barrier, `red`):
/// the same `red`s with no block retiring between them.
pub const ATOMIC_SAME_LOOPED: &str = "atomic_same_looped";
/// The row of [`EMPTY_BLOCKS`] launched with one block, each launch timed alone by its pair
/// of events: what one launch costs a timed row.
pub const EMPTY_LAUNCH: &str = "empty_launch";

/// The existing ceilings' row names.
pub const READ_STREAM: &str = "read_stream";
pub const D2D_COPY: &str = "d2d_copy";
pub const FMA_PEAK: &str = "fma_peak";
/// The launch-gap demo's back-to-back row: 1000 launches queued, one synchronize.
pub const BACK_TO_BACK: &str = "bump_back_to_back";

/// The ceilings [`Roofs::from_rows`] requires, by field name.
const CEILINGS: [&str; 3] = ["read_bytes_per_s", "copy_bytes_per_s", "fma_flop_per_s"];

/// Where each roof [`Roofs::measure`] found came from, keyed by its field's name in
/// [`Roofs`] (as the results record spells it): the row it was read from, or the rule.
pub type Origins = BTreeMap<&'static str, String>;

/// Read-stream rows up to this many elements move so little that their time is a timed
/// launch's (the timed launch of a file without an `empty_launch` row).
pub const LAUNCH_PROBE_MAX_N: u64 = 1 << 16;
/// Sizes of such rows needed before their median is taken as the timed launch.
pub const LAUNCH_PROBE_SIZES: usize = 3;

impl Roofs {
    /// The roofs measured by `rows` with the L2 `cache` (the other cache's rows are ignored);
    /// None unless the three ceilings every run of the reductions has (read stream, D2D copy,
    /// FMA peak) are among them. `atomic_same_slot` is left for the caller, which knows the
    /// word; `sm_clock_hz` is the clock to state with the per-cycle figures.
    pub fn from_rows(rows: &[Row], cache: Cache, sm_clock_hz: Option<f64>) -> Option<Roofs> {
        let (roofs, from) = Roofs::measure(rows, cache, sm_clock_hz);
        CEILINGS
            .iter()
            .all(|f| from.contains_key(f))
            .then_some(roofs)
    }

    /// Every roof `rows` measure with the L2 `cache`, whichever are among them (a ceiling not
    /// measured is 0, any other roof None), and where each came from ([`Origins`]).
    ///
    /// The timed launch is the `empty_launch` row's; a file without one (written before it
    /// was measured) takes the median of the per-size best `read_stream` times at sizes up to
    /// [`LAUNCH_PROBE_MAX_N`] when at least [`LAUNCH_PROBE_SIZES`] such sizes were measured:
    /// a timed launch that moves almost nothing.
    pub fn measure(rows: &[Row], cache: Cache, sm_clock_hz: Option<f64>) -> (Roofs, Origins) {
        let ok: Vec<&Row> = rows
            .iter()
            .filter(|r| r.cache == cache && r.status == Status::Ok)
            .collect();
        let named = |name: &'static str| ok.iter().copied().filter(move |r| r.kernel == name);
        // The best rate among the rows of the largest amount of work, with its row.
        let best_of_largest =
            |name: &'static str, size: fn(&Row) -> u64, rate: fn(&Row) -> Option<f64>| {
                let largest = named(name).map(size).max()?;
                named(name)
                    .filter(|r| size(r) == largest)
                    .filter_map(|r| Some((r, rate(r)?)))
                    .max_by(|a, b| a.1.total_cmp(&b.1))
            };
        // Operations per second of the fastest row of a roof (of one element type, when the
        // roof has one per type), with its row.
        let typed_per_s = |name: &'static str, dtype: Option<Dtype>| {
            named(name)
                .filter(move |r| dtype.is_none_or(|d| r.dtype == d))
                .filter_map(|r| Some((r, r.n as f64 / (r.median_us? * 1e-6))))
                .filter(|(_, x)| x.is_finite() && *x > 0.0)
                .max_by(|a, b| a.1.total_cmp(&b.1))
        };
        let per_s = |name: &'static str| typed_per_s(name, None);
        // The smallest per-row figure of a roof (a time), with its row.
        let least = |name: &'static str, of: fn(&Row) -> Option<f64>| {
            named(name)
                .filter_map(|r| Some((r, of(r)?)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
        };
        let mut from = Origins::new();
        let mut note = |field: &'static str, row: &Row, how: &str| {
            from.insert(field, format!("{}{how}", row.label()));
        };
        let largest = ", the best at the largest size";
        let fastest = ", the fastest row";
        let read = best_of_largest(READ_STREAM, |r| r.n, |r| r.gbps);
        let copy = best_of_largest(D2D_COPY, |r| r.bytes, |r| r.gbps);
        let fma = named(FMA_PEAK)
            .filter_map(|r| Some((r, r.gflops?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        // Each `red` type has its own chain.
        let atomic_same = typed_per_s(ATOMIC_SAME, Some(Dtype::F32));
        let atomic_same_i32 = typed_per_s(ATOMIC_SAME, Some(Dtype::I32));
        let tile = best_of_largest(TILE_COPY, |r| r.bytes, |r| r.gbps);
        let spread = per_s(ATOMIC_SPREAD);
        let shared = per_s(SHARED_RW);
        let blocks = per_s(EMPTY_BLOCKS);
        let scatter = per_s(SCATTER_STORE);
        let looped = per_s(ATOMIC_SAME_LOOPED);
        let launch = least(BACK_TO_BACK, |r| r.us_per_launch);
        let timed = least(EMPTY_LAUNCH, |r| r.median_us);
        for (field, got, how) in [
            ("read_bytes_per_s", read, largest),
            ("copy_bytes_per_s", copy, largest),
            ("fma_flop_per_s", fma, ""),
            ("atomic_same_ns", atomic_same, fastest),
            ("atomic_same_i32_ns", atomic_same_i32, fastest),
            ("tile_copy_bytes_per_s", tile, largest),
            ("atomic_spread_per_s", spread, fastest),
            ("shared_wavefronts_per_s", shared, fastest),
            ("blocks_per_s", blocks, fastest),
            ("scattered_store_sectors_per_s", scatter, fastest),
            ("atomic_same_looped_ns", looped, fastest),
            (
                "launch_s",
                launch,
                ", per launch of those queued back to back",
            ),
            (
                "timed_launch_s",
                timed,
                ", one event-timed launch of one empty block",
            ),
        ] {
            if let Some((row, _)) = got {
                note(field, row, how);
            }
        }
        let rate = |got: Option<(&Row, f64)>| got.map(|(_, x)| x);
        // Each tree in each type: the fastest backend's time per block at the occupancy the
        // tree gets (the most resident blocks its rows state; rows held to fewer are left to
        // `tree_resident_ns`).
        let mut tree_ns = BTreeMap::new();
        for name in TREES {
            let full = named(name).filter_map(|r| r.resident).max();
            for dtype in Dtype::SUMMED {
                let best = named(name)
                    .filter(|r| r.dtype == dtype && r.resident == full)
                    .filter_map(|r| ns_per(r, r.n))
                    .min_by(f64::total_cmp);
                if let Some(ns) = best {
                    tree_ns.insert(format!("{name}_{dtype}"), ns);
                }
            }
        }
        if !tree_ns.is_empty() {
            from.insert(
                "tree_ns",
                "the fastest row of each tree roof in each type, at the occupancy it gets".into(),
            );
        }
        // Each tree at each occupancy it was held to, per compiler (the rows that state one).
        let mut tree_resident_ns: BTreeMap<String, BTreeMap<String, BTreeMap<u32, f64>>> =
            BTreeMap::new();
        for name in TREES {
            for r in named(name) {
                let (Some(resident), Some(ns)) = (r.resident, ns_per(r, r.n)) else {
                    continue;
                };
                let at = tree_resident_ns
                    .entry(format!("{name}_{}", r.dtype))
                    .or_default()
                    .entry(r.backend.name().to_string())
                    .or_default()
                    .entry(resident)
                    .or_insert(ns);
                *at = at.min(ns);
            }
        }
        if !tree_resident_ns.is_empty() {
            from.insert(
                "tree_resident_ns",
                "each tree roof's rows that state their blocks per SM, per compiler".into(),
            );
        }
        // The load's pair on the compiler whose load costs the least.
        let blocks_of = |r: &Row| r.n.div_ceil(crate::launch::reduce::BLOCK as u64);
        let load_wait = named(LOAD_WAIT)
            .filter_map(|load| {
                let resident = load.resident?;
                let base = named(LOAD_WAIT_BASE)
                    .find(|b| b.backend == load.backend && b.resident == Some(resident))?;
                Some((
                    load,
                    LoadWait {
                        resident,
                        load_ns: ns_per(load, blocks_of(load))?,
                        base_ns: ns_per(base, blocks_of(base))?,
                    },
                ))
            })
            .min_by(|a, b| {
                let d = |w: &LoadWait| w.load_ns - w.base_ns;
                d(&a.1).total_cmp(&d(&b.1))
            });
        if let Some((row, _)) = load_wait {
            let how = format!("{}, with its {LOAD_WAIT_BASE} row", row.label());
            from.insert("load_wait", how);
        }
        let mut timed_launch_s = rate(timed).map(|us| us * 1e-6);
        if timed_launch_s.is_none() {
            let mut per_size: BTreeMap<u64, f64> = BTreeMap::new();
            for r in named(READ_STREAM).filter(|r| r.n <= LAUNCH_PROBE_MAX_N) {
                if let Some(us) = r.median_us {
                    let e = per_size.entry(r.n).or_insert(us);
                    *e = e.min(us);
                }
            }
            if per_size.len() >= LAUNCH_PROBE_SIZES {
                let mut us: Vec<f64> = per_size.into_values().collect();
                us.sort_by(f64::total_cmp);
                timed_launch_s = Some(us[us.len() / 2] * 1e-6);
                from.insert(
                    "timed_launch_s",
                    format!(
                        "median of the best read_stream per size at {} sizes up to 2^{} \
                         elements (a timed launch that moves at most {} KiB)",
                        us.len(),
                        LAUNCH_PROBE_MAX_N.trailing_zeros(),
                        LAUNCH_PROBE_MAX_N * 4 / 1024
                    ),
                );
            }
        }
        let roofs = Roofs {
            read_bytes_per_s: rate(read).map_or(0.0, |g| g * 1e9),
            copy_bytes_per_s: rate(copy).map_or(0.0, |g| g * 1e9),
            fma_flop_per_s: rate(fma).map_or(0.0, |g| g * 1e9),
            atomic_same_ns: rate(atomic_same).map(|x| 1e9 / x),
            atomic_same_i32_ns: rate(atomic_same_i32).map(|x| 1e9 / x),
            atomic_same_slot: None,
            atomic_spread_per_s: rate(spread),
            shared_wavefronts_per_s: rate(shared),
            blocks_per_s: rate(blocks),
            launch_s: rate(launch).map(|us| us * 1e-6),
            scattered_store_sectors_per_s: rate(scatter),
            sm_clock_hz,
            atomic_same_looped_ns: rate(looped).map(|x| 1e9 / x),
            timed_launch_s,
            tile_copy_bytes_per_s: rate(tile).map(|g| g * 1e9),
            tree_ns,
            tree_resident_ns,
            load_wait: load_wait.map(|(_, w)| w),
        };
        (roofs, from)
    }

    /// These roofs for one launch that reads `read_bytes` and moves `moved_bytes` (read +
    /// written), with the L2 `cache`: the read roof is the fastest `read_stream` row of
    /// `rows` that read exactly `read_bytes`, and the copy and tile-order roofs the fastest
    /// `d2d_copy` and `tile_copy` rows that moved exactly `moved_bytes`, each as a rate over
    /// its time less the launch cost
    /// ([`Roofs::launch_cost_s`]), so that launch + bytes ÷ rate is that row's own time: a
    /// short stream's ramp and tail are in its rate. A size the run did not measure keeps the
    /// largest size's roof.
    pub fn at_size(&self, rows: &[Row], cache: Cache, read_bytes: u64, moved_bytes: u64) -> Roofs {
        let launch_s = self.launch_cost_s().unwrap_or(0.0);
        let fastest = |name: &str, bytes: u64| {
            rows.iter()
                .filter(|r| r.kernel == name && r.cache == cache && r.status == Status::Ok)
                .filter(|r| bytes > 0 && r.bytes == bytes)
                .filter_map(|r| {
                    let s = r.median_us? * 1e-6 - launch_s;
                    (s > 0.0).then(|| bytes as f64 / s)
                })
                .max_by(f64::total_cmp)
        };
        let mut at = self.clone();
        if let Some(rate) = fastest(READ_STREAM, read_bytes) {
            at.read_bytes_per_s = rate;
        }
        if let Some(rate) = fastest(D2D_COPY, moved_bytes) {
            at.copy_bytes_per_s = rate;
        }
        if let Some(rate) = fastest(TILE_COPY, moved_bytes) {
            at.tile_copy_bytes_per_s = Some(rate);
        }
        at
    }
}

/// Nanoseconds per unit of `row`'s median over `units` (a block, a `red`).
fn ns_per(row: &Row, units: u64) -> Option<f64> {
    let us = row.median_us.filter(|&us| us > 0.0 && units > 0)?;
    Some(us * 1e3 / units as f64)
}

/// A roof row's rate, for its note in the table (`1.812 ns per red`, `3.21 G blocks/s`); None
/// for any other row and for a row without a time.
pub fn rate(row: &Row) -> Option<String> {
    let us = row.median_us.filter(|&us| us > 0.0 && row.n > 0)?;
    let per_s = row.n as f64 / (us * 1e-6) / 1e9;
    let name = row.kernel.as_str();
    Some(match name {
        ATOMIC_SAME | ATOMIC_SAME_LOOPED => format!("{:.3} ns per red", 1.0 / per_s),
        ATOMIC_SPREAD => format!("{per_s:.1} G reds/s"),
        SHARED_RW => format!("{per_s:.1} G wavefronts/s"),
        EMPTY_BLOCKS => format!("{per_s:.2} G blocks/s"),
        SCATTER_STORE => format!("{per_s:.1} G sectors/s"),
        TILE_COPY => format!("{:.0} GB/s moved", row.bytes as f64 / (us * 1e-6) / 1e9),
        name if TREES.contains(&name) => format!("{:.3} ns per block", 1.0 / per_s),
        LOAD_WAIT | LOAD_WAIT_BASE => {
            let blocks = row.n.div_ceil(crate::launch::reduce::BLOCK as u64);
            format!("{:.3} ns per block", ns_per(row, blocks)?)
        }
        EMPTY_LAUNCH => format!("{:.2} µs per timed launch", us / row.n as f64),
        _ => return None,
    })
}

/// Whether `name` is a roof row's kernel (the catalogue's roofs, the looped same-address row
/// and the timed empty launch).
pub fn is_roof(name: &str) -> bool {
    [
        ATOMIC_SAME,
        ATOMIC_SAME_LOOPED,
        ATOMIC_SPREAD,
        SHARED_RW,
        EMPTY_BLOCKS,
        EMPTY_LAUNCH,
        SCATTER_STORE,
        TILE_COPY,
        LOAD_WAIT,
        LOAD_WAIT_BASE,
    ]
    .contains(&name)
        || TREES.contains(&name)
}

#[cfg(test)]
mod tests;
