//! The model held to a results file: every reduction at 2^24, 2^26, 2^28 and 2^30 and every
//! transpose at 4096², 8192² and 16384², on every backend, predicted against measured
//! (`cargo xtask model-check FILE`). A row within [`WITHIN`] of its prediction holds; any
//! other is a miss, listed, and explained in docs/experiments.md.
//!
//! The roofs come from the file: its `roofs` record when the run measured them, else what its
//! rows show ([`Roofs::measure`]: in files written before the roofs were measured, the read
//! stream, the D2D copy, the FMA peak, and a timed launch from the smallest read-stream rows). Roofs neither measured can be [`Assumed`] from a JSON file that names
//! each value's source; every value's origin is printed with the table ([`Source`]).

use super::{Prediction, Problem, Roof, Size, holds, predict_in_run};
use crate::Family;
use crate::Roofs;
use crate::kernels::find;
use crate::records::results::{Cache, Report, Row, Status};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Reduction sizes the check covers.
pub const REDUCE_SIZES: [u64; 4] = [1 << 24, 1 << 26, 1 << 28, 1 << 30];
/// Transpose edges the check covers (square matrices).
pub const TRANSPOSE_EDGES: [u32; 3] = [4096, 8192, 16384];
/// A prediction within this fraction of the measured median holds.
pub const WITHIN: f64 = 0.10;

/// The `(kernel, problem)` a results row measured, when the catalogue has the kernel.
pub fn problem_of(row: &Row, sm_count: u32) -> Option<(&'static crate::Kernel, Problem)> {
    let kernel = find(&row.kernel)?;
    let dtype = Some(row.dtype).filter(|d| d.instantiated())?;
    let size = Size::of_label(&row.size, row.n)?;
    Some((
        kernel,
        Problem {
            dtype,
            size,
            sm_count,
            backend: row.backend.backend(),
        },
    ))
}

/// Where one roof's value came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Source {
    pub roof: Roof,
    /// `4615 GB/s`, `1.81 ns`.
    pub value: String,
    /// `read_stream [nvvm] f32 2^30 in this file`, or the assumption's own source.
    pub from: String,
    /// Measured in the file's run (false: assumed for an offline check).
    pub measured: bool,
}

/// Roof values and where each came from.
#[derive(Clone, Debug, PartialEq)]
pub struct RoofSet {
    pub roofs: Roofs,
    pub sources: Vec<Source>,
}

fn gbs(v: f64) -> String {
    format!("{:.0} GB/s", v / 1e9)
}

/// Each roof the model reads that `r` holds: its field's name in [`Roofs`], the roof, and its
/// value as the table shows it. The launch is the one the model charges
/// ([`Roofs::launch_cost_s`]).
fn shown(r: &Roofs) -> Vec<(&'static str, Roof, String)> {
    let positive = |v: f64| (v > 0.0).then_some(v);
    let launch = match (r.timed_launch_s, r.launch_s) {
        (Some(s), _) => Some(("timed_launch_s", s)),
        (None, Some(s)) => Some(("launch_s", s)),
        (None, None) => None,
    };
    [
        (
            "read_bytes_per_s",
            Roof::Read,
            positive(r.read_bytes_per_s).map(gbs),
        ),
        (
            "copy_bytes_per_s",
            Roof::Copy,
            positive(r.copy_bytes_per_s).map(gbs),
        ),
        (
            "fma_flop_per_s",
            Roof::Fma,
            positive(r.fma_flop_per_s).map(|v| format!("{:.1} TFLOP/s", v / 1e12)),
        ),
        (
            "atomic_same_ns",
            Roof::Atomic,
            r.atomic_same_ns.map(|ns| match &r.atomic_same_slot {
                Some(slot) => format!("{ns:.2} ns ({slot})"),
                None => format!("{ns:.2} ns"),
            }),
        ),
        (
            "atomic_same_i32_ns",
            Roof::Atomic,
            r.atomic_same_i32_ns
                .map(|ns| format!("{ns:.2} ns (red.s32)")),
        ),
        (
            "tile_copy_bytes_per_s",
            Roof::Tiles,
            r.tile_copy_bytes_per_s
                .map(|v| format!("{:.0} GB/s", v / 1e9)),
        ),
        (
            "shared_wavefronts_per_s",
            Roof::Shared,
            r.shared_wavefronts_per_s
                .map(|v| format!("{:.1} G/s", v / 1e9)),
        ),
        (
            "scattered_store_sectors_per_s",
            Roof::Scatter,
            r.scattered_store_sectors_per_s
                .map(|v| format!("{:.1} G/s", v / 1e9)),
        ),
        (
            "blocks_per_s",
            Roof::Blocks,
            r.blocks_per_s.map(|v| format!("{:.2} G/s", v / 1e9)),
        ),
    ]
    .into_iter()
    .chain(launch.map(|(field, s)| (field, Roof::Launch, Some(format!("{:.2} us", s * 1e6)))))
    .chain((!r.tree_ns.is_empty()).then(|| {
        let each: Vec<String> = r
            .tree_ns
            .iter()
            .map(|(entry, ns)| format!("{entry} {ns:.3}"))
            .collect();
        (
            "tree_ns",
            Roof::Tree,
            Some(format!("ns per block: {}", each.join(", "))),
        )
    }))
    .chain((!r.tree_resident_ns.is_empty()).then(|| {
        let each: Vec<String> = r
            .tree_resident_ns
            .iter()
            .flat_map(|(entry, by_backend)| {
                by_backend.iter().map(move |(backend, curve)| {
                    let at: Vec<String> = curve
                        .iter()
                        .map(|(resident, ns)| format!("{resident}:{ns:.3}"))
                        .collect();
                    format!("{entry} [{backend}] {}", at.join(" "))
                })
            })
            .collect();
        (
            "tree_resident_ns",
            Roof::Slots,
            Some(format!(
                "trees, ns per block by blocks per SM: {}",
                each.join(", ")
            )),
        )
    }))
    .chain(r.load_wait.map(|w| {
        (
            "load_wait",
            Roof::Slots,
            Some(format!(
                "load phase {:.3} ns per block, {:.3} without its load, at {} per SM",
                w.load_ns, w.base_ns, w.resident
            )),
        )
    }))
    .filter_map(|(field, roof, value)| Some((field, roof, value?)))
    .collect()
}

/// The roofs a file's rows show ([`Roofs::measure`] on its hot rows), each labelled with the
/// row it came from. None with neither a read stream nor a copy.
pub fn roofs_from_rows(rows: &[Row]) -> Option<RoofSet> {
    let (roofs, from) = Roofs::measure(rows, Cache::Hot, None);
    if roofs.read_bytes_per_s <= 0.0 && roofs.copy_bytes_per_s <= 0.0 {
        return None;
    }
    let sources = shown(&roofs)
        .into_iter()
        .filter_map(|(field, roof, value)| {
            Some(Source {
                roof,
                value,
                from: from.get(field)?.clone(),
                measured: true,
            })
        })
        .collect();
    Some(RoofSet { roofs, sources })
}

/// The roofs of a results file: its `roofs` record when it has one, else
/// [`roofs_from_rows`].
pub fn roofs_of(report: &Report) -> Option<RoofSet> {
    let Some(r) = &report.roofs else {
        return roofs_from_rows(&report.rows);
    };
    let sources = shown(r)
        .into_iter()
        .map(|(field, roof, value)| Source {
            roof,
            value,
            from: format!("measured in this run (the file's roofs record, {field})"),
            measured: true,
        })
        .collect();
    Some(RoofSet {
        roofs: r.clone(),
        sources,
    })
}

/// One assumed value: the number and where it comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AssumedValue {
    pub value: f64,
    pub source: String,
}

/// Values for roofs a results file did not measure, each with its source: the offline check
/// of files written before the roofs were measured. JSON: `{"atomic_same_ns": {"value": 1.81,
/// "source": "…"}, …}`, keys named as the `roofs` record's fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Assumed(pub BTreeMap<String, AssumedValue>);

impl Assumed {
    /// Fills every roof `set` lacks from these values (a measured roof is never replaced);
    /// an unknown key is an error naming the valid ones.
    pub fn apply(&self, set: &mut RoofSet) -> Result<(), String> {
        for (key, a) in &self.0 {
            let r = &mut set.roofs;
            let (roof, slot, shown) = match key.as_str() {
                "atomic_same_ns" => (
                    Roof::Atomic,
                    &mut r.atomic_same_ns,
                    format!("{} ns", a.value),
                ),
                "atomic_same_i32_ns" => (
                    Roof::Atomic,
                    &mut r.atomic_same_i32_ns,
                    format!("{} ns (red.s32)", a.value),
                ),
                "tile_copy_bytes_per_s" => (
                    Roof::Tiles,
                    &mut r.tile_copy_bytes_per_s,
                    format!("{:.0} GB/s", a.value / 1e9),
                ),
                "launch_s" => (
                    Roof::Launch,
                    &mut r.launch_s,
                    format!("{:.2} us", a.value * 1e6),
                ),
                "timed_launch_s" => (
                    Roof::Launch,
                    &mut r.timed_launch_s,
                    format!("{:.2} us timed", a.value * 1e6),
                ),
                "shared_wavefronts_per_s" => (
                    Roof::Shared,
                    &mut r.shared_wavefronts_per_s,
                    format!("{:.1} G/s", a.value / 1e9),
                ),
                "scattered_store_sectors_per_s" => (
                    Roof::Scatter,
                    &mut r.scattered_store_sectors_per_s,
                    format!("{:.1} G/s", a.value / 1e9),
                ),
                "blocks_per_s" => (
                    Roof::Blocks,
                    &mut r.blocks_per_s,
                    format!("{:.2} G/s", a.value / 1e9),
                ),
                _ => {
                    return Err(format!(
                        "assumed roof '{key}' is not one the model reads; valid: atomic_same_ns, \
                         atomic_same_i32_ns, launch_s, timed_launch_s, shared_wavefronts_per_s, \
                         scattered_store_sectors_per_s, tile_copy_bytes_per_s, blocks_per_s"
                    ));
                }
            };
            if slot.is_none() {
                *slot = Some(a.value);
                set.sources.push(Source {
                    roof,
                    value: shown,
                    from: format!("assumed, not measured: {}", a.source),
                    measured: false,
                });
            }
        }
        Ok(())
    }
}

/// One row of the check.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// `reduce_v4 [llvm] f32 2^28` (and `(cold L2)` for a cold row).
    pub label: String,
    pub family: Family,
    pub measured_us: f64,
    /// None: no roof its counts touch was measured.
    pub prediction: Option<Prediction>,
}

impl Checked {
    /// (predicted − measured) / measured, in percent.
    pub fn error_pct(&self) -> Option<f64> {
        let p = self.prediction.as_ref()?;
        Some((p.us() - self.measured_us) / self.measured_us * 100.0)
    }

    /// Within [`WITHIN`] of the measured median.
    pub fn held(&self) -> bool {
        self.prediction
            .as_ref()
            .is_some_and(|p| holds(p.us(), self.measured_us, WITHIN))
    }
}

/// Whether the check covers `row`: a verified catalogue reduction at one of
/// [`REDUCE_SIZES`], or a catalogue transpose (or `copy_stream`) at one of
/// [`TRANSPOSE_EDGES`] squared.
pub fn covers(row: &Row) -> bool {
    if row.status != Status::Ok || row.median_us.is_none() {
        return false;
    }
    let Some(k) = find(&row.kernel) else {
        return false;
    };
    match (row.section, k.family) {
        (Family::Reduce, Family::Reduce) => REDUCE_SIZES.contains(&row.n),
        (Family::Transpose, Family::Transpose) => TRANSPOSE_EDGES
            .iter()
            .any(|&e| row.size == Size::Matrix { rows: e, cols: e }.label()),
        _ => false,
    }
}

/// Every row the check covers, predicted against `roofs`.
pub fn check(report: &Report, roofs: &Roofs) -> Vec<Checked> {
    report
        .rows
        .iter()
        .filter(|r| covers(r))
        .filter_map(|r| {
            let (kernel, problem) = problem_of(r, report.device.sm_count)?;
            Some(Checked {
                label: r.label(),
                family: kernel.family,
                measured_us: r.median_us?,
                prediction: predict_in_run(kernel, &problem, roofs, &report.rows, r.cache),
            })
        })
        .collect()
}

/// How many rows held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub rows: usize,
    pub held: usize,
}

impl Tally {
    pub fn of<'a>(checked: impl IntoIterator<Item = &'a Checked>) -> Tally {
        let mut t = Tally::default();
        for c in checked {
            t.rows += 1;
            t.held += c.held() as usize;
        }
        t
    }

    /// Held rows, in percent of all (0 without rows).
    pub fn pct(self) -> f64 {
        if self.rows == 0 {
            0.0
        } else {
            self.held as f64 * 100.0 / self.rows as f64
        }
    }
}

/// The roofs used, one line each, measured first.
pub fn sources_table(set: &RoofSet) -> String {
    let mut s = String::new();
    let mut sources = set.sources.clone();
    sources.sort_by_key(|x| (!x.measured, x.roof));
    for x in &sources {
        let _ = writeln!(s, "  {:<9} {:>12}  {}", x.roof.name(), x.value, x.from);
    }
    s
}

/// The check as a fixed-width table: one line per row, then the share per family and in all.
pub fn table(checked: &[Checked]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<40} {:>9} {:>10} {:>10} {:>8}  verdict",
        "row", "bound", "pred us", "meas us", "error"
    );
    for c in checked {
        let (bound, pred) = match &c.prediction {
            Some(p) => (p.bound.name().to_string(), format!("{:.1}", p.us())),
            None => ("-".into(), "-".into()),
        };
        let err = c.error_pct().map_or("-".into(), |e| format!("{e:+.1}%"));
        let verdict = match (&c.prediction, c.held()) {
            (None, _) => "MISS: no roof measured".to_string(),
            (Some(_), true) => "within 10%".to_string(),
            (Some(p), false) if p.missing.is_empty() => "MISS".to_string(),
            (Some(p), false) => {
                let m: Vec<&str> = p.missing.iter().map(|r| r.name()).collect();
                format!("MISS (not measured: {})", m.join(", "))
            }
        };
        let _ = writeln!(
            s,
            "{:<40} {:>9} {:>10} {:>10.1} {:>8}  {verdict}",
            c.label, bound, pred, c.measured_us, err
        );
    }
    let _ = writeln!(s);
    for f in [Family::Reduce, Family::Transpose] {
        let t = Tally::of(checked.iter().filter(|c| c.family == f));
        if t.rows > 0 {
            let _ = writeln!(
                s,
                "{}: {} of {} rows within 10% ({:.1}%)",
                f.name(),
                t.held,
                t.rows,
                t.pct()
            );
        }
    }
    let t = Tally::of(checked);
    let _ = writeln!(
        s,
        "all: {} of {} rows within 10% ({:.1}%)",
        t.held,
        t.rows,
        t.pct()
    );
    s
}
