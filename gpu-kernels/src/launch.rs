//! Launch constants the kernels are compiled with. One file, three readers: this crate, the
//! host-side catalogue (`catalog`, which compiles this file too), and the CUDA C++ twins
//! (`cargo xtask ptx` passes each constant to nvcc as `-D LAB_<MODULE>_<NAME>=<value>`). So
//! this file holds nothing but `pub const` items of integer types in `pub mod`s.

/// The reductions (`reduce.rs`).
pub mod reduce {
    /// Threads per block, fixed at compile time so every tree loop unrolls completely.
    pub const BLOCK: u32 = 256;
    /// Warps per block.
    pub const WARPS: u32 = BLOCK / 32;
    /// Values each v4 and v5 thread adds privately before the tree.
    pub const COARSEN: u32 = 8;
    /// Independent 16-byte loads each v7 thread has in flight per loop trip (64 bytes).
    pub const V7_UNROLL: u64 = 4;
}

/// The transposes (`transpose.rs`).
pub mod transpose {
    /// Tile edge of the 32×32 tiles, and the block's x extent.
    pub const TILE: u32 = 32;
    /// Rows each thread of a 32×8 block copies per tile pass: the block's y extent.
    pub const ROWS_PER_PASS: u32 = 8;
    /// Tile edge of the v4 transpose: a 64×64 f32 tile, 16 KiB of shared memory.
    pub const V4_TILE: u32 = 64;
    /// Threads per block (one dimension) of the v4 transpose: each moves 16 elements as four
    /// 16-byte groups.
    pub const V4_THREADS: u32 = 256;
}

/// The ceiling kernels (`stream.rs`).
pub mod stream {
    /// Threads per block of the read and copy streams.
    pub const BLOCK: u32 = 256;
    /// Threads per block of the FMA peak kernel.
    pub const FMA_BLOCK: u32 = 256;
    /// Independent FMA chains per thread: enough to cover the FMA latency (about 4 cycles) even
    /// with few warps per scheduler, so the pipes, not the dependencies, set the pace.
    pub const FMA_CHAINS: u32 = 8;
    /// Chain steps per loop trip (unrolled: 8 × 16 = 128 FMAs per trip, so the loop's counter,
    /// compare and branch are ~2% of the issued instructions).
    pub const FMA_UNROLL: u32 = 16;
}

/// The roof kernels (`roofs.rs`).
pub mod roofs {
    /// Threads per block of every roof kernel: the reductions' block, so the block and
    /// atomic roofs are measured with the blocks the reductions launch.
    pub const BLOCK: u32 = 256;
    /// `atomic_spread`: words from one red's address to the next line's (128 bytes of f32).
    pub const LINE_WORDS: u32 = 32;
    /// `atomic_spread`: reds each warp's lane 0 issues.
    pub const SPREAD_REDS_PER_WARP: u32 = 256;
    /// `shared_rw`: load–store steps per loop trip, one per word of the warp's 32-word row,
    /// so each lane reads every word of its row once per trip.
    pub const SHARED_STEPS: u32 = 32;
}

/// The fault catalogue (`faults.rs`): each fault of the microscope's catalogue planted in a
/// kernel, and its fixed twin.
pub mod faults {
    /// Threads per block of every fault kernel but the GEMMs' and the async copies'.
    pub const BLOCK: u32 = 256;
    /// The GEMMs: threads per block, and the block's tile of C (`GEMM_TILE` × `GEMM_TILE`).
    pub const GEMM_THREADS: u32 = 256;
    pub const GEMM_TILE: u32 = 128;
    /// k per shared-memory stage: the FP32 GEMM's, and the BF16 GEMM's (two k16 steps).
    pub const GEMM_K_F32: u32 = 8;
    pub const GEMM_K_BF16: u32 = 32;
    /// Row pitch of the BF16 GEMM's shared tiles, in BF16 elements: 32 + 8, so the eight rows
    /// a fragment load touches start in eight different banks.
    pub const GEMM_PITCH_BF16: u32 = 40;
    /// Elements between two reads of the uncoalesced copy (one per 128-byte line).
    pub const STRIDE: u32 = 32;
    /// Elements each thread of the strided copy and of the SFU pair handles (of the barrier
    /// pair: per loop trip), all its loads issued before the first use: one 4-byte load in
    /// flight per thread leaves too few bytes in flight to fill the H200's DRAM (about 1 MB of
    /// the ~4 MB its latency needs).
    pub const PER_THREAD: u32 = 4;
    /// Values each thread of the occupancy pair keeps live across its loop.
    pub const LIVE_FAULT: u32 = 96;
    pub const LIVE_FIXED: u32 = 2;
    /// Words of a line of the occupancy pair's table (1 KiB: two 16-byte loads per lane, one
    /// line per warp-wide step).
    pub const LINE_WORDS: u32 = 256;
    /// Edge of the bank-conflict pair's per-warp tile (32 × 32 words), and its row pitches.
    pub const TILE: u32 = 32;
    pub const PITCH_FAULT: u32 = 32;
    pub const PITCH_FIXED: u32 = 33;
    /// The tail pair: FMA steps per unit of work, its independent chains per thread, and units
    /// per block of the faulty grid.
    pub const UNIT_STEPS: u32 = 1024;
    pub const UNIT_CHAINS: u32 = 8;
    pub const UNITS_PER_BLOCK: u32 = 16;
    /// Blocks of the undersized grid.
    pub const UNDERSIZED_BLOCKS: u32 = 16;
    /// Words of the spill pair's per-thread array, and the passes over it.
    pub const SPILL_WORDS: u32 = 32;
    pub const SPILL_PASSES: u32 = 2;
    /// The async-copy pair: threads per block (one 16-byte copy each per tile, a 16 KiB tile),
    /// and the stages of the pipelined twin (the fault has one).
    pub const ASYNC_THREADS: u32 = 1024;
    pub const ASYNC_STAGES: u32 = 4;
    /// Sines per element of the SFU pair (`sin(kθ)`, k = 1 … `SFU_TERMS`).
    pub const SFU_TERMS: u32 = 32;
    /// The L2 pair's working sets, in 16-byte groups (log2): 16 MiB (fits the 60 MB L2) and
    /// 256 MiB (4.3 × the L2).
    pub const L2_FITS_LOG2: u32 = 20;
    pub const L2_EXCEEDS_LOG2: u32 = 24;
    /// Elements per sum of the barrier pair: a warp's 32 lanes, one each.
    pub const SEGMENT: u32 = 32;
}

/// The row-wise family (`rows.rs`): softmax, RMSNorm and LayerNorm over each row of a
/// row-major matrix, the row held in registers between its one read and its one write. Each
/// thread holds a fixed number of 16-byte vectors of the row (4 f32 or 8 bf16 each), so a
/// schedule's longest row is its threads per row × its vectors per thread × 16 bytes;
/// `catalog::rows` picks the schedule and the launch from the row's length.
pub mod rows {
    /// Warp per row: 16-byte vectors each lane holds (a row of up to 32 × 4 × 16 B = 2 KiB:
    /// 512 f32, 1024 bf16; with the weights beside them, 32–64 registers a thread).
    pub const WARP_VECTORS: u32 = 4;
    /// Narrow warp per row: 16-byte vectors each lane holds (rows of up to 1 KiB: 256 f32,
    /// 512 bf16). A kernel's registers are sized for the vectors it may hold, not those the
    /// row has: a row of 512 bf16 (2 vectors a lane) in the warp kernel, sized for 4, loads
    /// with the registers, so the fewer warps an SM, of a row twice as long (LayerNorm's: 64
    /// registers, 32 warps, where the narrow kernel takes 40, 50 warps). On the H200, with
    /// the weights loaded after the merge (the narrow kernels 24–32 registers, the warp ones
    /// up to 40), the narrow kernels took LayerNorm bf16 at 65536 × 512 from 0.95–0.96 to
    /// 0.976–0.995 x copy and softmax up by 0.3–1.2 %; RMSNorm, whose warp kernel kept to 32
    /// then, moved within 1 % (four runs: results/rows/3d6381d/experiments,
    /// results/rows/979852d).
    pub const NARROW_VECTORS: u32 = 2;
    /// Warp per row: warps (rows) per block. A block's slot on its SM is freed when its last
    /// warp finishes, so its other warps' slots wait idle on its slowest row: the fewer warps
    /// a block the less waits, down to 2, where the SM's 32 blocks still hold its 64 warps
    /// (on the H200, 2 instead of 8 took LayerNorm bf16 at 65536 × 512 from 0.91 to 0.95 x
    /// copy and every warp kernel there up by 0.01–0.03).
    pub const WARP_ROWS_PER_BLOCK: u32 = 2;
    /// Block per row: 16-byte vectors each thread holds (4: a block of 1024 threads holds a
    /// row of up to 64 KiB: 16384 f32, 32768 bf16).
    pub const BLOCK_VECTORS: u32 = 4;
    /// Block per row: the largest block.
    pub const BLOCK_MAX_THREADS: u32 = 1024;
    /// Wide block per row: 16-byte vectors each thread holds, and the largest block: 1024 × 8
    /// × 16 B, a row of up to 128 KiB (32768 f32, 65536 bf16). Its kernels take 48–64
    /// registers a thread, so two blocks of up to 512 fit an SM where the block schedule's
    /// (LayerNorm's 36–40 registers) leaves one block of 1024 alone, nothing loading while it
    /// merges and stores; and one block of 1024 holds a row twice as long as the block's.
    pub const WIDE_VECTORS: u32 = 8;
    pub const WIDE_MAX_THREADS: u32 = 1024;
    /// Cluster per row: 16-byte vectors each thread holds, and threads per block: a block
    /// holds 512 × 8 × 16 B = 64 KiB of the row.
    pub const CLUSTER_VECTORS: u32 = 8;
    pub const CLUSTER_THREADS: u32 = 512;
    /// Cluster per row, BF16: threads per block (256 × 8 × 16 B = 32 KiB of the row). A BF16
    /// vector is twice an f32 vector's elements, twice the work a byte (unpacking,
    /// exponentials, packing); four blocks of 256 an SM (56–64 registers) leave three others
    /// to load while one works, where two of 512 leave one (the likely reason: not profiled).
    /// On the H200 (results/rows/2b7e5aa): softmax bf16 0.88 → 0.90 x copy at 1024 x 131072,
    /// LayerNorm bf16 0.76 → 0.82; f32 in blocks of 256 was slower (softmax 0.94 → 0.90
    /// there: clusters of 16 instead of 8).
    pub const CLUSTER_THREADS_BF16: u32 = 256;
    /// Cluster per row: the threads an SM holds at once, two blocks of `CLUSTER_THREADS` or
    /// four of `CLUSTER_THREADS_BF16`. Some cluster kernels' PTX carries it as launch bounds
    /// (`.maxntid`, `.minnctapersm`: `catalog::rows::launch_bounds` says which and why), so
    /// ptxas fits them to 64 registers a thread (65536 / 1024): not more, fitting half the
    /// blocks, nor fewer, leaving row loads for later.
    pub const CLUSTER_SM_THREADS: u32 = 1024;
    /// Cluster per row: the fewest and the most blocks per cluster (16 is past the portable 8:
    /// the launch allows it on the function first; 2 at least, so every row crosses the
    /// distributed shared memory).
    pub const CLUSTER_MIN: u32 = 2;
    pub const CLUSTER_MAX: u32 = 16;
    /// Streamed block per row: threads per block, and the 16-byte vectors each thread loads
    /// at once in each pass over the row (nothing held across passes: any row length, read
    /// from DRAM once and again from the L2 while it is there). A block of 1024 an SM, as
    /// torch.compile's looped reduction for RMSNorm f32 at 4096 x 32768 runs (ncu on the H200:
    /// blocks of 1024, 54 registers, one an SM, 539 MB read from DRAM for the 537 MB matrix,
    /// results/rows/1bb9ff0/experiments/peer-kernels-launch-ncu.txt): 132 rows of 128 KiB in
    /// flight, 17 MB of the L2's 60; 64 bytes a thread in flight, 64 KiB an SM. 8 vectors took
    /// ptxas to 72–80 registers in RMSNorm and 126–128 in LayerNorm (the output pass holds `x`,
    /// `w` and `b` of each): past the 64 a block of 1024 may have
    /// (results/asm/streamed-77e1ae0.txt).
    pub const STREAMED_THREADS: u32 = 1024;
    pub const STREAMED_VECTORS: u32 = 4;
    /// Shared words per partial statistic (one slot per warp, and one for the block): 4 words,
    /// 16 bytes, of which a statistic uses up to 3.
    pub const SLOT_WORDS: u32 = 4;
    /// Dynamic shared memory of every launch: 32 warp slots, 32 more (a cluster's rows of odd
    /// turn), `2 · CLUSTER_MAX` block slots (a cluster's statistics, even and odd turns),
    /// then two 8-byte barriers (`rows/group.rs`'s `cluster_shared` lays them out).
    pub const SHARED_BYTES: u32 = (64 + 2 * CLUSTER_MAX) * SLOT_WORDS * 4 + 16;
    /// Dynamic shared memory of a cluster block of two rows (`rows/group.rs`'s `ClusterPair`)
    /// before its kept weights: for each half, warp slots of two turns (a half's at most
    /// `CLUSTER_THREADS / 32` warps), block slots of two turns and two barriers. Under
    /// `2 · SHARED_BYTES` by the 32 warp slots a turn a half never fills, which keeps a block
    /// of 1024 f32 threads with its kept `w` and `b` under the SM's 132 KiB carveout.
    pub const PAIR_SHARED_BYTES: u32 =
        2 * ((2 * (CLUSTER_THREADS / 32) + 2 * CLUSTER_MAX) * SLOT_WORDS * 4 + 16);
    /// Cluster per row, LayerNorm: its threads' first vectors of `b` kept in shared memory
    /// past their `CLUSTER_VECTORS` of `w` (the host asks for `threads · 16` bytes a kept
    /// vector). `w`, 3 vectors of `b` and the merges' slots take 181 KiB of the SM's 256 for
    /// two blocks of 512, the L1 the rest (with 4, 197 KiB, past the 196 KiB carveout: slower
    /// on the H200 than none, results/rows/b9aa4d6; with 5, 216 KiB, the L1 28 KiB: 5–13 %
    /// slower in f32 and 10–12 % in bf16, results/rows/e8c249d/experiments; with 2, 1 or none,
    /// an L1 of 60, 92 or 92 KiB, slower or level at every cluster shape,
    /// results/rows/2cb137a/experiments).
    pub const CLUSTER_KEPT_B_VECTORS: u32 = 3;
}

/// The launch-gap demo kernel (`bump.rs`).
pub mod bump {
    /// Threads per block.
    pub const BLOCK: u32 = 256;
}
