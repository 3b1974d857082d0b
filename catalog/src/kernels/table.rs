//! The table: every kernel's entry, and the constructors its rows share.

use super::counts::{self, CountsFn};
use super::faults::{Fault, pairs};
use super::{Chain, Kernel, Shape, Shared, Tree};
use crate::Family;
use crate::launch::{faults, reduce, roofs, rows, stream, transpose};
use crate::roofs as roof;
use crate::rows::{Op, Schedule};
use crate::{Backend, Dtype};

const ALL_COMPILERS: &[Backend] = &[Backend::Llvm, Backend::Nvvm, Backend::Nvcc];
const RUST_ONLY: &[Backend] = &[Backend::Llvm, Backend::Nvvm];
const BOTH_TYPES: &[Dtype] = &[Dtype::F32, Dtype::I32];
const F32: &[Dtype] = &[Dtype::F32];
const I32: &[Dtype] = &[Dtype::I32];
const ROW_TYPES: &[Dtype] = &crate::rows::DTYPES;

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
        fault: None,
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
        fault: None,
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
        fault: None,
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
        fault: None,
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

/// A kernel of the fault catalogue (`gpu-kernels/src/faults.rs`): carried by the two Rust
/// compilers, one entry point named like the kernel, no model counts (the faults are judged by
/// their profiles and timed against their twins).
const fn fault_kernel(
    name: &'static str,
    block: (u32, u32),
    shape: Shape,
    shared: Shared,
    params: u8,
    fault: Fault,
    about: &'static str,
) -> Kernel {
    Kernel {
        name,
        family: Family::Faults,
        dtypes: &[],
        compilers: RUST_ONLY,
        block,
        shape,
        shared,
        chain: Chain::None,
        library: None,
        counts: None,
        tree: None,
        params,
        about,
        fault: Some(fault),
    }
}

/// A row-wise kernel (`gpu-kernels/src/rows.rs`): `op` over each row of a matrix, f32 and
/// BF16, held by `schedule`'s threads; the block is the schedule's largest (the block
/// schedule's is sized from the row at launch).
const fn row_kernel(
    name: &'static str,
    (op, schedule): (Op, Schedule),
    compilers: &'static [Backend],
    about: &'static str,
) -> Kernel {
    let threads = match schedule {
        Schedule::Narrow | Schedule::Warp => 32 * rows::WARP_ROWS_PER_BLOCK,
        Schedule::Block => rows::BLOCK_MAX_THREADS,
        Schedule::Wide => rows::WIDE_MAX_THREADS,
        Schedule::Cluster => rows::CLUSTER_THREADS,
        Schedule::Streamed => rows::STREAMED_THREADS,
        Schedule::Pair => 2 * rows::CLUSTER_THREADS,
    };
    Kernel {
        name,
        family: Family::Rows,
        dtypes: ROW_TYPES,
        compilers,
        block: (threads, 1),
        shape: Shape::Rows { op, schedule },
        shared: Shared::Bytes(schedule.shared_bytes(op, threads)),
        chain: Chain::None,
        library: None,
        counts: Some(counts::rows_moved_once),
        tree: None,
        params: 7,
        about,
        fault: None,
    }
}

const FB: (u32, u32) = (faults::BLOCK, 1);
/// One element (or thread's task) per thread.
const PER_THREAD: Shape = Shape::Blocks {
    elements_per_block: faults::BLOCK as u64,
};
/// Four elements per thread (one 16-byte group, or `faults::PER_THREAD` separate loads).
const PER_THREAD_GROUP: Shape = Shape::Blocks {
    elements_per_block: 4 * faults::BLOCK as u64,
};
const GEMM_TILES: Shape = Shape::Tiles {
    tile: faults::GEMM_TILE,
    down_columns: false,
};
const SPILL_BLOCKS: Shape = Shape::Blocks {
    elements_per_block: (faults::BLOCK * faults::SPILL_PASSES * faults::SPILL_WORDS) as u64,
};

/// Every kernel, in the order `all` runs them.
pub const KERNELS: &[Kernel] = &[
    reduction(
        "reduce_v1",
        Shape::Blocks {
            elements_per_block: RB64,
        },
        Shared::PerThread,
        Chain::PerThread(1),
        (counts::one_red_per_block::<150, 9>, Some(Tree::V1)),
        "interleaved addressing: tid % (2·stride) adds",
    ),
    reduction(
        "reduce_v2",
        Shape::Blocks {
            elements_per_block: RB64,
        },
        Shared::PerThread,
        Chain::PerThread(1),
        (counts::one_red_per_block::<150, 9>, Some(Tree::V2)),
        "compact thread index: the same pairs, packed threads, bank conflicts",
    ),
    reduction(
        "reduce_v3",
        Shape::Blocks {
            elements_per_block: RB64,
        },
        Shared::PerThread,
        Chain::PerThread(1),
        (counts::one_red_per_block::<45, 9>, Some(Tree::V3)),
        "sequential addressing: fold the upper half onto the lower",
    ),
    reduction(
        "reduce_v4",
        Shape::Blocks {
            elements_per_block: RB64 * reduce::COARSEN as u64,
        },
        Shared::PerThread,
        Chain::PerThread(reduce::COARSEN as u64),
        (counts::one_red_per_block::<45, 9>, Some(Tree::V3)),
        "coarsening: 8 values per thread in a register, then v3's tree",
    ),
    reduction(
        "reduce_v5",
        Shape::Blocks {
            elements_per_block: RB64 * reduce::COARSEN as u64,
        },
        Shared::PerThread,
        Chain::PerThread(reduce::COARSEN as u64),
        (counts::one_red_per_block::<28, 3>, Some(Tree::V5)),
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
        (counts::one_red_per_block::<9, 1>, None),
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
            (counts::one_red_per_block::<9, 1>, None),
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
            (counts::one_red_per_block::<28, 3>, Some(Tree::V5)),
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
        counts: Some(counts::library_reduction::<2>),
        tree: None,
        params: 0,
        about: "CUB's DeviceReduce::Sum, the reference",
        fault: None,
    },
    tiled(
        "transpose_naive",
        Shared::None,
        // 1024 one-lane store sectors and the 128 sectors of its coalesced loads per tile.
        counts::moved_once::<0, 1152, 0>,
        "coalesced reads, writes down a column",
    ),
    tiled(
        "transpose_tiled",
        Shared::Tile {
            rows: transpose::TILE,
            pitch: transpose::TILE,
        },
        counts::moved_once::<1056, 0, 1>,
        "through a 32×32 shared tile (32-way bank conflicts)",
    ),
    tiled(
        "transpose_padded",
        Shared::Tile {
            rows: transpose::TILE,
            pitch: transpose::TILE + 1,
        },
        counts::moved_once::<64, 0, 1>,
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
        counts: Some(counts::moved_once::<256, 0, 1>),
        tree: None,
        params: 4,
        about: "64×64 XOR-swizzled tile, 16-byte global accesses",
        fault: None,
    },
    // One 16-byte group per thread, a block per 4 KiB: the resident blocks walk one narrow
    // window of addresses, which the DRAM serves faster than a one-wave grid-stride walk of the
    // same bytes (docs/experiments.md, E11, E14).
    stream_kernel(
        "copy_stream",
        Family::Transpose,
        3,
        counts::moved_once::<0, 0, 0>,
        "the copy ceiling as a kernel: every element read and written once",
    ),
    stream_kernel(
        "read_stream",
        Family::Ceiling,
        4,
        counts::read_once,
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
        fault: None,
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
        fault: None,
    },
    // The fault catalogue: each fault, then its fixed twin.
    fault_kernel(
        "tensor_cores_fault",
        (faults::GEMM_THREADS, 1),
        GEMM_TILES,
        Shared::Tile {
            rows: 2 * faults::GEMM_K_F32,
            pitch: faults::GEMM_TILE,
        },
        6,
        pairs::TENSOR_CORES.0,
        "FP32 GEMM C = A·Bᵀ, 128×128 tiles, 8×8 FMAs per thread and k: the FMA pipe",
    ),
    fault_kernel(
        "tensor_cores_fixed",
        (faults::GEMM_THREADS, 1),
        GEMM_TILES,
        Shared::Tile {
            rows: 2 * faults::GEMM_TILE,
            pitch: faults::GEMM_PITCH_BF16 / 2,
        },
        6,
        pairs::TENSOR_CORES.1,
        "the same GEMM in BF16 on the tensor cores: mma.sync.m16n8k16, f32 accumulators",
    ),
    fault_kernel(
        "coalescing_fault",
        FB,
        PER_THREAD_GROUP,
        Shared::None,
        4,
        pairs::COALESCING.0,
        "out[i] = in[32·i], four per thread: every lane of a warp in its own 128-byte line",
    ),
    fault_kernel(
        "coalescing_fixed",
        FB,
        PER_THREAD_GROUP,
        Shared::None,
        4,
        pairs::COALESCING.1,
        "out[i] = in[i], four per thread: one line per warp per load",
    ),
    fault_kernel(
        "occupancy_fault",
        FB,
        PER_THREAD,
        Shared::None,
        4,
        pairs::OCCUPANCY.0,
        "a warp-wide chase of 1 KiB lines with 96 live values per thread: 12.5 % occupancy",
    ),
    fault_kernel(
        "occupancy_fixed",
        FB,
        PER_THREAD,
        Shared::None,
        4,
        pairs::OCCUPANCY.1,
        "the same chase with 2 live values: full occupancy, eight times the bytes in flight",
    ),
    fault_kernel(
        "bank_conflicts_fault",
        FB,
        Shape::Blocks {
            elements_per_block: (faults::BLOCK * faults::TILE) as u64,
        },
        Shared::Tile {
            rows: faults::BLOCK,
            pitch: faults::PITCH_FAULT,
        },
        3,
        pairs::BANK_CONFLICTS.0,
        "column reads of a 32×32 shared tile per warp: 32-way bank conflicts",
    ),
    fault_kernel(
        "bank_conflicts_fixed",
        FB,
        Shape::Blocks {
            elements_per_block: (faults::BLOCK * faults::TILE) as u64,
        },
        Shared::Tile {
            rows: faults::BLOCK,
            pitch: faults::PITCH_FIXED,
        },
        3,
        pairs::BANK_CONFLICTS.1,
        "the same reads of a 32×33 tile: no conflicts",
    ),
    fault_kernel(
        "tail_fault",
        FB,
        Shape::WavePercent { percent: 115 },
        Shared::None,
        5,
        pairs::TAIL.0,
        "1.15 waves of long blocks, one per SM (16 FMA-bound units each): the last 0.15 wave \
         runs alone",
    ),
    fault_kernel(
        "tail_fixed",
        FB,
        Shape::Waves { waves: 1 },
        Shared::None,
        5,
        pairs::TAIL.1,
        "the same units on exactly one wave of grid-stride blocks, one per SM",
    ),
    fault_kernel(
        "undersized_grid_fault",
        FB,
        Shape::Grid {
            blocks: faults::UNDERSIZED_BLOCKS as u64,
        },
        Shared::None,
        5,
        pairs::UNDERSIZED_GRID.0,
        "a grid-stride a·x + b on 16 blocks: 16 of the SMs, one block each",
    ),
    fault_kernel(
        "undersized_grid_fixed",
        FB,
        Shape::Waves { waves: 1 },
        Shared::None,
        5,
        pairs::UNDERSIZED_GRID.1,
        "the same loop on one wave of blocks",
    ),
    fault_kernel(
        "divergence_fault",
        FB,
        PER_THREAD,
        Shared::None,
        3,
        pairs::DIVERGENCE.0,
        "two long integer paths chosen by lane parity: every warp runs both",
    ),
    fault_kernel(
        "divergence_fixed",
        FB,
        PER_THREAD,
        Shared::None,
        3,
        pairs::DIVERGENCE.1,
        "the same paths chosen by warp parity: each warp runs one",
    ),
    fault_kernel(
        "spills_fault",
        FB,
        SPILL_BLOCKS,
        Shared::None,
        3,
        pairs::SPILLS.0,
        "32 words per thread indexed through a run-time shift: local memory",
    ),
    fault_kernel(
        "spills_fixed",
        FB,
        SPILL_BLOCKS,
        Shared::None,
        2,
        pairs::SPILLS.1,
        "the same words indexed at compile time: registers",
    ),
    fault_kernel(
        "memory_bound_twopass",
        FB,
        PER_THREAD_GROUP,
        Shared::None,
        5,
        pairs::MEMORY_BOUND.0,
        "the control: y = a·x + b at the DRAM roof, launched twice (x → t → y)",
    ),
    fault_kernel(
        "memory_bound_fused",
        FB,
        PER_THREAD_GROUP,
        Shared::None,
        7,
        pairs::MEMORY_BOUND.1,
        "both passes fused into one: half the bytes, the same results",
    ),
    fault_kernel(
        "async_stages_fault",
        (faults::ASYNC_THREADS, 1),
        Shape::Waves { waves: 1 },
        Shared::Tile {
            rows: 1,
            pitch: 4 * faults::ASYNC_THREADS,
        },
        3,
        pairs::ASYNC_STAGES.0,
        "16 KiB tiles by cp.async, one stage: wait_group 0 after every copy",
    ),
    fault_kernel(
        "async_stages_fixed",
        (faults::ASYNC_THREADS, 1),
        Shape::Waves { waves: 1 },
        Shared::Tile {
            rows: faults::ASYNC_STAGES,
            pitch: 4 * faults::ASYNC_THREADS,
        },
        3,
        pairs::ASYNC_STAGES.1,
        "the same tiles through a four-stage ring: wait_group 3",
    ),
    fault_kernel(
        "sfu_fault",
        FB,
        PER_THREAD_GROUP,
        Shared::None,
        3,
        pairs::SFU.0,
        "Σ sin(kθ), k = 1..32, each by sin.approx: the XU pipe",
    ),
    fault_kernel(
        "sfu_fixed",
        FB,
        PER_THREAD_GROUP,
        Shared::None,
        3,
        pairs::SFU.1,
        "the same sum from an FMA recurrence: the FMA pipe",
    ),
    fault_kernel(
        "l2_resident_fault",
        FB,
        Shape::Waves { waves: 1 },
        Shared::None,
        3,
        pairs::L2_RESIDENT.0,
        "2 GiB of 16-byte loads over a 16 MiB working set: the L2 serves them",
    ),
    fault_kernel(
        "l2_resident_fixed",
        FB,
        Shape::Waves { waves: 1 },
        Shared::None,
        3,
        pairs::L2_RESIDENT.1,
        "the same loads over 256 MiB: the DRAM serves them",
    ),
    fault_kernel(
        "barrier_fault",
        FB,
        Shape::OneWave {
            elements_per_block: (faults::BLOCK * faults::PER_THREAD) as u64,
        },
        Shared::PerThread,
        3,
        pairs::BARRIER.0,
        "sums of 32 elements by a shared-memory butterfly: ten barriers per 256 elements",
    ),
    fault_kernel(
        "barrier_fixed",
        FB,
        Shape::OneWave {
            elements_per_block: (faults::BLOCK * faults::PER_THREAD) as u64,
        },
        Shared::None,
        3,
        pairs::BARRIER.1,
        "the same sums by five warp shuffles: no barrier",
    ),
    // The row-wise family (the chapter's Part II): each operation in each schedule.
    row_kernel(
        "softmax_narrow",
        (Op::Softmax, Schedule::Narrow),
        ALL_COMPILERS,
        "softmax, a warp per row of up to 1 KiB, 2 vectors a lane: the registers such a row needs, every warp an SM holds",
    ),
    row_kernel(
        "softmax_warp",
        (Op::Softmax, Schedule::Warp),
        ALL_COMPILERS,
        "softmax, a warp per row held in registers: five shuffles per statistic, no barrier",
    ),
    row_kernel(
        "softmax_block",
        (Op::Softmax, Schedule::Block),
        ALL_COMPILERS,
        "softmax, a block per row held in registers: shuffles, one shared slot per warp, one barrier",
    ),
    row_kernel(
        "softmax_wide",
        (Op::Softmax, Schedule::Wide),
        RUST_ONLY,
        "softmax, a block per row of up to 1024 threads holding 8 vectors each: rows twice the block's",
    ),
    row_kernel(
        "softmax_cluster",
        (Op::Softmax, Schedule::Cluster),
        ALL_COMPILERS,
        "softmax, a cluster per row: each block's statistic through distributed shared memory",
    ),
    row_kernel(
        "softmax_streamed",
        (Op::Softmax, Schedule::Streamed),
        RUST_ONLY,
        "softmax, a block per row holding none of it: three passes, the last two from the L2; any row length",
    ),
    row_kernel(
        "softmax_pair",
        (Op::Softmax, Schedule::Pair),
        RUST_ONLY,
        "softmax, a cluster per two rows, one a half of each block: one half loads while the other merges and writes",
    ),
    row_kernel(
        "rmsnorm_narrow",
        (Op::RmsNorm, Schedule::Narrow),
        RUST_ONLY,
        "RMSNorm, a warp per row of up to 1 KiB, 2 vectors a lane, its weights loaded with it: the registers such a row needs, every warp an SM holds",
    ),
    row_kernel(
        "rmsnorm_warp",
        (Op::RmsNorm, Schedule::Warp),
        RUST_ONLY,
        "RMSNorm, a warp per row held in registers, its weights loaded with it",
    ),
    row_kernel(
        "rmsnorm_block",
        (Op::RmsNorm, Schedule::Block),
        RUST_ONLY,
        "RMSNorm, a block per row held in registers",
    ),
    row_kernel(
        "rmsnorm_wide",
        (Op::RmsNorm, Schedule::Wide),
        RUST_ONLY,
        "RMSNorm, a block per row of up to 1024 threads holding 8 vectors each: rows twice the block's",
    ),
    row_kernel(
        "rmsnorm_cluster",
        (Op::RmsNorm, Schedule::Cluster),
        RUST_ONLY,
        "RMSNorm, a cluster per row through distributed shared memory",
    ),
    row_kernel(
        "rmsnorm_streamed",
        (Op::RmsNorm, Schedule::Streamed),
        RUST_ONLY,
        "RMSNorm, a block per row holding none of it: two passes, the second from the L2, as torch.compile's looped reduction; any row length",
    ),
    row_kernel(
        "rmsnorm_pair",
        (Op::RmsNorm, Schedule::Pair),
        RUST_ONLY,
        "RMSNorm, a cluster per two rows, one a half of each block, one copy of `w` for both: one half loads while the other merges and writes",
    ),
    row_kernel(
        "layernorm_narrow",
        (Op::LayerNorm, Schedule::Narrow),
        RUST_ONLY,
        "LayerNorm, a warp per row of up to 1 KiB, 2 vectors a lane, its weights loaded with it: the registers such a row needs, 50 warps an SM",
    ),
    row_kernel(
        "layernorm_warp",
        (Op::LayerNorm, Schedule::Warp),
        RUST_ONLY,
        "LayerNorm, a warp per row held in registers, its weights loaded with it: the mean, then the variance about it, five shuffles each",
    ),
    row_kernel(
        "layernorm_block",
        (Op::LayerNorm, Schedule::Block),
        RUST_ONLY,
        "LayerNorm, a block per row held in registers",
    ),
    row_kernel(
        "layernorm_wide",
        (Op::LayerNorm, Schedule::Wide),
        RUST_ONLY,
        "LayerNorm, a block per row of up to 1024 threads holding 8 vectors each: two blocks of 512 fit an SM",
    ),
    row_kernel(
        "layernorm_cluster",
        (Op::LayerNorm, Schedule::Cluster),
        RUST_ONLY,
        "LayerNorm, a cluster per row through distributed shared memory",
    ),
    row_kernel(
        "layernorm_streamed",
        (Op::LayerNorm, Schedule::Streamed),
        RUST_ONLY,
        "LayerNorm, a block per row holding none of it: three passes, the last two from the L2; any row length",
    ),
    row_kernel(
        "layernorm_pair",
        (Op::LayerNorm, Schedule::Pair),
        RUST_ONLY,
        "LayerNorm, a cluster per two rows, one a half of each block, one copy of `w` and `b` for both: one half loads while the other merges and writes",
    ),
];
