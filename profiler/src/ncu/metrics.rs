//! The metrics the diagnosis reads, by name, and [`Counters`]: anything that answers a metric
//! by name (a profiled launch, or a launch with facts added from elsewhere).
//!
//! Names follow ncu's grammar `unit__counter.rollup.suffix` (`dram__throughput` over all DRAM
//! channels, `.avg`, `.pct_of_peak_sustained_elapsed`). Every name here exists for the H200 in
//! `ncu --query-metrics --chip gh100` (a test holds them to that list); most come with
//! `--set full`, and [`DIAGNOSIS`] adds the few it lacks. The `launch__*`, `device__*` and
//! `sm__maximum_warps_per_active_cycle_pct` values come from ncu's LaunchStats and Occupancy
//! sections.

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

// Where the SMs' time goes.
/// Cycles an SM had at least one warp resident, averaged over SMs: idle SMs pull it down.
pub const SM_ACTIVE_CYCLES: &str = "sm__cycles_active.avg";
pub const SM_ELAPSED_CYCLES: &str = "sm__cycles_elapsed.avg";
/// Share of cycles a scheduler issued an instruction, % (of the cycles it had warps).
pub const ISSUE_ACTIVE: &str = "smsp__issue_active.avg.pct_of_peak_sustained_active";

// Pipes: instructions issued to each, % of its peak while the SM was active.
pub const PIPE_FMA: &str = "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active";
pub const PIPE_ALU: &str = "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active";
/// The XU pipe: special functions (`MUFU`: sin, cos, ex2, rsqrt), conversions.
pub const PIPE_XU: &str = "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active";
pub const PIPE_LSU: &str = "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active";
pub const PIPE_FP64: &str = "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active";
/// The ADU pipe: block barriers (`BAR`), branch-target resolution, constant-bank loads.
pub const PIPE_ADU: &str = "sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_active";
/// The tensor cores, any MMA (HMMA, HGMMA, IMMA, …), % of peak cycles while active.
pub const PIPE_TENSOR: &str = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
/// Shared-memory wavefronts, % of the L1's shared-memory peak.
pub const SHARED_PIPE_PCT: &str =
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed";

/// The pipes a kernel can saturate, with the names the reports use.
pub const PIPES: [(&str, &str); 7] = [
    ("FMA", PIPE_FMA),
    ("ALU", PIPE_ALU),
    ("XU (special functions)", PIPE_XU),
    ("LSU (memory instructions)", PIPE_LSU),
    ("ADU (barriers, branches)", PIPE_ADU),
    ("FP64", PIPE_FP64),
    ("tensor", PIPE_TENSOR),
];

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
/// Warp slots per SM (64 on Hopper): what occupancy percentages are shares of.
pub const MAX_WARPS_PER_SM: &str = "device__attribute_max_warps_per_multiprocessor";
/// Blocks in the grid and threads per block (LaunchStats).
pub const GRID_SIZE: &str = "launch__grid_size";
pub const BLOCK_SIZE: &str = "launch__block_size";
/// Blocks per thread-block cluster (0 without clusters), and the most clusters of that launch
/// the GPU holds at once (LaunchStats; a cluster's blocks share one GPC).
pub const CLUSTER_SIZE: &str = "launch__cluster_size";
pub const CLUSTER_MAX_ACTIVE: &str = "launch__cluster_max_active";
pub const L2_BYTES: &str = "device__attribute_l2_cache_size";
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
/// Thread-level FFMA instructions (predicate on).
pub const FFMA_THREAD_INST: &str = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
/// Thread-level instructions of every kind (predicate on).
pub const THREAD_INST: &str = "smsp__thread_inst_executed_pred_on.sum";

// Shared memory.
/// Shared loads with at least one lane on: the requests a shared-memory access counts as.
pub const SH_LD_REQ: &str = "smsp__inst_executed_op_shared_ld_pred_on_any.sum";
pub const SH_ST_REQ: &str = "smsp__inst_executed_op_shared_st_pred_on_any.sum";
/// Shared load instructions executed, lanes on or not.
pub const SH_LD_INST: &str = "smsp__inst_executed_op_shared_ld.sum";
pub const SH_LD_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
pub const SH_ST_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
/// Passes through the banks: one per request without conflicts.
pub const SH_LD_WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
pub const SH_ST_WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
/// Every shared-memory wavefront and bank conflict (loads, stores, atomics, async copies).
pub const SH_WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum";
pub const SH_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum";

// Global memory.
pub const GLD_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
pub const GLD_REQ: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
/// Global-load sectors the L1 did not hold: what it asked the L2 for.
pub const GLD_MISS_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum";
pub const GST_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
pub const GST_REQ: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
/// Bytes the threads asked for per 32-byte sector moved (32 = every byte used). Counted at
/// the SASS level over `LDG`/`STG` alone: 0 in a kernel that loads only through `cp.async`.
pub const GLD_BYTES_PER_SECTOR: &str =
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio";
pub const GST_BYTES_PER_SECTOR: &str =
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio";
/// Bytes the threads asked for (every lane's access counted once per instruction): the
/// minimum the L1 must deliver. Lab metrics; from a plain `--set full` report they are the
/// bytes-per-sector ratio times the sectors.
pub const GLD_DATA_BYTES: &str = "sm__sass_data_bytes_mem_global_op_ld.sum";
pub const GST_DATA_BYTES: &str = "sm__sass_data_bytes_mem_global_op_st.sum";
/// Global load and store instructions executed (warp level).
pub const GLD_INST: &str = "smsp__sass_inst_executed_op_global_ld.sum";
pub const GST_INST: &str = "smsp__sass_inst_executed_op_global_st.sum";
/// Asynchronous global-to-shared copies (`cp.async`, SASS `LDGSTS`).
pub const LDGSTS_INST: &str = "smsp__inst_executed_op_ldgsts.sum";
/// Bulk copies by the tensor memory accelerator (TMA), and texture fetches: loads and stores
/// whose bytes no SASS-level counter reports.
pub const TMA_LD_INST: &str = "smsp__inst_executed_op_tma_ld.sum";
pub const TMA_ST_INST: &str = "smsp__inst_executed_op_tma_st.sum";
pub const TEX_INST: &str = "smsp__inst_executed_op_texture.sum";

// L2 and DRAM.
/// L2 sectors read by the SMs, and the share that hit.
pub const L2_READ_SECTORS: &str = "lts__t_sectors_srcunit_tex_op_read.sum";
pub const L2_READ_HIT_PCT: &str = "lts__t_sector_op_read_hit_rate.pct";
/// L2 sectors written by the SMs (stores, whole or partial sectors).
pub const L2_WRITE_SECTORS: &str = "lts__t_sectors_srcunit_tex_op_write.sum";
pub const DRAM_READ_BYTES: &str = "dram__bytes_read.sum";
pub const DRAM_WRITE_BYTES: &str = "dram__bytes_write.sum";

// Same-address atomics: each reduction block ends with one `red.global.add` to the result.
/// L2 requests for reductions (`red`), all slices.
pub const RED_REQ: &str = "lts__t_requests_op_red.sum";
/// The same on the busiest L2 slice: equal to [`RED_REQ`] when every `red` hits one address.
pub const RED_REQ_MAX_SLICE: &str = "lts__t_requests_op_red.max";
/// The busiest slice's atomic unit, % of its peak over the kernel.
pub const ATOMIC_UNIT_PCT: &str =
    "lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed";
/// The same for atomics that return a value (`atom`: ALU operations and compare-and-swap).
pub const ATOM_REQ: &str = "lts__t_requests_op_atom.sum";
pub const ATOM_REQ_MAX_SLICE: &str = "lts__t_requests_op_atom.max";
/// The SMs' reductions and atomics as the L2 counts them in a plain `--set full` report
/// (requests from the L1s, every slice together).
pub const L2_RED_REQ_SM: &str = "lts__t_requests_srcunit_tex_op_red.sum";
pub const L2_ATOM_ALU_REQ_SM: &str = "lts__t_requests_srcunit_tex_op_atom_dot_alu.sum";
pub const L2_ATOM_CAS_REQ_SM: &str = "lts__t_requests_srcunit_tex_op_atom_dot_cas.sum";
/// The atomic units' busy share averaged over the slices: beside [`ATOMIC_UNIT_PCT`] (the
/// busiest slice) it says whether the atomics spread or pile onto one slice.
pub const ATOMIC_UNIT_AVG_PCT: &str =
    "lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed";
/// Global atomic and reduction instructions (warp level): `ATOMG` ALU and CAS, `RED`.
pub const GATOM_INST: &str = "smsp__inst_executed_op_generic_atom_dot_alu.sum";
pub const GATOM_CAS_INST: &str = "smsp__inst_executed_op_generic_atom_dot_cas.sum";
pub const GRED_INST: &str = "smsp__inst_executed_op_global_red.sum";
/// Shared-memory atomics (`ATOMS`), and the passes through the banks they took.
pub const SH_ATOM_INST: &str = "smsp__inst_executed_op_shared_atom.sum";
pub const SH_ATOM_WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum";

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

/// What `--set full` may lack that some rule reads: added with `--metrics` by every capture
/// that diagnoses (a report made without them still gets every rule whose inputs it holds).
pub const DIAGNOSIS: [&str; 12] = [
    FFMA_THREAD_INST,
    THREAD_INST,
    RED_REQ,
    RED_REQ_MAX_SLICE,
    ATOM_REQ,
    ATOM_REQ_MAX_SLICE,
    GLD_DATA_BYTES,
    GST_DATA_BYTES,
    ATOMIC_UNIT_PCT,
    ATOMIC_UNIT_AVG_PCT,
    SH_LD_REQ,
    SH_ST_REQ,
];

/// Anything that answers a metric by name: what the rules read.
pub trait Counters {
    /// The metric's value, if it was collected and is a number.
    fn m(&self, name: &str) -> Option<f64>;

    /// The kernel's name as the report gives it (confirming evidence for some rules).
    fn name(&self) -> Option<&str> {
        None
    }

    /// `a / b`, None when b is missing or zero.
    fn ratio(&self, a: &str, b: &str) -> Option<f64> {
        let d = self.m(b)?;
        (d > 0.0).then(|| self.m(a).map(|n| n / d)).flatten()
    }

    /// Blocks launched.
    fn blocks(&self) -> Option<f64> {
        self.m(CTAS).filter(|b| *b > 0.0)
    }

    /// `x / blocks`.
    fn per_block(&self, name: &str) -> Option<f64> {
        Some(self.m(name)? / self.blocks()?)
    }

    /// Stall reasons present, largest first: (reason, warps per issued instruction).
    fn stalls(&self) -> Vec<(&'static str, f64)> {
        let mut v: Vec<(&'static str, f64)> = STALL_REASONS
            .iter()
            .filter_map(|r| Some((*r, self.m(&stall_metric(r))?)))
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    }

    /// The largest stall reason (never `selected`, which is issuing) and its share of the
    /// warps' stalled states.
    fn dominant_stall(&self) -> Option<(&'static str, f64, f64)> {
        let s = self.stalls();
        let (r, v) = *s.iter().find(|(r, _)| *r != "selected")?;
        Some((r, v, self.stall_share(r)?))
    }

    /// `reason`'s share of the warps' stalled states (every reason but `selected`).
    fn stall_share(&self, reason: &str) -> Option<f64> {
        let s = self.stalls();
        let total: f64 = s
            .iter()
            .filter(|(r, _)| *r != "selected")
            .map(|(_, v)| v)
            .sum();
        let v = s.iter().find(|(r, _)| *r == reason)?.1;
        Some(if total > 0.0 { v / total } else { 0.0 })
    }
}

impl Counters for super::raw::Launch {
    fn m(&self, name: &str) -> Option<f64> {
        self.num(name)
    }

    fn name(&self) -> Option<&str> {
        Some(&self.kernel)
    }
}
