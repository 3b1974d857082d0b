//! The roofs a results file records (`roofs`): the rates one bench run measured, each a rate
//! some kernel here can hit. `crate::roofs` reads them off the run's rows.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The measured roofs of one bench run: each a rate some kernel here can hit, measured in the
/// same run. A roof that was not measured (its kernel not selected, or its row failed) is
/// `None`.
///
/// Every roof row's `n` is its count of operations (`red`s, wavefronts, blocks, sectors), so
/// each rate is `n` over the row's median time; across backends the fastest counts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Roofs {
    /// Read stream: bytes read per second (the best `read_stream` row at the largest size:
    /// the DRAM stream).
    pub read_bytes_per_s: f64,
    /// Device-to-device copy: bytes read plus bytes written per second (the best `d2d_copy`
    /// row of the most bytes).
    pub copy_bytes_per_s: f64,
    /// FP32 FMA peak: FLOPs per second (an FMA counts two).
    pub fma_flop_per_s: f64,
    /// Nanoseconds per `red.global.add.f32` to one address, every SM issuing at once, in the
    /// reductions' shape: one `red` per block of 256 threads, from thread 0 after a barrier.
    #[serde(default)]
    pub atomic_same_ns: Option<f64>,
    /// The same for `red.global.add.s32`: the i32 reductions' chain.
    #[serde(default)]
    pub atomic_same_i32_ns: Option<f64>,
    /// Where that word lies: the placement slot the measurement used.
    #[serde(default)]
    pub atomic_same_slot: Option<String>,
    /// `red.global.add.f32`s per second to distinct addresses spread over every L2 slice.
    #[serde(default)]
    pub atomic_spread_per_s: Option<f64>,
    /// Whole-GPU shared-memory wavefronts per second (conflict-free 32-bit loads and stores:
    /// one wavefront per warp-wide instruction).
    #[serde(default)]
    pub shared_wavefronts_per_s: Option<f64>,
    /// Empty blocks of 256 threads retired per second: the block scheduler's roof.
    #[serde(default)]
    pub blocks_per_s: Option<f64>,
    /// Seconds per kernel launched back to back (the launch-gap demo's figure).
    #[serde(default)]
    pub launch_s: Option<f64>,
    /// 32-byte sectors per second written one lane per sector (a naive transpose's stores).
    #[serde(default)]
    pub scattered_store_sectors_per_s: Option<f64>,
    /// The 32×32 transposes' DRAM order without the transposition (`tile_copy`): bytes read
    /// plus written per second, the best row of the most bytes (at a transpose's own size,
    /// [`Roofs::at_size`] takes that size's row).
    #[serde(default)]
    pub tile_copy_bytes_per_s: Option<f64>,
    /// Nanoseconds per block of each reduction tree run alone, keyed by its roof's entry
    /// point (`tree_v1_i32`): a roof of the kernels' own code, not of the hardware. Absent
    /// when none was measured.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tree_ns: BTreeMap<String, f64>,
    /// Each tree roof's nanoseconds per block at each occupancy its rows state (the one it
    /// gets and those it was held to), per compiler: `tree_resident_ns["tree_v3_i32"]["nvvm"]
    /// [&4]` (entry, backend, resident blocks per SM). What the model's slots roof
    /// interpolates.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tree_resident_ns: BTreeMap<String, BTreeMap<String, BTreeMap<u32, f64>>>,
    /// The reductions' load phase alone, timed with and without its load at one occupancy:
    /// how long a block's load holds its slot ([`LoadWait::slot_ns`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_wait: Option<LoadWait>,
    /// The SM clock the per-cycle figures were converted with.
    #[serde(default)]
    pub sm_clock_hz: Option<f64>,
    /// Nanoseconds per `red` to the same word when one wave of blocks loops (barrier, thread 0
    /// `red`) instead of one block per `red`: the atomic unit without blocks retiring. Equal to
    /// `atomic_same_ns` when the word's slice, not the blocks, sets the pace.
    #[serde(default)]
    pub atomic_same_looped_ns: Option<f64>,
    /// Seconds of one launch of one empty block timed alone by a pair of events, as every
    /// row is timed: the launch call plus the GPU's start and finish of a lone kernel, which
    /// kernels queued back to back (`launch_s`) overlap.
    #[serde(default)]
    pub timed_launch_s: Option<f64>,
}

/// The `load_wait` roof's pair of rows: nanoseconds per block (chip-wide) of the reductions'
/// load phase with its load and without it, both at `resident` blocks per SM, low enough that
/// each block's latency, not the block scheduler, sets the pace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadWait {
    pub resident: u32,
    pub load_ns: f64,
    pub base_ns: f64,
}

impl LoadWait {
    /// Nanoseconds a block's load holds its slot on a GPU of `sm_count` SMs (Little's law:
    /// slots × SMs × time per block is a block's time resident; the load's share is the
    /// difference the load makes).
    pub fn slot_ns(&self, sm_count: u32) -> f64 {
        (self.load_ns - self.base_ns).max(0.0) * self.resident as f64 * sm_count as f64
    }
}

impl Roofs {
    /// Seconds one timed row pays per launch: the event-timed launch when measured, else the
    /// back-to-back launch (which lacks the GPU's start and finish of a lone launch).
    pub fn launch_cost_s(&self) -> Option<f64> {
        self.timed_launch_s.or(self.launch_s)
    }

    /// One (roof, value) pair per roof measured, in a fixed order, for the bench's roofs
    /// table (`sm_count` turns the shared-memory rate into wavefronts per SM per cycle at
    /// `sm_clock_hz`). The unit is in the roof's name, so a table can put several compilers'
    /// values side by side.
    pub fn table_rows(&self, sm_count: u32) -> Vec<(String, String)> {
        let giga = |x: f64| x / 1e9;
        let mut out: Vec<(String, String)> = vec![
            (
                "read stream, GB/s".into(),
                format!("{:.0}", giga(self.read_bytes_per_s)),
            ),
            (
                "D2D copy (read + written), GB/s".into(),
                format!("{:.0}", giga(self.copy_bytes_per_s)),
            ),
            (
                "FP32 FMA, TFLOP/s".into(),
                format!("{:.1}", self.fma_flop_per_s / 1e12),
            ),
        ];
        let mut push = |name: &str, value: Option<String>| {
            if let Some(v) = value {
                out.push((name.to_string(), v));
            }
        };
        push(
            "same-address red, ns each",
            self.atomic_same_ns.map(|ns| format!("{ns:.3}")),
        );
        push(
            "same-address red, one wave looping, ns each",
            self.atomic_same_looped_ns.map(|ns| format!("{ns:.3}")),
        );
        push(
            "same-address red.s32, ns each",
            self.atomic_same_i32_ns.map(|ns| format!("{ns:.3}")),
        );
        push(
            "spread reds, G/s",
            self.atomic_spread_per_s.map(|r| format!("{:.1}", giga(r))),
        );
        push(
            "shared memory, G wavefronts/s",
            self.shared_wavefronts_per_s.map(|w| {
                let per_cycle = match (self.sm_clock_hz, sm_count) {
                    (Some(hz), n) if n > 0 => format!(
                        " ({:.2} per SM per cycle at {:.0} MHz)",
                        w / n as f64 / hz,
                        hz / 1e6
                    ),
                    _ => String::new(),
                };
                format!("{:.1}{per_cycle}", giga(w))
            }),
        );
        push(
            "empty blocks, G/s",
            self.blocks_per_s.map(|b| format!("{:.2}", giga(b))),
        );
        push(
            "launch, back to back, µs",
            self.launch_s.map(|s| format!("{:.2}", s * 1e6)),
        );
        push(
            "launch, one timed alone, µs",
            self.timed_launch_s.map(|s| format!("{:.2}", s * 1e6)),
        );
        push(
            "scattered stores, G sectors/s",
            self.scattered_store_sectors_per_s
                .map(|s| format!("{:.1}", giga(s))),
        );
        for (entry, ns) in &self.tree_ns {
            push(
                &format!("{entry} alone, ns per block"),
                Some(format!("{ns:.3}")),
            );
        }
        push(
            "32x32 tile order (read + written), GB/s",
            self.tile_copy_bytes_per_s
                .map(|b| format!("{:.0}", giga(b))),
        );
        push(
            "a block's load holds its slot, ns",
            self.load_wait
                .map(|w| format!("{:.0}", w.slot_ns(sm_count))),
        );
        out
    }
}
