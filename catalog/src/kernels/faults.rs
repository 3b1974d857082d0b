//! The fault catalogue's records: for each kernel of [`Family::Faults`](crate::Family::Faults)
//! the pair it belongs to, whether it is the fixed twin, the verdict its profile's headline
//! must get, and the ncu counter whose change between the twins shows the fix.
//!
//! The faults are the microscope's catalogue (`shared/seeds/ncu-kernel-microscope.txt`,
//! section 3), planted in Rust (`gpu-kernels/src/faults.rs`); `docs/faults.md` has the table.

/// The verdict ids a kernel's headline must get: one per fault of the catalogue, plus
/// [`NONE`] (a fixed twin: nothing to fix), [`MEMORY_BOUND`] (the control pair: healthy, at
/// the DRAM roof, whose fix is algorithmic) and [`ATOMICS`] (the chapter's v1–v3). Each is a
/// rule id of the profiler crate's diagnosis, which xtask's tests hold them to.
pub mod verdict {
    pub const TENSOR_CORES: &str = "tensor-cores";
    pub const COALESCING: &str = "coalescing";
    pub const OCCUPANCY: &str = "occupancy";
    pub const BANK_CONFLICTS: &str = "bank-conflicts";
    pub const TAIL: &str = "tail";
    pub const UNDERSIZED_GRID: &str = "undersized-grid";
    pub const DIVERGENCE: &str = "divergence";
    pub const SPILLS: &str = "spills";
    pub const MEMORY_BOUND: &str = "memory-bound";
    pub const ASYNC_STAGES: &str = "async-stages";
    pub const SFU: &str = "sfu";
    pub const L2_RESIDENT: &str = "l2-resident";
    pub const BARRIER: &str = "barrier";
    /// Not a planted fault: the chapter's v1–v3, whose result word's chain of atomics sets
    /// their pace.
    pub const ATOMICS: &str = "atomics";
    pub const NONE: &str = "none";

    /// Every id, faults first.
    pub const ALL: [&str; 15] = [
        TENSOR_CORES,
        COALESCING,
        OCCUPANCY,
        BANK_CONFLICTS,
        TAIL,
        UNDERSIZED_GRID,
        DIVERGENCE,
        SPILLS,
        MEMORY_BOUND,
        ASYNC_STAGES,
        SFU,
        L2_RESIDENT,
        BARRIER,
        ATOMICS,
        NONE,
    ];
}

/// A pair of the catalogue: a kernel with the fault and its fixed twin, one thing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pair {
    /// An FP32 GEMM on the FMA pipe; fixed: BF16 inputs on the tensor cores (`mma.sync`).
    TensorCores,
    /// A copy reading every 32nd element; fixed: consecutive elements.
    Coalescing,
    /// A latency-bound chase with 96 live values per thread; fixed: 2.
    Occupancy,
    /// Column reads of an unpadded 32 × 32 shared tile; fixed: a 32 × 33 tile.
    BankConflicts,
    /// 1.15 waves of long blocks; fixed: the same work on one wave, grid-stride.
    Tail,
    /// 16 blocks; fixed: one wave.
    UndersizedGrid,
    /// Two paths chosen per lane; fixed: per warp.
    Divergence,
    /// A per-thread array indexed at run time (local memory); fixed: at compile time.
    Spills,
    /// The control: one elementwise pass launched twice; "fixed": both fused into one.
    MemoryBound,
    /// `cp.async` with one stage; fixed: four.
    AsyncStages,
    /// 32 `sin.approx` per element; fixed: the same sines from an FMA recurrence.
    Sfu,
    /// Loads over a 16 MiB working set (the L2 holds it); fixed: 256 MiB.
    L2Resident,
    /// A shared-memory tree with a barrier per level, per 32 elements; fixed: warp shuffles.
    Barrier,
}

impl Pair {
    pub const ALL: [Pair; 13] = [
        Pair::TensorCores,
        Pair::Coalescing,
        Pair::Occupancy,
        Pair::BankConflicts,
        Pair::Tail,
        Pair::UndersizedGrid,
        Pair::Divergence,
        Pair::Spills,
        Pair::MemoryBound,
        Pair::AsyncStages,
        Pair::Sfu,
        Pair::L2Resident,
        Pair::Barrier,
    ];
}

/// What the catalogue states about one fault kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fault {
    pub pair: Pair,
    /// Whether this is the twin with the fix (for the memory-bound control: the fused pass).
    pub fixed: bool,
    /// The verdict id ([`verdict`]) its profile's headline must get.
    pub verdict: &'static str,
    /// The other kernel of the pair (its catalogue name).
    pub twin: &'static str,
    /// The ncu counter whose value moves between the twins (a name in
    /// `ncu --query-metrics --chip gh100`, or a `launch__` attribute) ...
    pub counter: &'static str,
    /// ... divided by this one, where the proof is a ratio (sectors per request).
    pub per: Option<&'static str>,
    /// The one thing changed between the twins.
    pub change: &'static str,
    /// The size the lab runs it at, in the unit its kernel's doc states (the GEMM's edge,
    /// elements, threads, or the tail's units per block).
    pub size: u64,
    /// Launches of its entry point per run (2: the memory-bound control's two passes).
    pub launches: u32,
}

impl Fault {
    /// The counters this record names: `counter`, then `per`.
    pub fn counters(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.counter).chain(self.per)
    }
}

/// Each pair's two records, which the table (`table.rs`) gives its two kernels.
pub(super) mod pairs {
    use super::{Fault, Pair, verdict};
    use crate::launch::faults;

    /// A pair's two records: the fault's (`verdict`), then the fixed twin's (`none`).
    #[allow(clippy::too_many_arguments)]
    const fn pair(
        pair: Pair,
        verdict: &'static str,
        (fault, fixed): (&'static str, &'static str),
        counter: &'static str,
        per: Option<&'static str>,
        change: &'static str,
        size: u64,
    ) -> (Fault, Fault) {
        let faulty = Fault {
            pair,
            fixed: false,
            verdict,
            twin: fixed,
            counter,
            per,
            change,
            size,
            launches: 1,
        };
        let twin = Fault {
            fixed: true,
            verdict: verdict::NONE,
            twin: fault,
            ..faulty
        };
        (faulty, twin)
    }

    pub const TENSOR_CORES: (Fault, Fault) = pair(
        Pair::TensorCores,
        verdict::TENSOR_CORES,
        ("tensor_cores_fault", "tensor_cores_fixed"),
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        None,
        "FP32 inputs and 8×8 fma.rn.f32 per k → BF16 inputs and mma.sync.m16n8k16 (f32 accumulate)",
        4096,
    );
    pub const COALESCING: (Fault, Fault) = pair(
        Pair::Coalescing,
        verdict::COALESCING,
        ("coalescing_fault", "coalescing_fixed"),
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        Some("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
        "read stride 32 elements → 1",
        1 << 26,
    );
    pub const OCCUPANCY: (Fault, Fault) = pair(
        Pair::Occupancy,
        verdict::OCCUPANCY,
        ("occupancy_fault", "occupancy_fixed"),
        "launch__occupancy_limit_registers",
        None,
        "96 live accumulators per thread → 2",
        1 << 18,
    );
    pub const BANK_CONFLICTS: (Fault, Fault) = pair(
        Pair::BankConflicts,
        verdict::BANK_CONFLICTS,
        ("bank_conflicts_fault", "bank_conflicts_fixed"),
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        Some("smsp__inst_executed_op_shared_ld.sum"),
        "shared tile row pitch 32 words → 33",
        1 << 23,
    );
    pub const TAIL: (Fault, Fault) = pair(
        Pair::Tail,
        verdict::TAIL,
        ("tail_fault", "tail_fixed"),
        "launch__waves_per_multiprocessor",
        None,
        "grid of 1.15 waves → one wave (the same grid-stride code and units)",
        faults::UNITS_PER_BLOCK as u64,
    );
    pub const UNDERSIZED_GRID: (Fault, Fault) = pair(
        Pair::UndersizedGrid,
        verdict::UNDERSIZED_GRID,
        ("undersized_grid_fault", "undersized_grid_fixed"),
        "launch__waves_per_multiprocessor",
        None,
        "grid of 16 blocks → one wave (the same grid-stride code)",
        1 << 26,
    );
    pub const DIVERGENCE: (Fault, Fault) = pair(
        Pair::Divergence,
        verdict::DIVERGENCE,
        ("divergence_fault", "divergence_fixed"),
        "smsp__thread_inst_executed_per_inst_executed.ratio",
        None,
        "path chosen by lane parity → by warp parity",
        1 << 20,
    );
    pub const SPILLS: (Fault, Fault) = pair(
        Pair::Spills,
        verdict::SPILLS,
        ("spills_fault", "spills_fixed"),
        "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
        None,
        "array index (e + shift) % 32, shift a run-time argument → e % 32",
        1 << 28,
    );
    pub const MEMORY_BOUND: (Fault, Fault) = {
        let (a, b) = pair(
            Pair::MemoryBound,
            verdict::MEMORY_BOUND,
            ("memory_bound_twopass", "memory_bound_fused"),
            "dram__bytes.sum",
            None,
            "two elementwise passes (x → t → y) → one fused pass (x → y)",
            1 << 28,
        );
        (
            Fault { launches: 2, ..a },
            Fault {
                verdict: verdict::MEMORY_BOUND,
                ..b
            },
        )
    };
    pub const ASYNC_STAGES: (Fault, Fault) = pair(
        Pair::AsyncStages,
        verdict::ASYNC_STAGES,
        ("async_stages_fault", "async_stages_fixed"),
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        None,
        "cp.async ring of 1 stage (wait_group 0) → 4 stages (wait_group 3)",
        1 << 28,
    );
    pub const SFU: (Fault, Fault) = pair(
        Pair::Sfu,
        verdict::SFU,
        ("sfu_fault", "sfu_fixed"),
        "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
        None,
        "sin(kθ) by sin.approx.f32 → by the FMA recurrence 2cosθ·sin kθ − sin(k−1)θ",
        1 << 26,
    );
    pub const L2_RESIDENT: (Fault, Fault) = pair(
        Pair::L2Resident,
        verdict::L2_RESIDENT,
        ("l2_resident_fault", "l2_resident_fixed"),
        "lts__t_sector_hit_rate.pct",
        None,
        "working set 16 MiB (fits the 60 MB L2) → 256 MiB",
        1 << 27,
    );
    pub const BARRIER: (Fault, Fault) = pair(
        Pair::Barrier,
        verdict::BARRIER,
        ("barrier_fault", "barrier_fixed"),
        "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
        None,
        "shared-memory butterfly, two barriers per level → five warp shuffles (shfl.bfly)",
        1 << 28,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Family;
    use crate::kernels::{KERNELS, find};
    use std::collections::HashSet;
    use std::io::Read;

    fn faults() -> impl Iterator<Item = (&'static crate::Kernel, Fault)> {
        KERNELS.iter().filter_map(|k| k.fault.map(|f| (k, f)))
    }

    /// Every pair has exactly one fault and one fixed twin, each naming the other; the fixed
    /// twins' verdict is `none`, the faults' their own (the control pair's both
    /// `memory-bound`); the names read `<pair>_fault` / `<pair>_fixed` but for the control.
    #[test]
    fn every_pair_is_a_fault_and_its_fixed_twin() {
        for pair in Pair::ALL {
            let both: Vec<_> = faults().filter(|(_, f)| f.pair == pair).collect();
            assert_eq!(both.len(), 2, "{pair:?}");
            let (a, b) = (both[0], both[1]);
            assert_ne!(a.1.fixed, b.1.fixed, "{pair:?}: one fault, one fix");
            assert_eq!((a.1.twin, b.1.twin), (b.0.name, a.0.name), "{pair:?}");
            let (fault, fixed) = if a.1.fixed { (b, a) } else { (a, b) };
            assert_eq!(fault.1.size, fixed.1.size, "{pair:?}: one problem");
            assert_eq!(fault.1.change, fixed.1.change, "{pair:?}");
            if pair == Pair::MemoryBound {
                assert_eq!(fault.1.verdict, verdict::MEMORY_BOUND);
                assert_eq!(fixed.1.verdict, verdict::MEMORY_BOUND);
            } else {
                assert_eq!(fixed.1.verdict, verdict::NONE, "{pair:?}");
                assert!(fault.0.name.ends_with("_fault"), "{}", fault.0.name);
                assert_eq!(
                    fixed.0.name,
                    fault.0.name.replace("_fault", "_fixed"),
                    "{pair:?}"
                );
                assert_ne!(fault.1.verdict, verdict::NONE, "{pair:?}");
            }
            assert!(verdict::ALL.contains(&fault.1.verdict), "{pair:?}");
            assert!(find(fault.1.twin).is_some_and(|k| k.family == Family::Faults));
        }
        let ids: HashSet<&str> = faults()
            .filter(|(_, f)| !f.fixed)
            .map(|(_, f)| f.verdict)
            .collect();
        assert_eq!(ids.len(), Pair::ALL.len(), "one verdict per fault");
    }

    /// Every counter a fault names exists for the H200: in `ncu --query-metrics --chip
    /// gh100` (ncu 2025.3.1, the fixture the profiler's own names are held to), or a
    /// `launch__` attribute of ncu's launch statistics.
    #[test]
    fn every_proving_counter_exists_on_gh100() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../xtask/tests/fixtures/ncu/metrics-gh100.txt.gz"
        );
        let mut list = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
            .read_to_string(&mut list)
            .unwrap();
        assert_eq!(list.lines().next(), Some("Chip gh100"));
        // First column; some names carry a `Unit.Config.` prefix.
        let known: HashSet<&str> = list
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(|n| n.rsplit('.').next().unwrap_or(n))
            .collect();
        let mut missing = Vec::new();
        for (k, f) in faults() {
            for name in f.counters() {
                let base = name.split('.').next().unwrap();
                if !(known.contains(base) || base.starts_with("launch__")) {
                    missing.push(format!("{}: {name}", k.name));
                }
            }
        }
        assert!(missing.is_empty(), "not in {path}: {missing:?}");
        // And the check can fail: a misspelt name is not in the list.
        assert!(!known.contains("sm__pipe_tensor_cycles_active_hmma"));
    }

    /// `docs/faults.md` has one row per pair naming both kernels, the fault's verdict and the
    /// proving counter(s), so the doc cannot fall behind the catalogue.
    #[test]
    fn the_doc_table_follows_the_catalogue() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/faults.md");
        let doc = std::fs::read_to_string(path).unwrap();
        for (k, f) in faults().filter(|(_, f)| !f.fixed) {
            let head = format!("| `{}` → `{}`", k.name, f.twin);
            let row = doc
                .lines()
                .find(|l| l.starts_with(&head))
                .unwrap_or_else(|| panic!("{path}: no row starting {head}"));
            assert!(row.contains(&format!("`{}`;", f.verdict)), "{row}");
            for c in f.counters() {
                assert!(row.contains(&format!("`{c}`")), "{c} not in: {row}");
            }
        }
    }
}
