//! The catalogue: every kernel the lab launches, as data.
//!
//! Adding a version is one entry in [`table`] (plus the kernel itself in `gpu-kernels`, and its
//! C++ twin when it has one): the launchers, `lab bench`, `lab run`, the profilers, `asm`,
//! `sanitize`, the GPU tests and the plots read the table instead of naming kernels. This
//! file holds what an entry is; [`select`] is `--kernel`'s rule.

use crate::roofs as roof;
use crate::{Backend, Dtype, Family};

pub mod counts;
mod faults;
mod select;
mod table;

pub use counts::CountsFn;
pub use faults::{Fault, Pair, verdict};

pub use select::{Selected, select};
pub use table::KERNELS;

/// How many blocks a launch has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A 1-D grid of `ceil(n / elements_per_block)` blocks.
    Blocks { elements_per_block: u64 },
    /// A 1-D grid of at most one wave (blocks per SM from the occupancy API × SMs), and never
    /// more blocks than `ceil(n / elements_per_block)`.
    OneWave { elements_per_block: u64 },
    /// A 2-D grid of `tile × tile` tiles. In raster order (`down_columns: false`)
    /// `blockIdx.x` walks along the input's tile columns: grid `(ceil(cols / tile),
    /// ceil(rows / tile))`. Down the columns (`true`) `blockIdx.x` walks down the input's tile
    /// rows: grid `(ceil(rows / tile), ceil(cols / tile))`, so the blocks resident at one time
    /// write a narrow band of output rows (docs/experiments.md, E13).
    Tiles { tile: u32, down_columns: bool },
    /// `waves` full waves of blocks (every block the same work, no tail).
    Waves { waves: u64 },
    /// `percent` % of one wave of blocks, rounded up (115: one full wave and a sliver).
    WavePercent { percent: u64 },
    /// Exactly `blocks` blocks, whatever the GPU.
    Grid { blocks: u64 },
    /// A row-wise kernel of a `rows × cols` matrix: `op` over each row, held by a warp, a
    /// block or a cluster (`schedule`), the launch from the row's length
    /// ([`crate::rows::Schedule::launch`]).
    Rows {
        op: crate::rows::Op,
        schedule: crate::rows::Schedule,
    },
}

/// Dynamic shared memory per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    None,
    /// One element per thread of the block.
    PerThread,
    /// One element per warp of the block.
    PerWarp,
    /// A `rows × pitch` tile of 4-byte elements.
    Tile {
        rows: u32,
        pitch: u32,
    },
    /// A fixed number of bytes, whatever the element type.
    Bytes(u32),
}

/// The longest chain of dependent additions one thread makes before the block's tree: with
/// the tree's levels and one atomic per block it bounds the f32 rounding error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chain {
    /// Not a reduction.
    None,
    /// A fixed number of values per thread.
    PerThread(u64),
    /// A grid-stride loop over `per_trip`-element trips, `extra` more adds (head, tail, the
    /// trip's own tree).
    GridStride { per_trip: u64, extra: u64 },
    /// A library call with its own order (CUB).
    Library,
}

/// A reduction's block tree, each run alone by a roof kernel of its own
/// (`gpu-kernels/src/roofs.rs`: the same function the reduction calls, no load, no `red`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tree {
    /// v1's interleaved tree (`tid % (2·stride)`).
    V1,
    /// v2's compact-index tree (bank conflicts).
    V2,
    /// v3's sequential tree (v3, v4).
    V3,
    /// v3's tree down to 64 values, then warp 0's shuffles (v5, v3_shfl).
    V5,
}

impl Tree {
    pub const ALL: [Tree; 4] = [Tree::V1, Tree::V2, Tree::V3, Tree::V5];

    /// The roof kernel that runs this tree alone (its catalogue name).
    pub fn roof(self) -> &'static str {
        match self {
            Tree::V1 => roof::TREE_V1,
            Tree::V2 => roof::TREE_V2,
            Tree::V3 => roof::TREE_V3,
            Tree::V5 => roof::TREE_V5,
        }
    }
}

/// One kernel of the catalogue.
#[derive(Clone, Copy, Debug)]
pub struct Kernel {
    /// `reduce_v3`: what `--kernel` takes and every table shows.
    pub name: &'static str,
    pub family: Family,
    /// The element types it is instantiated for; its PTX entry points are `<name>_<dtype>`.
    /// Empty: one entry named `name` (the demo kernel).
    pub dtypes: &'static [Dtype],
    /// The compilers whose PTX carries it; empty for a library call.
    pub compilers: &'static [Backend],
    /// Threads per block (x, y).
    pub block: (u32, u32),
    pub shape: Shape,
    pub shared: Shared,
    pub chain: Chain,
    /// A library routine the lab calls instead of launching its own kernel (CUB).
    pub library: Option<&'static str>,
    /// What one launch does (bytes, blocks, barriers, atomics, shared wavefronts, scattered
    /// sectors, FLOPs: [`counts`]) for the model's prediction; None for the roofs themselves and
    /// the launch-gap demo.
    pub counts: Option<CountsFn>,
    /// The block tree a reduction's blocks run, whose roof kernel bounds it (`model`).
    pub tree: Option<Tree>,
    /// Parameters of each PTX entry point (what the launcher passes; `asm --check` holds the
    /// PTX to it). 0 for a library call.
    pub params: u8,
    /// One line for `--list`.
    pub about: &'static str,
    /// A kernel of the fault catalogue: its pair, its twin and what its profile must show.
    pub fault: Option<Fault>,
}

impl Kernel {
    /// Launches of its entry point one run makes (`lab run`'s profiled range holds them all).
    pub fn launches(&self) -> u32 {
        self.fault.map_or(1, |f| f.launches)
    }

    /// The PTX entry point for `dtype` (`reduce_v3_f32`), or the kernel's name when it has
    /// no element type.
    pub fn entry(&self, dtype: Dtype) -> String {
        if self.dtypes.is_empty() {
            self.name.to_string()
        } else {
            format!("{}_{}", self.name, dtype.name())
        }
    }

    /// Every PTX entry point of this kernel.
    pub fn entries(&self) -> Vec<String> {
        if self.dtypes.is_empty() {
            vec![self.name.to_string()]
        } else {
            self.dtypes.iter().map(|&d| self.entry(d)).collect()
        }
    }

    /// Whether `backend`'s PTX has this kernel.
    pub fn carried_by(&self, backend: Backend) -> bool {
        self.compilers.contains(&backend)
    }

    /// Dynamic shared memory per block for `elem_bytes`-byte elements.
    pub fn shared_bytes(&self, elem_bytes: u32) -> u32 {
        let threads = self.block.0 * self.block.1;
        match self.shared {
            Shared::None => 0,
            Shared::PerThread => threads * elem_bytes,
            Shared::PerWarp => threads / 32 * elem_bytes,
            Shared::Tile { rows, pitch } => rows * pitch * 4,
            Shared::Bytes(b) => b,
        }
    }
}

/// What the chapter's own kernels must be diagnosed with (the rule their profile's headline
/// names, or [`verdict::NONE`]): what the chapter says binds each (its §6 and §7), as the lab
/// measured it on the H200 (docs/profiling.md): v1–v3 are their result word's chain of
/// atomics, the naive transpose its scattered stores, the tiled one its bank conflicts; the
/// rest have no fault to fix.
const CHAPTER_VERDICTS: [(&str, &str); 13] = [
    ("reduce_v1", verdict::ATOMICS),
    ("reduce_v2", verdict::ATOMICS),
    ("reduce_v3", verdict::ATOMICS),
    ("reduce_v3_shfl", verdict::ATOMICS),
    ("reduce_v4", verdict::NONE),
    ("reduce_v5", verdict::NONE),
    ("reduce_v6", verdict::NONE),
    ("reduce_v7", verdict::NONE),
    ("transpose_naive", verdict::COALESCING),
    ("transpose_tiled", verdict::BANK_CONFLICTS),
    ("transpose_padded", verdict::NONE),
    ("transpose_v4", verdict::NONE),
    ("copy_stream", verdict::NONE),
];

/// The verdict `kernel`'s profile must get: a fault kernel's from its record, a chapter
/// kernel's from [`CHAPTER_VERDICTS`]; None for the kernels no diagnosis is held to (the
/// ceilings, the roofs, the library's call, the launch-gap demo).
pub fn expected_verdict(kernel: &Kernel) -> Option<&'static str> {
    match kernel.fault {
        Some(f) => Some(f.verdict),
        None => CHAPTER_VERDICTS
            .iter()
            .find(|(name, _)| *name == kernel.name)
            .map(|(_, v)| *v),
    }
}

/// Whether `name` is a library routine's entry of the catalogue (CUB's reduction), whose rows
/// charts and tables set apart as the reference.
pub fn is_library(name: &str) -> bool {
    find(name).is_some_and(|k| k.library.is_some())
}

/// The kernel named `name` exactly.
pub fn find(name: &str) -> Option<&'static Kernel> {
    KERNELS.iter().find(|k| k.name == name)
}

/// The launch bounds of `backend`'s PTX entry `entry` ([`crate::rows::launch_bounds`]): the
/// most threads a block and the fewest blocks an SM, or None.
pub fn launch_bounds(backend: Backend, entry: &str) -> Option<(u32, u32)> {
    KERNELS.iter().find_map(|k| match k.shape {
        Shape::Rows { op, schedule } => k
            .dtypes
            .iter()
            .find(|&&d| k.entry(d) == entry)
            .and_then(|&d| crate::rows::launch_bounds(backend, op, schedule, d)),
        _ => None,
    })
}

/// Every PTX entry point `backend` must carry, in catalogue order.
pub fn entries(backend: Backend) -> Vec<String> {
    KERNELS
        .iter()
        .filter(|k| k.carried_by(backend))
        .flat_map(Kernel::entries)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_entries_are_unique() {
        let mut all: Vec<String> = KERNELS.iter().flat_map(Kernel::entries).collect();
        all.extend(KERNELS.iter().map(|k| k.name.to_string()));
        let n = all.len();
        all.sort();
        all.dedup();
        // A kernel's name equals its entry only for the kernels without an element type.
        let untyped = KERNELS.iter().filter(|k| k.dtypes.is_empty()).count();
        assert_eq!(n - all.len(), untyped);
    }

    #[test]
    fn compilers_carry_what_the_table_says() {
        let nvcc = entries(Backend::Nvcc);
        assert!(nvcc.contains(&"reduce_v6_i32".to_string()) && nvcc.contains(&"bump".to_string()));
        assert!(!nvcc.iter().any(|e| e.starts_with("reduce_v7")));
        assert!(entries(Backend::Llvm).contains(&"transpose_v4_f32".to_string()));
        assert!(!entries(Backend::Llvm).iter().any(|e| is_library(e)));
    }

    #[test]
    fn every_expected_verdict_names_a_kernel_and_a_verdict() {
        for (name, v) in CHAPTER_VERDICTS {
            let k = find(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(expected_verdict(k), Some(v));
            assert!(verdict::ALL.contains(&v), "{v}");
        }
        assert_eq!(expected_verdict(find("fma_peak").unwrap()), None);
        assert_eq!(
            expected_verdict(find("coalescing_fault").unwrap()),
            Some(verdict::COALESCING)
        );
    }

    #[test]
    fn every_roof_is_catalogued_as_a_ceiling() {
        for name in [
            roof::ATOMIC_SAME,
            roof::ATOMIC_SPREAD,
            roof::SHARED_RW,
            roof::EMPTY_BLOCKS,
            roof::SCATTER_STORE,
            roof::TILE_COPY,
            roof::LOAD_WAIT,
        ] {
            let k = find(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(k.family, Family::Ceiling, "{name}");
        }
    }

    #[test]
    fn faults_are_their_own_family() {
        let f: Vec<&Kernel> = KERNELS.iter().filter(|k| k.fault.is_some()).collect();
        assert_eq!(f.len(), 2 * Pair::ALL.len());
        assert!(f.iter().all(|k| k.family == Family::Faults));
        assert!(
            KERNELS
                .iter()
                .filter(|k| k.family == Family::Faults)
                .all(|k| k.fault.is_some())
        );
    }

    #[test]
    fn shared_memory_follows_the_shape() {
        let k = |n| find(n).unwrap();
        assert_eq!(k("reduce_v3").shared_bytes(4), 1024);
        assert_eq!(k("reduce_v6").shared_bytes(4), 32);
        assert_eq!(k("transpose_padded").shared_bytes(4), 32 * 33 * 4);
        assert_eq!(k("transpose_v4").shared_bytes(4), 64 * 64 * 4);
        assert_eq!(k("transpose_naive").shared_bytes(4), 0);
    }
}
