//! The metrics the subcommands request, by name, and the derived quantities the tables show.
//!
//! Names follow ncu's grammar `unit__counter.rollup.suffix` (`dram__throughput` over all DRAM
//! channels, `.avg`, `.pct_of_peak_sustained_elapsed`). Every name passed to `--metrics` here
//! exists for the H200 in `ncu --query-metrics --chip gh100` (checked by a test against
//! `xtask/tests/fixtures/ncu/metrics-gh100.txt.gz`). The `launch__*` and
//! `sm__maximum_warps_per_active_cycle_pct` values come from ncu's LaunchStats and Occupancy
//! sections, not from `--metrics`.

use super::ncu_csv::Launch;

// Speed of Light.
/// Compute (SM) throughput, % of peak: the SOL section's "Compute (SM) Throughput".
pub const SM_PCT: &str = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
/// Memory throughput, % of peak (the busiest of DRAM, L2, L1): SOL's "Memory Throughput".
pub const MEM_PCT: &str = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
/// DRAM throughput, % of peak.
pub const DRAM_PCT: &str = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
pub const L1_PCT: &str = "l1tex__throughput.avg.pct_of_peak_sustained_active";
pub const L2_PCT: &str = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
/// Kernel duration under ncu, ns (replayed, caches flushed: not a speed).
pub const DURATION: &str = "gpu__time_duration.sum";

// Launch and occupancy.
/// Blocks (CTAs) launched: the divisor of every per-block number.
pub const CTAS: &str = "sm__ctas_launched.sum";
pub const WARPS: &str = "smsp__warps_launched.sum";
/// Achieved occupancy, % of the SM's warp slots.
pub const ACHIEVED_OCC: &str = "sm__warps_active.avg.pct_of_peak_sustained_active";
/// Theoretical occupancy, % (Occupancy section).
pub const THEORETICAL_OCC: &str = "sm__maximum_warps_per_active_cycle_pct";
pub const WAVES: &str = "launch__waves_per_multiprocessor";
pub const REGISTERS: &str = "launch__registers_per_thread";
pub const SM_COUNT: &str = "device__attribute_multiprocessor_count";
/// Blocks per SM each resource allows (Occupancy section); the smallest is the limiter.
pub const OCC_LIMITS: [(&str, &str); 4] = [
    ("registers", "launch__occupancy_limit_registers"),
    ("shared memory", "launch__occupancy_limit_shared_mem"),
    ("warps", "launch__occupancy_limit_warps"),
    ("blocks", "launch__occupancy_limit_blocks"),
];

// Instructions.
/// Warp-level instructions executed.
pub const INST: &str = "smsp__inst_executed.sum";
/// Average threads doing work (predicate on) per warp instruction, out of 32.
pub const THREADS_PER_INST: &str =
    "smsp__average_thread_inst_executed_pred_on_per_inst_executed.ratio";

// Shared memory.
/// Shared loads with at least one lane on: the requests the chapter counts.
pub const SH_LD_REQ: &str = "smsp__inst_executed_op_shared_ld_pred_on_any.sum";
pub const SH_ST_REQ: &str = "smsp__inst_executed_op_shared_st_pred_on_any.sum";
/// Shared load instructions executed, lanes on or not.
pub const SH_LD_INST: &str = "smsp__inst_executed_op_shared_ld.sum";
pub const SH_LD_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
pub const SH_ST_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
/// Passes through the banks: one per request without conflicts.
pub const SH_LD_WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
pub const SH_ST_WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";

// Global memory.
pub const GLD_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
pub const GLD_REQ: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
pub const GST_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
pub const GST_REQ: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
/// Bytes the threads asked for per 32-byte sector moved (32 = every byte used).
pub const GLD_BYTES_PER_SECTOR: &str =
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio";
pub const GST_BYTES_PER_SECTOR: &str =
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio";

// Same-address atomics: each reduction block ends with one `red.global.add` to the result.
/// L2 requests for reductions (`red`), all slices.
pub const RED_REQ: &str = "lts__t_requests_op_red.sum";
/// The same on the busiest L2 slice: equal to [`RED_REQ`] when every `red` hits one address.
pub const RED_REQ_MAX_SLICE: &str = "lts__t_requests_op_red.max";
/// The busiest slice's atomic unit, % of its peak over the kernel.
pub const ATOMIC_UNIT_PCT: &str =
    "lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed";
/// L2 requests that arrived over the fabric between the two L2 partitions.
pub const FABRIC_REQ: &str = "lts__t_requests_srcunit_ltcfabric.sum";

// Local memory (register spills).
pub const LOCAL_LD_BYTES: &str = "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum";
pub const LOCAL_ST_BYTES: &str = "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum";

/// Warp stall reasons, as in `smsp__average_warps_issue_stalled_<reason>_per_issue_active`.
pub const STALL_REASONS: [&str; 19] = [
    "barrier",
    "branch_resolving",
    "dispatch_stall",
    "drain",
    "gmma",
    "imc_miss",
    "lg_throttle",
    "long_scoreboard",
    "math_pipe_throttle",
    "membar",
    "mio_throttle",
    "misc",
    "no_instruction",
    "not_selected",
    "selected",
    "short_scoreboard",
    "sleeping",
    "tex_throttle",
    "wait",
];

/// Average warps stalled on `reason` per issued instruction.
pub fn stall_metric(reason: &str) -> String {
    format!("smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio")
}

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
            FABRIC_REQ,
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
    for x in transpose_table() {
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
pub struct Row {
    /// `reduce_v3 [llvm]`.
    pub label: String,
    /// `reduce_v3`: what predictions are keyed by.
    pub kernel: String,
    /// `llvm`, `nvvm`, `cub`.
    pub backend: String,
    /// Blocks from `lab run`'s manifest, when ncu did not report `sm__ctas_launched`.
    pub manifest_blocks: Option<f64>,
    /// `lab run` verified this launch's result (None: not known).
    pub verified: Option<bool>,
    pub profiled: Launch,
}

impl Row {
    /// Names a profiled launch: `reduce_v3_f32` on llvm → `reduce_v3 [llvm]`; a kernel the lab
    /// did not plan (CUB's) keeps ncu's name.
    pub fn new(profiled: Launch, backend: &str) -> Row {
        let kernel = kernel_name(&profiled.kernel);
        Row {
            label: format!("{kernel} [{backend}]"),
            kernel,
            backend: backend.to_string(),
            manifest_blocks: None,
            verified: None,
            profiled,
        }
    }

    pub fn m(&self, name: &str) -> Option<f64> {
        self.profiled.num(name)
    }

    /// Blocks launched: ncu's count, else the grid `lab run` reported.
    pub fn blocks(&self) -> Option<f64> {
        self.m(CTAS).or(self.manifest_blocks).filter(|b| *b > 0.0)
    }

    /// `x / blocks`.
    pub fn per_block(&self, name: &str) -> Option<f64> {
        Some(self.m(name)? / self.blocks()?)
    }

    /// `a / b`, None when b is missing or zero.
    pub fn ratio(&self, a: &str, b: &str) -> Option<f64> {
        let d = self.m(b)?;
        (d > 0.0).then(|| self.m(a).map(|n| n / d)).flatten()
    }

    /// Stall reasons present, largest first: (reason, warps per issued instruction).
    pub fn stalls(&self) -> Vec<(&'static str, f64)> {
        let mut v: Vec<(&'static str, f64)> = STALL_REASONS
            .iter()
            .filter_map(|r| Some((*r, self.m(&stall_metric(r))?)))
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    }

    /// The largest stall reason and its share of all stalls.
    pub fn dominant_stall(&self) -> Option<(&'static str, f64, f64)> {
        let s = self.stalls();
        let total: f64 = s
            .iter()
            .filter(|(r, _)| *r != "selected")
            .map(|(_, v)| v)
            .sum();
        let (r, v) = *s.iter().find(|(r, _)| *r != "selected")?;
        Some((r, v, if total > 0.0 { v / total } else { 0.0 }))
    }
}

/// The bare function name ncu reports, whatever its kernel-name base: `reduce_v3_f32`;
/// `void cub::…::DeviceReduceKernel<…>(…)` → `DeviceReduceKernel`.
pub fn function_name(ncu_name: &str) -> &str {
    let s = ncu_name.trim();
    let s = s.strip_prefix("void ").unwrap_or(s);
    let s = s.split(['(', '<']).next().unwrap_or(s);
    s.rsplit("::").next().unwrap_or(s).trim()
}

/// `reduce_v3_f32` → `reduce_v3`; `transpose_tiled_f32` → `transpose_tiled`; other names
/// (`reduce_v3_i32`, CUB's kernels) keep their function name.
pub fn kernel_name(ncu_name: &str) -> String {
    let f = function_name(ncu_name);
    f.strip_suffix("_f32").unwrap_or(f).to_string()
}

/// A numeric column of a table: a header, a unit note, and how to get it from a row.
pub struct Column {
    /// Key predictions refer to.
    pub key: &'static str,
    pub header: &'static str,
    pub get: fn(&Row) -> Option<f64>,
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
