//! The table: every kernel's entry, and the constructors its rows share.

use super::{Chain, Family, Kernel, Shape, Shared, Tree};
use crate::launch::{reduce, roofs, stream, transpose};
use crate::model::{self, CountsFn};
use crate::roofs as roof;
use crate::{Backend, Dtype};

const ALL_COMPILERS: &[Backend] = &[Backend::Llvm, Backend::Nvvm, Backend::Nvcc];
const RUST_ONLY: &[Backend] = &[Backend::Llvm, Backend::Nvvm];
const BOTH_TYPES: &[Dtype] = &[Dtype::F32, Dtype::I32];
const F32: &[Dtype] = &[Dtype::F32];
const I32: &[Dtype] = &[Dtype::I32];

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
        dtypes: I32,
        ..roof(
            roof::LOAD_WAIT,
            Shape::Blocks {
                elements_per_block: RB64,
            },
            Shared::PerThread,
            4,
            "v1-v3's load phase alone: one element per thread into shared memory, a barrier",
        )
    },
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
