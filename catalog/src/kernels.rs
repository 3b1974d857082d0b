//! The catalogue: every kernel the lab launches, as data.
//!
//! Adding a version is one entry here (plus the kernel itself in `gpu-kernels`, and its C++
//! twin when it has one): the launchers, `lab bench`, `lab run`, the profilers, `asm`,
//! `sanitize`, the GPU tests and the plots read this table instead of naming kernels.

use crate::launch::{reduce, roofs, stream, transpose};
use crate::model::{self, CountsFn};
use crate::roofs as roof;
use crate::{Backend, Dtype};

/// What a kernel is for; also the bench's sections and `--kernel`'s family names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// The hardware ceilings and roofs measured in every run (read stream, FMA peak, the
    /// atomic, shared-memory, block, scattered-store and tile-order roofs).
    Ceiling,
    /// Σ of a vector, into one result word.
    Reduce,
    /// Matrix transposes, and the copy kernel of the same bytes.
    Transpose,
    /// The launch-gap demo.
    LaunchGap,
}

impl Family {
    pub const ALL: [Family; 4] = [
        Family::Ceiling,
        Family::Reduce,
        Family::Transpose,
        Family::LaunchGap,
    ];

    /// `ceiling`, `reduce`, `transpose`, `launch_gap`: the `--kernel` family names.
    pub fn name(self) -> &'static str {
        match self {
            Family::Ceiling => "ceiling",
            Family::Reduce => "reduce",
            Family::Transpose => "transpose",
            Family::LaunchGap => "launch_gap",
        }
    }

    /// Other names `--kernel` accepts for the family.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Family::Reduce => &["reductions"],
            Family::Transpose => &["transposes"],
            _ => &[],
        }
    }
}

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
    /// sectors, FLOPs) for the model's prediction (`model`); None for the roofs themselves and
    /// the launch-gap demo.
    pub counts: Option<CountsFn>,
    /// The block tree a reduction's blocks run, whose roof kernel bounds it (`model`).
    pub tree: Option<Tree>,
    /// Parameters of each PTX entry point (what the launcher passes; `asm --check` holds the
    /// PTX to it). 0 for a library call.
    pub params: u8,
    /// One line for `--list`.
    pub about: &'static str,
}

const ALL_COMPILERS: &[Backend] = &[Backend::Llvm, Backend::Nvvm, Backend::Nvcc];
const RUST_ONLY: &[Backend] = &[Backend::Llvm, Backend::Nvvm];
const BOTH_TYPES: &[Dtype] = &[Dtype::F32, Dtype::I32];
const F32: &[Dtype] = &[Dtype::F32];

const RB: u32 = reduce::BLOCK;
const RB64: u64 = reduce::BLOCK as u64;

/// A reduction of the chapter's sequence: `BLOCK` threads, carried by all three compilers.
const fn reduction(
    name: &'static str,
    shape: Shape,
    shared: Shared,
    chain: Chain,
    (counts, tree): (CountsFn, Option<Tree>),
    about: &'static str,
) -> Kernel {
    Kernel {
        name,
        family: Family::Reduce,
        dtypes: BOTH_TYPES,
        compilers: ALL_COMPILERS,
        block: (RB, 1),
        shape,
        shared,
        chain,
        library: None,
        counts: Some(counts),
        tree,
        params: 3,
        about,
    }
}

/// A transpose of square 32×32 tiles with 32×8 blocks.
const fn tiled(
    name: &'static str,
    shared: Shared,
    counts: CountsFn,
    about: &'static str,
) -> Kernel {
    Kernel {
        name,
        family: Family::Transpose,
        dtypes: F32,
        compilers: ALL_COMPILERS,
        block: (transpose::TILE, transpose::ROWS_PER_PASS),
        shape: Shape::Tiles {
            tile: transpose::TILE,
            down_columns: false,
        },
        shared,
        chain: Chain::None,
        library: None,
        counts: Some(counts),
        tree: None,
        params: 4,
        about,
    }
}

/// A bandwidth-ceiling kernel of `stream.rs`: one 16-byte group per thread, carried by all
/// three compilers.
const fn stream_kernel(
    name: &'static str,
    family: Family,
    params: u8,
    counts: CountsFn,
    about: &'static str,
) -> Kernel {
    Kernel {
        name,
        family,
        dtypes: F32,
        compilers: ALL_COMPILERS,
        block: (stream::BLOCK, 1),
        shape: Shape::Blocks {
            elements_per_block: stream::BLOCK as u64 * 4,
        },
        shared: Shared::None,
        chain: Chain::None,
        library: None,
        counts: Some(counts),
        tree: None,
        params,
        about,
    }
}

/// A roof kernel of `roofs.rs`: blocks of `roofs::BLOCK` threads unless `shape` says
/// otherwise, carried by the two Rust compilers, one entry point named like the kernel.
const fn roof(
    name: &'static str,
    shape: Shape,
    shared: Shared,
    params: u8,
    about: &'static str,
) -> Kernel {
    Kernel {
        name,
        family: Family::Ceiling,
        dtypes: &[],
        compilers: RUST_ONLY,
        block: (roofs::BLOCK, 1),
        shape,
        shared,
        chain: Chain::None,
        library: None,
        counts: None,
        tree: None,
        params,
        about,
    }
}

/// A reduction tree's roof: one block per tree, the reductions' block and shared memory, in
/// both of their element types.
const fn tree_roof(name: &'static str, about: &'static str) -> Kernel {
    Kernel {
        dtypes: BOTH_TYPES,
        ..roof(
            name,
            Shape::Blocks {
                elements_per_block: 1,
            },
            Shared::PerThread,
            1,
            about,
        )
    }
}

/// Every kernel, in the order `all` runs them.
pub const KERNELS: &[Kernel] = &[
    reduction(
        "reduce_v1",
        Shape::Blocks {
            elements_per_block: RB64,
        },
        Shared::PerThread,
        Chain::PerThread(1),
        (model::one_red_per_block::<150, 9>, Some(Tree::V1)),
        "interleaved addressing: tid % (2·stride) adds",
    ),
    reduction(
        "reduce_v2",
        Shape::Blocks {
            elements_per_block: RB64,
        },
        Shared::PerThread,
        Chain::PerThread(1),
        (model::one_red_per_block::<150, 9>, Some(Tree::V2)),
        "compact thread index: the same pairs, packed threads, bank conflicts",
    ),
    reduction(
        "reduce_v3",
        Shape::Blocks {
            elements_per_block: RB64,
        },
        Shared::PerThread,
        Chain::PerThread(1),
        (model::one_red_per_block::<45, 9>, Some(Tree::V3)),
        "sequential addressing: fold the upper half onto the lower",
    ),
    reduction(
        "reduce_v4",
        Shape::Blocks {
            elements_per_block: RB64 * reduce::COARSEN as u64,
        },
        Shared::PerThread,
        Chain::PerThread(reduce::COARSEN as u64),
        (model::one_red_per_block::<45, 9>, Some(Tree::V3)),
        "coarsening: 8 values per thread in a register, then v3's tree",
    ),
    reduction(
        "reduce_v5",
        Shape::Blocks {
            elements_per_block: RB64 * reduce::COARSEN as u64,
        },
        Shared::PerThread,
        Chain::PerThread(reduce::COARSEN as u64),
        (model::one_red_per_block::<28, 3>, Some(Tree::V5)),
        "v4, with warp shuffles for the last five levels",
    ),
    reduction(
        "reduce_v6",
        Shape::OneWave {
            elements_per_block: RB64 * 4,
        },
        Shared::PerWarp,
        Chain::GridStride {
            per_trip: 4,
            extra: 4,
        },
        (model::one_red_per_block::<9, 1>, None),
        "one wave, grid-stride 16-byte loads, warp shuffles",
    ),
    Kernel {
        compilers: RUST_ONLY,
        ..reduction(
            "reduce_v7",
            Shape::OneWave {
                elements_per_block: RB64 * 4 * reduce::V7_UNROLL,
            },
            Shared::PerWarp,
            Chain::GridStride {
                per_trip: 4,
                extra: 6,
            },
            (model::one_red_per_block::<9, 1>, None),
            "v6 with four non-coherent 16-byte loads in flight per thread",
        )
    },
    Kernel {
        compilers: RUST_ONLY,
        ..reduction(
            "reduce_v3_shfl",
            Shape::Blocks {
                elements_per_block: RB64,
            },
            Shared::PerThread,
            Chain::PerThread(1),
            (model::one_red_per_block::<28, 3>, Some(Tree::V5)),
            "v3 with v5's shuffles: what the shuffles save, without the coarsening",
        )
    },
    Kernel {
        name: "cub_reduce_sum",
        family: Family::Reduce,
        dtypes: BOTH_TYPES,
        compilers: &[],
        block: (0, 0),
        shape: Shape::Blocks {
            elements_per_block: 0,
        },
        shared: Shared::None,
        chain: Chain::Library,
        library: Some("cub::DeviceReduce::Sum"),
        counts: Some(model::library_reduction::<2>),
        tree: None,
        params: 0,
        about: "CUB's DeviceReduce::Sum, the reference",
    },
    tiled(
        "transpose_naive",
        Shared::None,
        // 1024 one-lane store sectors and the 128 sectors of its coalesced loads per tile.
        model::moved_once::<0, 1152, 0>,
        "coalesced reads, writes down a column",
    ),
    tiled(
        "transpose_tiled",
        Shared::Tile {
            rows: transpose::TILE,
            pitch: transpose::TILE,
        },
        model::moved_once::<1056, 0, 1>,
        "through a 32×32 shared tile (32-way bank conflicts)",
    ),
    tiled(
        "transpose_padded",
        Shared::Tile {
            rows: transpose::TILE,
            pitch: transpose::TILE + 1,
        },
        model::moved_once::<64, 0, 1>,
        "through a 32×33 shared tile (no conflicts)",
    ),
    Kernel {
        name: "transpose_v4",
        family: Family::Transpose,
        dtypes: F32,
        compilers: RUST_ONLY,
        block: (transpose::V4_THREADS, 1),
        shape: Shape::Tiles {
            tile: transpose::V4_TILE,
            down_columns: true,
        },
        shared: Shared::Tile {
            rows: transpose::V4_TILE,
            pitch: transpose::V4_TILE,
        },
        chain: Chain::None,
        library: None,
        counts: Some(model::moved_once::<256, 0, 1>),
        tree: None,
        params: 4,
        about: "64×64 XOR-swizzled tile, 16-byte global accesses",
    },
    // One 16-byte group per thread, a block per 4 KiB: the resident blocks walk one narrow
    // window of addresses, which the DRAM serves faster than a one-wave grid-stride walk of the
    // same bytes (docs/experiments.md, E11, E14).
    stream_kernel(
        "copy_stream",
        Family::Transpose,
        3,
        model::moved_once::<0, 0, 0>,
        "the copy ceiling as a kernel: every element read and written once",
    ),
    stream_kernel(
        "read_stream",
        Family::Ceiling,
        4,
        model::read_once,
        "the read ceiling: every byte read once, nothing written",
    ),
    Kernel {
        name: "fma_peak",
        family: Family::Ceiling,
        dtypes: F32,
        compilers: ALL_COMPILERS,
        block: (stream::FMA_BLOCK, 1),
        shape: Shape::Waves { waves: 2 },
        shared: Shared::None,
        chain: Chain::None,
        library: None,
        counts: None,
        tree: None,
        params: 5,
        about: "the FP32 compute ceiling: independent FMA chains, no memory traffic",
    },
    // The roofs: the atomic entry points carry the element type their `red` adds (the
    // same-address chain in both of the reductions' types); the others move untyped 32-bit
    // words.
    Kernel {
        dtypes: BOTH_TYPES,
        ..roof(
            roof::ATOMIC_SAME,
            Shape::Blocks {
                elements_per_block: 1,
            },
            Shared::None,
            2,
            "same-address atomics: each block, after a barrier, adds 1 to one word (thread 0)",
        )
    },
    Kernel {
        dtypes: F32,
        ..roof(
            roof::ATOMIC_SPREAD,
            Shape::Blocks {
                elements_per_block: (roofs::BLOCK / 32 * roofs::SPREAD_REDS_PER_WARP) as u64,
            },
            Shared::None,
            2,
            "spread atomics: lane 0 of each warp adds 1 to word after word, each in another line",
        )
    },
    roof(
        roof::SHARED_RW,
        Shape::Waves { waves: 2 },
        Shared::Tile {
            rows: 3,
            pitch: roofs::BLOCK,
        },
        2,
        "shared-memory roof: conflict-free 32-bit loads and stores, one wavefront each",
    ),
    roof(
        roof::EMPTY_BLOCKS,
        Shape::Blocks {
            elements_per_block: 1,
        },
        Shared::None,
        1,
        "block roof: thread 0 marks that its block ran; nothing else",
    ),
    Kernel {
        block: (transpose::TILE, transpose::ROWS_PER_PASS),
        ..roof(
            roof::SCATTER_STORE,
            Shape::Tiles {
                tile: transpose::TILE,
                down_columns: false,
            },
            Shared::None,
            3,
            "the naive transpose's stores alone: each lane 4 bytes into its own 32-byte sector",
        )
    },
    tree_roof(
        roof::TREE_V1,
        "v1's tree alone: values made in registers, no load, no red",
    ),
    tree_roof(
        roof::TREE_V2,
        "v2's tree alone: values made in registers, no load, no red",
    ),
    tree_roof(
        roof::TREE_V3,
        "v3's tree alone: values made in registers, no load, no red",
    ),
    tree_roof(
        roof::TREE_V5,
        "v5's tree (v3's to 64, then shuffles) alone: no load, no red",
    ),
    Kernel {
        block: (transpose::TILE, transpose::ROWS_PER_PASS),
        ..roof(
            roof::TILE_COPY,
            Shape::Tiles {
                tile: transpose::TILE,
                down_columns: false,
            },
            Shared::None,
            4,
            "the 32x32 transposes' DRAM order: each tile copied row for row to its transposed spot",
        )
    },
    Kernel {
        name: "bump",
        family: Family::LaunchGap,
        dtypes: &[],
        compilers: ALL_COMPILERS,
        block: (crate::launch::bump::BLOCK, 1),
        shape: Shape::Blocks {
            elements_per_block: crate::launch::bump::BLOCK as u64,
        },
        shared: Shared::None,
        chain: Chain::None,
        library: None,
        counts: None,
        tree: None,
        params: 2,
        about: "the launch-gap demo: data[i] += 1",
    },
];

impl Kernel {
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
        }
    }
}

/// The kernel named `name` exactly.
pub fn find(name: &str) -> Option<&'static Kernel> {
    KERNELS.iter().find(|k| k.name == name)
}

/// Every PTX entry point `backend` must carry, in catalogue order.
pub fn entries(backend: Backend) -> Vec<String> {
    KERNELS
        .iter()
        .filter(|k| k.carried_by(backend))
        .flat_map(Kernel::entries)
        .collect()
}

/// One kernel a `--kernel` spec picked, with the element type when the spec named an entry
/// point (`reduce_v3_i32`).
#[derive(Clone, Copy, Debug)]
pub struct Selected {
    pub kernel: &'static Kernel,
    pub dtype: Option<Dtype>,
}

impl PartialEq for Selected {
    fn eq(&self, other: &Selected) -> bool {
        self.kernel.name == other.kernel.name && self.dtype == other.dtype
    }
}

/// `--kernel`'s rule, the same in every command. Each comma-separated item is, in this order:
/// `all`; a family name (`reduce`, `transpose`, `ceiling`, `launch_gap`, or `reductions`,
/// `transposes`); a kernel's exact name (`reduce_v3`, `cub_reduce_sum`); a PTX entry point
/// (`reduce_v3_i32`); a name without its family's name in front (`v3`, `padded`); or a substring of exactly one
/// kernel's name (`cub`, `shfl`).
/// The result keeps the order given, without duplicates. A substring that matches several
/// kernels, or none, is an error that lists the candidates.
pub fn select(spec: &str) -> Result<Vec<Selected>, String> {
    let mut out: Vec<Selected> = Vec::new();
    let mut push = |s: Selected| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    let whole = |k: &'static Kernel| Selected {
        kernel: k,
        dtype: None,
    };
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if item == "all" {
            KERNELS.iter().map(whole).for_each(&mut push);
            continue;
        }
        if let Some(f) = Family::ALL
            .into_iter()
            .find(|f| f.name() == item || f.aliases().contains(&item))
        {
            KERNELS
                .iter()
                .filter(|k| k.family == f)
                .map(whole)
                .for_each(&mut push);
            continue;
        }
        if let Some(k) = find(item) {
            push(whole(k));
            continue;
        }
        if let Some((k, d)) = KERNELS.iter().find_map(|k| {
            k.dtypes
                .iter()
                .find(|&&d| k.entry(d) == item)
                .map(|&d| (k, d))
        }) {
            push(Selected {
                kernel: k,
                dtype: Some(d),
            });
            continue;
        }
        // The name without its family's name in front: `v3` is reduce_v3 even though
        // reduce_v3_shfl contains it too.
        if let Some(k) = KERNELS.iter().find(|k| {
            k.name
                .strip_prefix(k.family.name())
                .and_then(|short| short.strip_prefix('_'))
                == Some(item)
        }) {
            push(whole(k));
            continue;
        }
        let matches: Vec<&'static Kernel> =
            KERNELS.iter().filter(|k| k.name.contains(item)).collect();
        match matches[..] {
            [k] => push(whole(k)),
            [] => {
                return Err(format!(
                    "'{item}' matches no kernel; valid: all, {}, or a kernel: {}",
                    Family::ALL.map(Family::name).join(", "),
                    KERNELS
                        .iter()
                        .map(|k| k.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            _ => {
                return Err(format!(
                    "'{item}' matches {} kernels ({}): name one",
                    matches.len(),
                    matches
                        .iter()
                        .map(|k| k.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("no kernel named".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(spec: &str) -> Vec<String> {
        select(spec)
            .unwrap()
            .iter()
            .map(|s| match s.dtype {
                Some(d) => s.kernel.entry(d),
                None => s.kernel.name.to_string(),
            })
            .collect()
    }

    #[test]
    fn one_rule_for_names_families_entries_and_substrings() {
        assert_eq!(names("reduce_v3"), ["reduce_v3"]);
        assert_eq!(names("v3"), ["reduce_v3"]);
        assert_eq!(names("shfl"), ["reduce_v3_shfl"]);
        assert_eq!(names("v3_shfl"), ["reduce_v3_shfl"]);
        assert_eq!(names("cub"), ["cub_reduce_sum"]);
        assert_eq!(names("reduce_v3_i32"), ["reduce_v3_i32"]);
        assert_eq!(names("padded,v3,padded"), ["transpose_padded", "reduce_v3"]);
        let t = names("transposes");
        assert_eq!(t, names("transpose"));
        assert!(t.contains(&"copy_stream".to_string()) && t.contains(&"transpose_v4".to_string()));
        assert_eq!(names("all").len(), KERNELS.len());
    }

    #[test]
    fn an_ambiguous_or_unknown_name_is_refused_with_the_candidates() {
        let e = select("stream").unwrap_err();
        assert!(
            e.contains("copy_stream") && e.contains("read_stream"),
            "{e}"
        );
        let e = select("nope").unwrap_err();
        assert!(e.contains("reduce_v1") && e.contains("launch_gap"), "{e}");
        assert!(select(" , ").is_err());
    }

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
        assert!(!entries(Backend::Llvm).iter().any(|e| e.starts_with("cub")));
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
