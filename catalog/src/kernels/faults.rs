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
