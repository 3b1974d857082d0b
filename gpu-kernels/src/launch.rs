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

/// The launch-gap demo kernel (`bump.rs`).
pub mod bump {
    /// Threads per block.
    pub const BLOCK: u32 = 256;
}
