//! The metrics the subcommands request, by name, and the derived quantities the tables show.
//!
//! Names follow ncu's grammar `unit__counter.rollup.suffix` (`dram__throughput` over all DRAM
//! channels, `.avg`, `.pct_of_peak_sustained_elapsed`). Every name passed to `--metrics` here
//! exists for the H200 in `ncu --query-metrics --chip gh100` (checked by a test against
//! `xtask/tests/fixtures/ncu/metrics-gh100.txt.gz`). The `launch__*` and
//! `sm__maximum_warps_per_active_cycle_pct` values come from ncu's LaunchStats and Occupancy
//! sections, not from `--metrics`.

use catalog::Runner;
use profiler::ncu::Launch;
pub use profiler::ncu::metrics::*;

/// Speed of Light and launch facts every table carries.
const COMMON: [&str; 8] = [
    SM_PCT, MEM_PCT, DRAM_PCT, L1_PCT, L2_PCT, DURATION, CTAS, WARPS,
];

/// `--metrics` of `ncu-table`: the chapter's reduction metrics, SOL, every stall reason.
pub fn reduction_table() -> Vec<String> {
    let mut m: Vec<String> = COMMON.iter().map(|s| s.to_string()).collect();
    m.extend(
        [
            SH_LD_REQ,
            SH_LD_CONFLICTS,
            SH_LD_WAVEFRONTS,
            INST,
            ACHIEVED_OCC,
            THREADS_PER_INST,
            LOCAL_LD_BYTES,
            LOCAL_ST_BYTES,
            RED_REQ,
            RED_REQ_MAX_SLICE,
            ATOMIC_UNIT_PCT,
            ATOMIC_UNIT_AVG_PCT,
        ]
        .map(String::from),
    );
    m.extend(STALL_REASONS.iter().map(|r| stall_metric(r)));
    m
}

/// `--metrics` of `ncu-transpose`: sectors per request, shared requests, wavefronts,
/// conflicts, duration.
pub fn transpose_table() -> Vec<String> {
    let mut m: Vec<String> = COMMON.iter().map(|s| s.to_string()).collect();
    m.extend(
        [
            GLD_SECTORS,
            GLD_REQ,
            GST_SECTORS,
            GST_REQ,
            GLD_BYTES_PER_SECTOR,
            GST_BYTES_PER_SECTOR,
            SH_LD_INST,
            SH_LD_REQ,
            SH_ST_REQ,
            SH_LD_WAVEFRONTS,
            SH_ST_WAVEFRONTS,
            SH_LD_CONFLICTS,
            SH_ST_CONFLICTS,
            ACHIEVED_OCC,
            LOCAL_LD_BYTES,
            LOCAL_ST_BYTES,
        ]
        .map(String::from),
    );
    m.extend(STALL_REASONS.iter().map(|r| stall_metric(r)));
    m
}

/// `--metrics` added to `--set full` by `profile`, so every diagnosis rule finds its inputs
/// whatever the set's sections contain in this ncu version.
pub fn diagnosis() -> Vec<String> {
    let mut m = reduction_table();
    for x in transpose_table()
        .into_iter()
        .chain(DIAGNOSIS.map(String::from))
    {
        if !m.contains(&x) {
            m.push(x);
        }
    }
    m
}

/// The ncu sections every table also collects (launch facts, occupancy and its limiter).
pub const TABLE_SECTIONS: [&str; 2] = ["LaunchStats", "Occupancy"];

/// One profiled launch with the names the tables use.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Profiled {
    /// `reduce_v3 [llvm]`.
    pub label: String,
    /// `reduce_v3`: what the expected values are keyed by.
    pub kernel: String,
    /// `llvm`, `nvvm`, `cub`.
    pub backend: String,
    /// Blocks from `lab run`'s manifest, when ncu did not report `sm__ctas_launched`.
    pub manifest_blocks: Option<f64>,
    /// `lab run` verified this launch's result (None: not known).
    pub verified: Option<bool>,
    pub profiled: Launch,
}

impl Profiled {
    /// Names a profiled launch: `reduce_v3_f32` on llvm → `reduce_v3 [llvm]`; a kernel the lab
    /// did not plan (CUB's) keeps ncu's name.
    pub fn new(profiled: Launch, backend: &str) -> Profiled {
        let kernel = kernel_name(&profiled.kernel);
        Profiled {
            label: format!("{kernel} [{backend}]"),
            kernel,
            backend: backend.to_string(),
            manifest_blocks: None,
            verified: None,
            profiled,
        }
    }

    /// What ran it, when the backend is one of the lab's runners (a capture read back names
    /// it after its file).
    pub fn runner(&self) -> Option<Runner> {
        Runner::from_name(&self.backend)
    }
}

/// Orders `rows` kernel by kernel, in the order their kernels first appear, and within one
/// kernel by `then` (the sort is stable: rows of equal keys keep their order).
pub fn kernel_by_kernel<K: Ord>(rows: &mut [Profiled], then: impl Fn(&Profiled) -> K) {
    let mut kernels: Vec<String> = Vec::new();
    for r in rows.iter() {
        if !kernels.contains(&r.kernel) {
            kernels.push(r.kernel.clone());
        }
    }
    rows.sort_by_key(|r| (kernels.iter().position(|k| *k == r.kernel), then(r)));
}

/// The rules read a lab row as its launch, with the grid `lab run` reported standing in for
/// ncu's block count where ncu did not collect it.
impl Counters for Profiled {
    fn m(&self, name: &str) -> Option<f64> {
        self.profiled
            .num(name)
            .or_else(|| (name == CTAS).then_some(self.manifest_blocks).flatten())
    }

    fn name(&self) -> Option<&str> {
        Some(&self.profiled.kernel)
    }
}

/// The bare function name ncu reports, whatever its kernel-name base: `reduce_v3_f32`;
/// `void cub::…::DeviceReduceKernel<…>(…)` → `DeviceReduceKernel` ([`profiler::names`]).
pub fn function_name(ncu_name: &str) -> String {
    profiler::names::function(ncu_name)
}

/// `reduce_v3_f32` → `reduce_v3`; `transpose_tiled_f32` → `transpose_tiled`; other names
/// (`reduce_v3_i32`, CUB's kernels) keep their function name.
pub fn kernel_name(ncu_name: &str) -> String {
    let f = function_name(ncu_name);
    f.strip_suffix("_f32").map_or(f.clone(), str::to_string)
}

/// A numeric column of a table: a header, a unit note, and how to get it from a row.
pub struct Column {
    /// Key the expected values refer to.
    pub key: &'static str,
    pub header: &'static str,
    pub get: fn(&Profiled) -> Option<f64>,
    /// Decimals shown.
    pub digits: usize,
}

/// DRAM throughput, % of peak: a column of both tables.
const DRAM_PCT_COLUMN: Column = Column {
    key: "dram_pct",
    header: "DRAM %",
    get: |r| r.m(DRAM_PCT),
    digits: 1,
};

/// Kernel time under ncu, µs (replayed: for comparing kernels, never a speed): a column of both
/// tables.
const DURATION_COLUMN: Column = Column {
    key: "duration_us",
    header: "ncu µs",
    get: |r| r.m(DURATION).map(|ns| ns / 1e3),
    digits: 1,
};

/// The `ncu-table` columns (per block where the chapter states per-block numbers).
pub fn reduction_columns() -> Vec<Column> {
    vec![
        Column {
            key: "blocks",
            header: "blocks",
            get: |r| r.blocks(),
            digits: 0,
        },
        Column {
            key: "sh_ld_req_per_block",
            header: "sh-ld req/blk",
            get: |r| r.per_block(SH_LD_REQ),
            digits: 1,
        },
        Column {
            key: "sh_ld_conflicts_per_block",
            header: "ld conflicts/blk",
            get: |r| r.per_block(SH_LD_CONFLICTS),
            digits: 1,
        },
        Column {
            key: "sh_ld_wavefronts_per_block",
            header: "ld wavefronts/blk",
            get: |r| r.per_block(SH_LD_WAVEFRONTS),
            digits: 1,
        },
        Column {
            key: "inst_per_warp",
            header: "inst/warp",
            get: |r| r.ratio(INST, WARPS),
            digits: 1,
        },
        Column {
            key: "inst",
            header: "inst total",
            get: |r| r.m(INST),
            digits: 0,
        },
        DRAM_PCT_COLUMN,
        Column {
            key: "ns_per_red",
            header: "ns/red",
            get: |r| Some(r.m(DURATION)? / r.m(RED_REQ_MAX_SLICE).filter(|n| *n > 0.0)?),
            digits: 2,
        },
        Column {
            key: "atomic_unit_pct",
            header: "atom unit %",
            get: |r| r.m(ATOMIC_UNIT_PCT),
            digits: 1,
        },
        Column {
            key: "occupancy_pct",
            header: "occ %",
            get: |r| r.m(ACHIEVED_OCC),
            digits: 1,
        },
        Column {
            key: "stall_barrier",
            header: "barrier",
            get: |r| r.m(&stall_metric("barrier")),
            digits: 2,
        },
        Column {
            key: "stall_long_scoreboard",
            header: "long-sb",
            get: |r| r.m(&stall_metric("long_scoreboard")),
            digits: 2,
        },
        DURATION_COLUMN,
    ]
}

/// The `ncu-transpose` columns (per warp-wide request, as the chapter states them).
pub fn transpose_columns() -> Vec<Column> {
    vec![
        Column {
            key: "gld_sectors_per_req",
            header: "ld sectors/req",
            get: |r| r.ratio(GLD_SECTORS, GLD_REQ),
            digits: 2,
        },
        Column {
            key: "gst_sectors_per_req",
            header: "st sectors/req",
            get: |r| r.ratio(GST_SECTORS, GST_REQ),
            digits: 2,
        },
        Column {
            key: "sh_ld_req",
            header: "sh-ld req",
            get: |r| r.m(SH_LD_REQ),
            digits: 0,
        },
        Column {
            key: "sh_ld_wavefronts_per_req",
            header: "sh-ld wavefr/req",
            get: |r| r.ratio(SH_LD_WAVEFRONTS, SH_LD_REQ),
            digits: 2,
        },
        Column {
            key: "sh_st_wavefronts_per_req",
            header: "sh-st wavefr/req",
            get: |r| r.ratio(SH_ST_WAVEFRONTS, SH_ST_REQ),
            digits: 2,
        },
        Column {
            key: "sh_ld_conflicts",
            header: "ld conflicts",
            get: |r| r.m(SH_LD_CONFLICTS),
            digits: 0,
        },
        Column {
            key: "sh_st_conflicts",
            header: "st conflicts",
            get: |r| r.m(SH_ST_CONFLICTS),
            digits: 0,
        },
        DRAM_PCT_COLUMN,
        DURATION_COLUMN,
    ]
}
