//! The roofs: one small kernel per mechanism the lab's kernels can be bound by other than the
//! DRAM stream and the FP32 pipes (`stream.rs`). `lab bench` times each in the same run as the
//! rows they bound, and each leaves a result the host checks exactly, so a roof that stopped
//! doing its work would fail rather than report a rate.
//!
//! - [`atomic_same_f32`], [`atomic_same_i32`]: every block adds 1 to one word, the reductions'
//!   last step, in each element type.
//! - [`atomic_spread_f32`]: the same `red`s, each to another 128-byte line.
//! - [`shared_rw`]: conflict-free 32-bit shared-memory loads and stores.
//! - [`empty_blocks`]: blocks that do nothing but mark that they ran.
//! - [`scatter_store`]: the naive transpose's stores, one lane per 32-byte sector.
//! - [`tile_copy`]: the 32×32 transposes' DRAM order, without the transposition.
//! - [`tree_v1_f32`] … [`tree_v5_i32`]: each reduction's block tree alone, on values the
//!   threads make themselves (no load, no `red`): a roof of the kernels' own code.
//! - [`load_wait_i32`]: v1–v3's load phase alone (one element per thread into shared memory,
//!   a barrier), with and without the load: how long a block's load holds its slot.

use crate::device::*;
pub use crate::launch::roofs::*;
use crate::launch::transpose::{ROWS_PER_PASS, TILE};
use crate::reduce::{
    first_index, load_to_shared, tree_shfl, tree_v1, tree_v2, tree_v3, Elem, BLOCK as RB,
};
use crate::transpose::at;

/// `reds_per_block` times: a barrier, then thread 0 adds 1 to `*out` with one `red.global.add`
/// of `T` (`.f32` or `.s32`). With one trip this is what every reduction block ends with
/// (`sync_threads(); if tid == 0 { red }`), without the reading and the tree; with many trips
/// over one wave of blocks, the same `red`s without a block retiring after each.
///
/// - `out`: device pointer to one `T`, zeroed by the host; it ends at exactly
///   blocks × `reds_per_block` while that is at most 2^24 (every partial sum is an integer an
///   f32 holds exactly; an i32 holds up to 2^31 − 1).
///
/// # Launch
/// 1-D, blocks of [`BLOCK`] threads, no shared memory, any grid.
#[inline(always)]
unsafe fn atomic_same<T: Elem>(out: *mut T, reds_per_block: u32) {
    let mut i = 0;
    while i < reds_per_block {
        sync_threads();
        if thread_idx_x() == 0 {
            T::atomic_add(out, T::ONE);
        }
        i += 1;
    }
}

kernel! {
    fn atomic_same_f32(out: *mut f32, reds_per_block: u32) {
        atomic_same(out, reds_per_block)
    }
}
kernel! {
    fn atomic_same_i32(out: *mut i32, reds_per_block: u32) {
        atomic_same(out, reds_per_block)
    }
}

kernel! {
    /// Lane 0 of every warp adds 1.0 [`SPREAD_REDS_PER_WARP`] times, each time to the first
    /// word of another 128-byte line of `out`: the warp's `i`-th `red` goes to line
    /// `(warp + i · warps) mod lines`, so consecutive `red`s of one warp lie `warps` lines apart
    /// and the lines cover every L2 slice. No barrier, nothing waits for a `red`.
    ///
    /// - `out`: device pointer to `lines × LINE_WORDS` f32, zeroed by the host. Each line's first
    ///   word ends at the number of `red`s sent to it (counted on the host), every other word
    ///   at 0.
    /// - `lines`: a power of two.
    ///
    /// # Launch
    /// 1-D, blocks of [`BLOCK`] threads, no shared memory; warps × `SPREAD_REDS_PER_WARP` must
    /// stay below 2^32.
    fn atomic_spread_f32(out: *mut f32, lines: u32) {
        let warps_per_block = block_dim_x() / 32;
        let warps = grid_dim_x() * warps_per_block;
        let warp = block_idx_x() * warps_per_block + thread_idx_x() / 32;
        if thread_idx_x() % 32 == 0 {
            let mut i = 0;
            while i < SPREAD_REDS_PER_WARP {
                let line = (warp + i * warps) & (lines - 1);
                atomic_add_f32(out.add((line * LINE_WORDS) as usize), 1.0);
                i += 1;
            }
        }
    }
}

kernel! {
    /// Conflict-free shared-memory traffic. Thread `t` of block `b` (lane `l` of its warp's
    /// 32 threads, from thread `r` on) first writes `value = (b · BLOCK + t) · 0x9E3779B9`
    /// (wrapping) twice, to `a[2r + l]` and `a[2r + 32 + l]`: each warp's 32 values, twice
    /// over, in the first `2 · BLOCK` words. Then `trips` × [`SHARED_STEPS`] steps of one
    /// `ld.volatile.shared.u32` of `a[2r + l + step]` (32 lanes, 32 consecutive words, 32
    /// banks: one wavefront, at a fixed offset per step, so no address arithmetic) and one
    /// `st.volatile.shared.u32` of that value to the thread's own word of the last `BLOCK`
    /// words (one wavefront). The loaded values are summed (wrapping) and each thread stores
    /// its sum to `out[global thread index]`: `trips` × the sum of its warp's 32 values.
    ///
    /// - `out`: device pointer to one u32 per thread of the grid.
    ///
    /// # Launch
    /// 1-D, blocks of [`BLOCK`] threads, `3 · BLOCK · 4` bytes of dynamic shared memory, any
    /// grid: 2 · `trips` · `SHARED_STEPS` wavefronts per warp.
    fn shared_rw(trips: u32, out: *mut u32) {
        let s = Shared::<u32>::dynamic();
        let tid = thread_idx_x();
        let lane = tid % 32;
        let row = tid - lane;
        let value = block_idx_x()
            .wrapping_mul(BLOCK)
            .wrapping_add(tid)
            .wrapping_mul(0x9E37_79B9);
        s.set(2 * row + lane, value);
        s.set(2 * row + 32 + lane, value);
        sync_threads();
        let base = dynamic_shared::<u32>();
        let from = base.add((2 * row + lane) as usize);
        let mine = base.add((2 * BLOCK + tid) as usize);
        let mut sum = 0u32;
        let mut t = 0;
        while t < trips {
            let mut step = 0;
            while step < SHARED_STEPS {
                let v = ld_shared_volatile_u32(from.add(step as usize));
                st_shared_volatile_u32(mine, v);
                sum = sum.wrapping_add(v);
                step += 1;
            }
            t += 1;
        }
        let gtid = block_idx_x() as u64 * block_dim_x() as u64 + tid as u64;
        *out.add(gtid as usize) = sum;
    }
}

kernel! {
    /// Thread 0 of block `b` stores `b` to `marks[b]`; nothing else. The block scheduler's
    /// roof: how fast blocks of [`BLOCK`] threads start and retire.
    ///
    /// - `marks`: device pointer to one u32 per block (the host fills it with another value
    ///   first, so a block that never ran shows).
    ///
    /// # Launch
    /// 1-D, blocks of [`BLOCK`] threads, no shared memory, any grid.
    fn empty_blocks(marks: *mut u32) {
        if thread_idx_x() == 0 {
            *marks.add(block_idx_x() as usize) = block_idx_x();
        }
    }
}

kernel! {
    /// The naive transpose's stores without its loads: for a `rows × cols` input, thread
    /// (x, y) stores the input index `y · cols + x` (wrapping to 32 bits) to `output[x][y]`
    /// (`output` is `cols × rows`). A warp's 32 lanes write 32 different output rows: one
    /// 4-byte store into each of 32 sectors.
    ///
    /// - `output`: device pointer to `rows × cols` u32.
    ///
    /// # Launch
    /// The chapter's transposes' launch: block `(TILE, ROWS_PER_PASS)`, grid
    /// `(ceil(cols / TILE), ceil(rows / TILE))`, no shared memory.
    fn scatter_store(output: *mut u32, rows: u32, cols: u32) {
        let x = block_idx_x() * TILE + thread_idx_x();
        let y0 = block_idx_y() * TILE + thread_idx_y();
        let mut j = 0;
        while j < TILE {
            let y = y0 + j;
            if x < cols && y < rows {
                *output.add(at(x, y, rows)) = at(y, x, cols) as u32;
            }
            j += ROWS_PER_PASS;
        }
    }
}

/// Passes of a 32×8 block over its 32×32 tile.
const PASSES: usize = (TILE / ROWS_PER_PASS) as usize;

kernel! {
    /// The chapter's 32×32 transposes' traffic without the transposition: block (bx, by)
    /// copies input tile (by, bx) (tile row `by`, tile column `bx`) to output tile (bx, by),
    /// row for row: `output[32·bx + r][32·by + c] = input[32·by + r][32·bx + c]`. Each warp
    /// reads one 128-byte input row segment and writes one 128-byte output row segment per
    /// pass, in the transposes' raster order, and a thread's four loads come before its four
    /// stores, as in the tiled transposes: the same DRAM addresses in the same order, with no
    /// shared memory and no scattered stores.
    ///
    /// - `input`: device pointer to `rows × cols` u32; `output`: to `cols × rows` u32.
    /// - `rows`, `cols`: multiples of [`TILE`] (the host refuses others: an edge tile has no
    ///   row-for-row place in the output).
    ///
    /// # Launch
    /// The chapter's transposes' launch: block `(TILE, ROWS_PER_PASS)`, grid
    /// `(cols / TILE, rows / TILE)`, no shared memory.
    fn tile_copy(input: *const u32, output: *mut u32, rows: u32, cols: u32) {
        let (tx, ty) = (thread_idx_x(), thread_idx_y());
        let (bx, by) = (block_idx_x(), block_idx_y());
        let mut v = [0u32; PASSES];
        let mut p = 0;
        while p < PASSES {
            let r = ty + p as u32 * ROWS_PER_PASS;
            v[p] = *input.add(at(by * TILE + r, bx * TILE + tx, cols));
            p += 1;
        }
        let mut p = 0;
        while p < PASSES {
            let r = ty + p as u32 * ROWS_PER_PASS;
            *output.add(at(bx * TILE + r, by * TILE + tx, rows)) = v[p];
            p += 1;
        }
    }
}

/// What thread `tid` of block `block` puts in shared memory before a tree roof's tree:
/// `(tid ^ (block & 255)) + block % 7`. Over a block's 256 threads the xor is a permutation of
/// 0..256, so each block sums to `32640 + 256 · (block % 7)`, exact in both types.
#[inline(always)]
fn tree_value(block: u32, tid: u32) -> u32 {
    (tid ^ (block & 255)) + block % 7
}

/// Which tree a tree roof runs: the reductions' trees, by the version that introduced them.
const TREE_V1: u32 = 1;
const TREE_V2: u32 = 2;
const TREE_V3: u32 = 3;
const TREE_V5: u32 = 5;

/// One reduction tree alone: each of the block's [`crate::reduce::BLOCK`] threads stores
/// [`tree_value`] to shared memory, a barrier, then the tree `TREE` (the very function its
/// kernel calls), and thread 0 stores the block's sum to `out[block]`, a plain store where the
/// kernel sends a `red`.
///
/// - `out`: device pointer to one `T` per block.
///
/// # Launch
/// 1-D, blocks of the reductions' [`crate::reduce::BLOCK`] threads, `BLOCK · size_of::<T>()`
/// bytes of dynamic shared memory (as the kernels), any grid.
#[inline(always)]
unsafe fn tree_alone<T: Elem, const TREE: u32>(out: *mut T) {
    let s = Shared::<T>::dynamic();
    let (tid, block) = (thread_idx_x(), block_idx_x());
    s.set(tid, T::of_u32(tree_value(block, tid)));
    sync_threads();
    let out = out.add(block as usize);
    if TREE == TREE_V5 {
        tree_shfl(s, tid, |v| *out = v);
        return;
    }
    match TREE {
        TREE_V1 => tree_v1(s, tid),
        TREE_V2 => tree_v2(s, tid),
        _ => tree_v3(s, tid, 1),
    }
    if tid == 0 {
        *out = s.get(0);
    }
}

kernel! {
    fn tree_v1_f32(out: *mut f32) {
        tree_alone::<f32, TREE_V1>(out)
    }
}
kernel! {
    fn tree_v1_i32(out: *mut i32) {
        tree_alone::<i32, TREE_V1>(out)
    }
}
kernel! {
    fn tree_v2_f32(out: *mut f32) {
        tree_alone::<f32, TREE_V2>(out)
    }
}
kernel! {
    fn tree_v2_i32(out: *mut i32) {
        tree_alone::<i32, TREE_V2>(out)
    }
}
kernel! {
    fn tree_v3_f32(out: *mut f32) {
        tree_alone::<f32, TREE_V3>(out)
    }
}
kernel! {
    fn tree_v3_i32(out: *mut i32) {
        tree_alone::<i32, TREE_V3>(out)
    }
}
kernel! {
    fn tree_v5_f32(out: *mut f32) {
        tree_alone::<f32, TREE_V5>(out)
    }
}
kernel! {
    fn tree_v5_i32(out: *mut i32) {
        tree_alone::<i32, TREE_V5>(out)
    }
}

kernel! {
    /// The load phase of v1, v2, v3 and v3_shfl alone: `load_to_shared` (the function they
    /// call: one element per thread into shared memory, then a barrier), then each thread
    /// compares its neighbour's word with `key` and the one that finds it stores its element's
    /// index to `*found`, so every load is waited for after the barrier as a tree's would be.
    /// With `n = 0` no thread loads (each stores zero): the same block without its load.
    ///
    /// - `input`: device pointer to `n` elements, at least one block's worth per block.
    /// - `key`: a value other than 0; `found`: device pointer to one `u64`, left as it was
    ///   unless some element is `key`.
    ///
    /// # Launch
    /// 1-D, blocks of the reductions' [`RB`] threads, at least `RB · 4` bytes of dynamic shared
    /// memory (more holds fewer blocks on an SM), one block per `RB` elements.
    fn load_wait_i32(input: *const i32, n: u64, key: i32, found: *mut u64) {
        let s = Shared::<i32>::dynamic();
        load_to_shared(s, input, n);
        let next = (thread_idx_x() + 1) % RB;
        if s.get(next) == key {
            *found = first_index(RB) - thread_idx_x() as u64 + next as u64;
        }
    }
}
