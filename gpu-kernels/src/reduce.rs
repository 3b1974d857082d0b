//! The reduction sequence v1..v6 (PMPP ch. 10; Harris 2007; the chapter's section 6), and v7
//! beyond the chapter.
//!
//! Every version sums `n` elements of `input` and adds its block's partial sum to `*out` with
//! one atomic per block, so the host zeroes `*out` before the launch. Each version changes one
//! thing from the one before; read them top to bottom. Integer sums wrap (two's complement),
//! exactly like `i32::wrapping_add` on the CPU.
//!
//! Parameters (all versions):
//! - `input`: device pointer, `n` elements, 4-byte aligned (v6 also accepts any 4-byte-aligned
//!   start: it peels a scalar head up to the first 16-byte boundary).
//! - `n`: element count; `u64`, so arrays past 2^32 elements work.
//! - `out`: device pointer to one element, zeroed by the host.
//!
//! # Launch
//! Block of [`BLOCK`] threads, dynamic shared memory `BLOCK × size_of::<T>()` bytes
//! (v6: `WARPS × size_of::<T>()`). Grid: v1–v3 `ceil(n / 256)`; v4, v5 `ceil(n / 2048)`
//! (`BLOCK × COARSEN`); v6 one wave (blocks per SM from the occupancy API × SM count).

use crate::device::*;
pub use crate::launch::reduce::*;

/// What a reduction needs of its element type.
pub trait Elem: Copy {
    const ZERO: Self;
    const ONE: Self;
    /// `self + other`; wrapping for integers.
    fn plus(self, other: Self) -> Self;
    /// # Safety
    /// `p` points to a live global element.
    unsafe fn atomic_add(p: *mut Self, v: Self);
    /// # Safety
    /// All 32 lanes of the warp call it together.
    unsafe fn shfl_down(self, offset: u32) -> Self;
    /// A small integer as this type (exact: at most 2^24).
    fn of_u32(v: u32) -> Self;
}

impl Elem for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    #[inline(always)]
    fn plus(self, other: Self) -> Self {
        self + other
    }
    #[inline(always)]
    unsafe fn atomic_add(p: *mut Self, v: Self) {
        atomic_add_f32(p, v)
    }
    #[inline(always)]
    unsafe fn shfl_down(self, offset: u32) -> Self {
        f32::from_bits(shfl_down(self.to_bits(), offset))
    }
    #[inline(always)]
    fn of_u32(v: u32) -> Self {
        v as f32
    }
}

impl Elem for i32 {
    const ZERO: Self = 0;
    const ONE: Self = 1;
    #[inline(always)]
    fn plus(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    #[inline(always)]
    unsafe fn atomic_add(p: *mut Self, v: Self) {
        atomic_add_i32(p, v)
    }
    #[inline(always)]
    unsafe fn shfl_down(self, offset: u32) -> Self {
        shfl_down(self as u32, offset) as i32
    }
    #[inline(always)]
    fn of_u32(v: u32) -> Self {
        v as i32
    }
}

/// Global index of this thread's element when each block covers `per_block` elements.
#[inline(always)]
pub fn first_index(per_block: u32) -> u64 {
    block_idx_x() as u64 * per_block as u64 + thread_idx_x() as u64
}

/// `s[tid] = i < n ? in[i] : 0; __syncthreads();` — one element per thread (v1, v2, v3).
#[inline(always)]
pub unsafe fn load_to_shared<T: Elem>(s: Shared<T>, input: *const T, n: u64) {
    let i = first_index(BLOCK);
    s.set(
        thread_idx_x(),
        if i < n {
            *input.add(i as usize)
        } else {
            T::ZERO
        },
    );
    sync_threads();
}

/// Thread 0 adds the block's sum (in `s[0]`) to the result.
#[inline(always)]
unsafe fn finish_block<T: Elem>(s: Shared<T>, out: *mut T) {
    if thread_idx_x() == 0 {
        T::atomic_add(out, s.get(0));
    }
}

/// v1, interleaved addressing:
/// ```text
/// for (stride = 1; stride < 256; stride *= 2) {
///     if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];
///     __syncthreads();
/// }
/// ```
#[inline(always)]
pub unsafe fn reduce_v1<T: Elem>(input: *const T, n: u64, out: *mut T) {
    let s = Shared::<T>::dynamic();
    let tid = thread_idx_x();
    load_to_shared(s, input, n);
    tree_v1(s, tid);
    finish_block(s, out);
}

/// v1's tree over the block's 256 shared values: the sum ends in `s[0]`.
#[inline(always)]
pub unsafe fn tree_v1<T: Elem>(s: Shared<T>, tid: u32) {
    let mut stride = 1;
    while stride < BLOCK {
        if tid % (2 * stride) == 0 {
            s.set(tid, s.get(tid).plus(s.get(tid + stride)));
        }
        sync_threads();
        stride *= 2;
    }
}

/// v2, compact thread index: the same pairs as v1, done by threads 0, 1, 2, … (fewer warps
/// active, but thread t touches word `2·stride·t`: bank conflicts).
/// ```text
/// idx = 2 * stride * tid;
/// if (idx < 256) s[idx] += s[idx + stride];
/// ```
#[inline(always)]
pub unsafe fn reduce_v2<T: Elem>(input: *const T, n: u64, out: *mut T) {
    let s = Shared::<T>::dynamic();
    let tid = thread_idx_x();
    load_to_shared(s, input, n);
    tree_v2(s, tid);
    finish_block(s, out);
}

/// v2's tree over the block's 256 shared values: the sum ends in `s[0]`.
#[inline(always)]
pub unsafe fn tree_v2<T: Elem>(s: Shared<T>, tid: u32) {
    let mut stride = 1;
    while stride < BLOCK {
        let idx = 2 * stride * tid;
        if idx < BLOCK {
            s.set(idx, s.get(idx).plus(s.get(idx + stride)));
        }
        sync_threads();
        stride *= 2;
    }
}

/// v3, sequential addressing: fold the upper half onto the lower half (packed threads,
/// consecutive words, no conflicts).
/// ```text
/// for (stride = 128; stride > 0; stride >>= 1) {
///     if (tid < stride) s[tid] += s[tid + stride];
///     __syncthreads();
/// }
/// ```
#[inline(always)]
pub unsafe fn reduce_v3<T: Elem>(input: *const T, n: u64, out: *mut T) {
    let s = Shared::<T>::dynamic();
    let tid = thread_idx_x();
    load_to_shared(s, input, n);
    tree_v3(s, tid, 1);
    finish_block(s, out);
}

/// v3's tree over the block's 256 shared values, folded until `values` remain in
/// `s[0..values]` (1: the block's sum in `s[0]`). One barrier per level.
#[inline(always)]
pub unsafe fn tree_v3<T: Elem>(s: Shared<T>, tid: u32, values: u32) {
    let mut stride = BLOCK / 2;
    while stride >= values {
        if tid < stride {
            s.set(tid, s.get(tid).plus(s.get(tid + stride)));
        }
        sync_threads();
        stride >>= 1;
    }
}

/// v4, coarsening: each thread first adds 8 values privately (coalesced at every k), then v3's
/// tree. 8× fewer blocks, trees, barriers and atomics per byte.
/// ```text
/// for (k = 0; k < 8; ++k) {
///     idx = blockIdx.x * 256 * 8 + tid + k * 256;
///     if (idx < n) sum += in[idx];
/// }
/// s[tid] = sum; __syncthreads(); /* v3's tree */
/// ```
#[inline(always)]
pub unsafe fn reduce_v4<T: Elem>(input: *const T, n: u64, out: *mut T) {
    let s = Shared::<T>::dynamic();
    let tid = thread_idx_x();
    s.set(tid, coarsened_sum(input, n));
    sync_threads();
    tree_v3(s, tid, 1);
    finish_block(s, out);
}

/// v4's load: this thread's private sum of its [`COARSEN`] values, [`BLOCK`] apart (coalesced
/// at every k), each block covering `BLOCK × COARSEN` values; values past `n` count as zero.
#[inline(always)]
unsafe fn coarsened_sum<T: Elem>(input: *const T, n: u64) -> T {
    let base = first_index(BLOCK * COARSEN);
    let mut sum = T::ZERO;
    let mut k = 0;
    while k < COARSEN {
        let idx = base + (k * BLOCK) as u64;
        if idx < n {
            sum = sum.plus(*input.add(idx as usize));
        }
        k += 1;
    }
    sum
}

/// Sum of `v` over the warp, in lane 0: five `shfl.sync.down` steps, no shared memory.
/// ```text
/// for (offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
/// ```
///
/// # Safety
/// All 32 lanes of the warp call it together.
#[inline(always)]
pub unsafe fn warp_sum<T: Elem>(mut v: T) -> T {
    let mut offset = 16;
    while offset > 0 {
        v = v.plus(v.shfl_down(offset));
        offset >>= 1;
    }
    v
}

/// v5, warp shuffles for the last five levels: v4's private sums, v3's tree only down to 64
/// values, then warp 0 adds the two halves and finishes with five shuffles ([`warp_sum`]).
/// ```text
/// s[tid] = sum; __syncthreads();                 // v4's 8 values per thread
/// for (stride = 128; stride > 32; stride >>= 1) {
///     if (tid < stride) s[tid] += s[tid + stride];
///     __syncthreads();
/// }
/// if (tid < 32) {                                // 64 values left, all read by warp 0
///     v = warp_sum(s[tid] + s[tid + 32]);
///     if (tid == 0) atomicAdd(out, v);
/// }
/// ```
/// Changed from v4: only the tree's end. Levels 128 and 64 stay in shared memory; level 32
/// (the two halves) and the last five (the shuffles) are done by warp 0 in registers, with no
/// barrier after them. Per block: barriers 1 + 8 → 1 + 2, shared stores 1 + 8 → 1 + 2, shared
/// loads 2 per level + thread 0's read of `s[0]` → 2 per level for three levels. The same
/// load, grid (`ceil(n / 2048)`) and one atomic per block.
#[inline(always)]
pub unsafe fn reduce_v5<T: Elem>(input: *const T, n: u64, out: *mut T) {
    let s = Shared::<T>::dynamic();
    let tid = thread_idx_x();
    s.set(tid, coarsened_sum(input, n));
    sync_threads();
    finish_with_shuffles(s, tid, out);
}

/// The end of v5's tree: v3's tree down to 64 values, then warp 0 adds the two halves, five
/// shuffles, and one atomic.
#[inline(always)]
unsafe fn finish_with_shuffles<T: Elem>(s: Shared<T>, tid: u32, out: *mut T) {
    tree_shfl(s, tid, |v| T::atomic_add(out, v));
}

/// v5's tree over the block's 256 shared values: v3's tree down to 64, then warp 0 adds the
/// two halves and shuffles; thread 0 hands the block's sum to `sum`.
#[inline(always)]
pub unsafe fn tree_shfl<T: Elem>(s: Shared<T>, tid: u32, sum: impl FnOnce(T)) {
    tree_v3(s, tid, 64);
    if tid < 32 {
        let v = warp_sum(s.get(tid).plus(s.get(tid + 32)));
        if tid == 0 {
            sum(v);
        }
    }
}

/// v3 with v5's shuffles: one element per thread (no coarsening), v3's tree down to 64 values,
/// then warp 0 finishes with five shuffles. Against v3 it isolates what the shuffles save
/// (five barriers and five shared levels per block) while the block count, and so the
/// same-address atomics, stay v3's.
/// ```text
/// s[tid] = i < n ? in[i] : 0; __syncthreads();
/// /* v5's end of the tree: levels 128 and 64 in shared memory, then warp_sum in warp 0 */
/// ```
#[inline(always)]
pub unsafe fn reduce_v3_shfl<T: Elem>(input: *const T, n: u64, out: *mut T) {
    let s = Shared::<T>::dynamic();
    let tid = thread_idx_x();
    load_to_shared(s, input, n);
    finish_with_shuffles(s, tid, out);
}

/// What a one-wave reduction (v6, v7) does its own way: its walk over the 16-byte body and
/// its sum over a warp; [`one_wave`] does the rest (the entry points are `one_wave::<T, V6>`
/// and `one_wave::<T, V7>`).
pub trait OneWave<T: Elem> {
    /// `sum` plus this thread's share of the body.
    ///
    /// # Safety
    /// `w` describes a live input (every group below `w.len` readable).
    unsafe fn walk(sum: T, w: Walk<T>) -> T;
    /// The sum over the 32 lanes, valid at least in lane 0.
    ///
    /// # Safety
    /// All 32 lanes of the warp call it together.
    unsafe fn warp(v: T) -> T;
}

/// v6, one wave with wide loads: a grid of exactly as many blocks as fit on the GPU at once;
/// each thread walks the array with a grid-stride loop of 16-byte loads, then shuffles within
/// each warp (five shuffles, [`warp_sum`], for every type), one shared slot per warp, and
/// shuffles again in warp 0.
///
/// `input` need only be 4-byte aligned: the elements before the first 16-byte boundary (head)
/// and after the last whole 16-byte group (tail), at most 3 each, are added one by one.
pub struct V6;

impl<T: Elem> OneWave<T> for V6 {
    #[inline(always)]
    unsafe fn walk(mut sum: T, w: Walk<T>) -> T {
        let mut i = w.first;
        while i < w.len {
            let Vec4([a, b, c, d]) = load4(w.groups.add(i as usize));
            sum = sum.plus(a.plus(b).plus(c.plus(d)));
            i += w.stride;
        }
        sum
    }
    #[inline(always)]
    unsafe fn warp(v: T) -> T {
        warp_sum(v)
    }
}

/// The 16-byte body of a one-wave reduction's input as one thread walks it: groups `first`,
/// `first + stride`, … below `len`.
#[derive(Clone, Copy)]
pub struct Walk<T> {
    pub groups: *const Vec4<T>,
    pub len: u64,
    pub first: u64,
    pub stride: u64,
}

/// v6 and v7 (`W`), with what they share: the split of `[0, n)` into scalar head | 16-byte
/// body | scalar tail (the elements before the first 16-byte boundary and after the last whole
/// group, at most 3 each, added one by one), `W`'s walk adding this thread's share of the body
/// to its head and tail elements, and the block finish: `W` sums each warp's values → one
/// shared slot per warp → warp 0 sums the slots with `W` again → one atomic per block.
///
/// # Safety
/// As the reductions': every thread of the block calls it (it has a barrier).
#[inline(always)]
pub unsafe fn one_wave<T: Elem, W: OneWave<T>>(input: *const T, n: u64, out: *mut T) {
    let tid = thread_idx_x();
    let gtid = first_index(BLOCK);
    let threads = grid_dim_x() as u64 * BLOCK as u64;

    // Split [0, n) into scalar head | 16-byte body | scalar tail.
    let elem = core::mem::size_of::<T>() as u64;
    let misaligned = (input as u64 % 16) / elem;
    let head = if misaligned == 0 {
        0
    } else {
        (4 - misaligned).min(n)
    };
    let groups = (n - head) / 4;
    let tail = head + groups * 4;

    let mut sum = T::ZERO;
    if gtid < head {
        sum = *input.add(gtid as usize);
    }
    if gtid < n - tail {
        sum = sum.plus(*input.add((tail + gtid) as usize));
    }
    let walk = Walk {
        groups: input.add(head as usize) as *const Vec4<T>,
        len: groups,
        first: gtid,
        stride: threads,
    };
    sum = W::walk(sum, walk);

    // Warp sums → one shared slot per warp → warp 0 sums the slots → one atomic per block.
    let s = Shared::<T>::dynamic();
    sum = W::warp(sum);
    if tid % 32 == 0 {
        s.set(tid / 32, sum);
    }
    sync_threads();
    if tid < 32 {
        let v = W::warp(if tid < WARPS { s.get(tid) } else { T::ZERO });
        if tid == 0 {
            T::atomic_add(out, v);
        }
    }
}

/// Entry points: one per version and element type, named `reduce_v<k>_<type>`.
macro_rules! reduce_entries {
    ($($name:ident = $version:ident::<$t:ty $(, $with:ty)?>;)*) => {$(
        kernel! {
            fn $name(input: *const $t, n: u64, out: *mut $t) {
                $version::<$t $(, $with)?>(input, n, out)
            }
        }
    )*};
}

reduce_entries! {
    reduce_v1_f32 = reduce_v1::<f32>;
    reduce_v1_i32 = reduce_v1::<i32>;
    reduce_v2_f32 = reduce_v2::<f32>;
    reduce_v2_i32 = reduce_v2::<i32>;
    reduce_v3_f32 = reduce_v3::<f32>;
    reduce_v3_i32 = reduce_v3::<i32>;
    reduce_v4_f32 = reduce_v4::<f32>;
    reduce_v4_i32 = reduce_v4::<i32>;
    reduce_v5_f32 = reduce_v5::<f32>;
    reduce_v5_i32 = reduce_v5::<i32>;
    reduce_v6_f32 = one_wave::<f32, V6>;
    reduce_v6_i32 = one_wave::<i32, V6>;
    reduce_v7_f32 = one_wave::<f32, V7>;
    reduce_v7_i32 = one_wave::<i32, V7>;
    reduce_v3_shfl_f32 = reduce_v3_shfl::<f32>;
    reduce_v3_shfl_i32 = reduce_v3_shfl::<i32>;
}

// ---- Beyond the chapter: v7, aimed at CUB's `DeviceReduce::Sum`. ----

/// What v7 needs beyond [`Elem`]: the sum over the warp in one call, by the fastest means the
/// type allows.
pub trait WarpTotal: Elem {
    /// Sum of `self` over the 32 lanes, valid at least in lane 0.
    ///
    /// # Safety
    /// All 32 lanes of the warp call it together.
    unsafe fn warp_total(self) -> Self;
}

impl WarpTotal for f32 {
    /// Five `shfl.sync.down` + `add.f32` steps (there is no `redux.sync` for f32 on sm_90).
    #[inline(always)]
    unsafe fn warp_total(self) -> Self {
        warp_sum(self)
    }
}

impl WarpTotal for i32 {
    /// One `redux.sync.add.s32` (sm_80+), wrapping like `wrapping_add`.
    #[inline(always)]
    unsafe fn warp_total(self) -> Self {
        redux_add_i32(self)
    }
}

/// `(a + b) + (c + d)` of one 16-byte group.
#[inline(always)]
fn sum4<T: Elem>(v: Vec4<T>) -> T {
    let Vec4([a, b, c, d]) = v;
    a.plus(b).plus(c.plus(d))
}

/// v7: v6's one-wave grid-stride shape, with [`V7_UNROLL`] = 4 independent 16-byte loads in
/// flight per thread per trip instead of one, read through the non-coherent path without L1
/// allocation (`ld.global.nc.L1::no_allocate.v4`; an added `L2::256B` prefetch hint measured
/// ~6 % slower on the H200, docs/experiments.md E3).
///
/// - Main loop: trips where all four groups `i, i+T, i+2T, i+3T` (T = threads in the grid) are
///   in range: four unguarded loads, then the adds (the loads never wait for each other).
/// - Last trip: the 1 to 3 groups still in range are loaded together, the out-of-range loads
///   clamped to the last group (always a valid address) and their sums replaced by zero, so the
///   tail costs one memory round trip, not up to three.
/// - Head and tail scalars (misaligned start, `n` not a multiple of 4): as v6.
/// - Block finish: warp totals (`redux.sync` for i32) → one shared slot per warp → warp 0 →
///   one atomic per block.
///
/// # Launch
/// Blocks of [`BLOCK`] threads, dynamic shared memory `WARPS × size_of::<T>()` bytes, a grid
/// of at most one wave, and no more blocks than give every thread one full trip
/// (`ceil(n / (4 · BLOCK · V7_UNROLL))`): for L2-resident sizes, fewer blocks and atomics,
/// each thread's loads all in one round trip. `input` 4-byte aligned; must not be written by
/// anyone while the kernel runs (non-coherent loads).
pub struct V7;

impl<T: WarpTotal> OneWave<T> for V7 {
    #[inline(always)]
    unsafe fn walk(mut sum: T, w: Walk<T>) -> T {
        let (body, groups, threads) = (w.groups, w.len, w.stride);
        let mut i = w.first;
        while i + (V7_UNROLL - 1) * threads < groups {
            let a = load4_nc(body.add(i as usize));
            let b = load4_nc(body.add((i + threads) as usize));
            let c = load4_nc(body.add((i + 2 * threads) as usize));
            let d = load4_nc(body.add((i + 3 * threads) as usize));
            sum = sum.plus(sum4(a).plus(sum4(b)).plus(sum4(c).plus(sum4(d))));
            i += V7_UNROLL * threads;
        }
        if i < groups {
            // Groups i+T.. may be past the end: load the last group instead, add zero for it.
            let last = groups - 1;
            let (j1, j2, j3) = (i + threads, i + 2 * threads, i + 3 * threads);
            let a = load4_nc(body.add(i as usize));
            let b = load4_nc(body.add(j1.min(last) as usize));
            let c = load4_nc(body.add(j2.min(last) as usize));
            let d = load4_nc(body.add(j3.min(last) as usize));
            let b = if j1 < groups { sum4(b) } else { T::ZERO };
            let c = if j2 < groups { sum4(c) } else { T::ZERO };
            let d = if j3 < groups { sum4(d) } else { T::ZERO };
            sum = sum.plus(sum4(a).plus(b).plus(c.plus(d)));
        }
        sum
    }
    #[inline(always)]
    unsafe fn warp(v: T) -> T {
        v.warp_total()
    }
}
