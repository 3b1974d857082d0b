//! The row-wise family, beyond the chapter (its Part II): softmax, RMSNorm and LayerNorm over
//! every row of a row-major `rows × cols` matrix, f32 or BF16 in and out, accumulated in f32.
//! Each row is read once into registers, reduced, and written once: the chapter's reduction
//! fused into an elementwise pass, at the copy's bytes.
//!
//! What each computes, per row `x` of `cols` elements (PyTorch's definitions):
//! - softmax (`F.softmax(x, dim=-1)`): `exp(x − max x) / Σ exp(x − max x)`; a row of all −inf
//!   is NaN, a NaN or a +inf anywhere makes the row NaN;
//! - RMSNorm (`F.rms_norm(x, (cols,), w, eps)`): `x / sqrt(mean(x²) + eps) · w`;
//! - LayerNorm (`F.layer_norm(x, (cols,), w, b, eps)`): `(x − mean) / sqrt(var + eps) · w + b`,
//!   `var` the biased variance (over `cols`).
//!
//! # Schedules
//! A *group* of threads holds one row, each thread `L` 16-byte vectors of it (4 f32 or 8 BF16
//! each, [`Elem`]) in registers from its one load to its one store:
//! - [`Warp`]: a warp per row (short rows), the reduction five shuffles, the weights loaded
//!   with the row (the *narrow* warp: the same group, half the vectors a lane, so the rows of
//!   up to 1 KiB keep every lane's registers, and the SM's warps, to what they hold);
//! - [`Block`]: a block per row, warp shuffles → one shared slot per warp → one barrier →
//!   shuffles again (the *wide* block: the same group, twice the vectors a thread, so two
//!   blocks of 512 hold what one block of 1024 does, or one of 1024 a row twice as long);
//! - [`Cluster`]: the row split over the blocks of a thread-block cluster, each block's
//!   statistic sent into every block's shared memory by `st.async` and counted by an
//!   mbarrier; the grid holds only the clusters that fit at once, each walking rows;
//! - [`Streamed`]: a block per row that holds none of it, each pass over the row loading it
//!   again (the first from DRAM, the others from the L2: `passes`), for any length.
//!
//! A thread of rank `r` (its block's in the cluster, else 0) and index `t` among the `T`
//! threads of its block's share holds the row's vectors `r·T·L + t + j·T`, `j < L`: each of
//! its `L` loads is a coalesced run of the block's threads, and each block of a cluster reads
//! a contiguous part of the row.
//!
//! Each thread reduces its own elements to a partial statistic ([`Stat`]: the softmax's running
//! max and sum, the sum of squares, or LayerNorm's count, mean and squared deviations), the
//! group merges them, and each thread writes its elements from its registers. (In a warp or a
//! block, where a second merge is cheap, f32 softmax merges the max, then the sum of the
//! exponentials it keeps in place of the elements, and LayerNorm, where its threads' parts
//! are unequal, a sum, then the squared deviations from the mean: [`Op::row_of`],
//! [`Op::row_of_held`].)
//!
//! # Parameters (every entry point)
//! - `x`: the input, `rows · cols` elements; `y`: the output, the same shape (`x` itself, in
//!   place, or not overlapping it);
//! - `w`, `b`: `cols` weights and biases (RMSNorm reads `w`, LayerNorm both, softmax neither:
//!   null is fine where unread);
//! - `rows`, `cols`; `eps`: added to the variance (the norms).
//!
//! When `x`, `y`, `w` and `b` are 16-byte aligned and `cols` is a multiple of the vector's
//! elements, every access is a 16-byte `ld.global.nc.L2::cache_hint.v4` (the row under the L2
//! policy `evict_last` in a block or a cluster, `evict_normal` in a warp, the weights under
//! `evict_last`: [`load`]) / `st.global.v4`; otherwise the same threads load and store element
//! by element (correct, not fast).
//!
//! # Launch (`catalog::rows` computes it from `cols`)
//! - warp: blocks of `32 · WARP_ROWS_PER_BLOCK` threads, `ceil(rows / WARP_ROWS_PER_BLOCK)`
//!   blocks, `cols ≤ 32 · WARP_VECTORS · V`; the narrow warp (`<op>_narrow_*`) the same with
//!   `NARROW_VECTORS`;
//! - block: `rows` blocks of `T` threads (a multiple of 32, at most `BLOCK_MAX_THREADS`),
//!   `cols ≤ T · BLOCK_VECTORS · V`; the wide block (`<op>_wide_*`, the [`Block`] group) the
//!   same with `WIDE_VECTORS` in at most `WIDE_MAX_THREADS`;
//! - streamed: `rows` blocks of `STREAMED_THREADS`, any `cols`;
//! - cluster: clusters of `C` blocks of `T` threads (`CLUSTER_THREADS`, in BF16
//!   `CLUSTER_THREADS_BF16`; `CLUSTER_MIN ≤ C ≤ CLUSTER_MAX`), cluster dimension `(C, 1, 1)`,
//!   `cols ≤ C · T · CLUSTER_VECTORS · V`; as many clusters as rows, or fewer (the host
//!   launches those that fit on the GPU at once), each then walking the rows a grid's length
//!   apart ([`Group::next`]);
//! - dynamic shared memory: none in the warp schedule (its merges are shuffles alone), else
//!   `SHARED_BYTES`; a cluster of an operation that keeps its weights
//!   ([`keeps_w`]: its columns are the same in every row its block walks) `SHARED_BYTES +
//!   16 · T · CLUSTER_VECTORS`, the rest holding each thread's vectors of `w`, and in
//!   LayerNorm's cluster `16 · T · CLUSTER_KEPT_B_VECTORS` more for its first vectors of `b`
//!   ([`kept_b`]).
//!
//! # Layout
//! Here: a thread's vectors, their loads, the row held in registers and the kernel; the rows
//! loaded again for each pass (streamed, element by element) in `passes`; the element types
//! in `elem`, the operations and their statistics in `ops`, the groups and their merges in
//! `group`.

use crate::device::*;
pub use crate::launch::rows::*;

/// `$body` once for each `$i` in `0 .. $n` (`$n` a constant of at most 16, generic or not), `$i`
/// a `usize` constant in each copy: sixteen guarded copies, of which the compiler keeps `$n`.
/// Every array index is then a constant, so what a thread holds stays in registers (a loop
/// the compiler kept rolled would index them at run time: local memory).
macro_rules! upto16 {
    ($n:expr, $i:ident, $body:block) => {
        upto16!(@ $n, $i, $body, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    (@ $n:expr, $i:ident, $body:block, $($k:literal)*) => {
        $(
            #[allow(unused_comparisons, unconditional_panic)]
            if $k < $n {
                let $i: usize = $k;
                $body
            }
        )*
    };
}

// `upto16!` unrolls at most sixteen vectors per thread, elements per vector and statistic words.
const _: () = assert!(
    NARROW_VECTORS <= 16
        && WARP_VECTORS <= 16
        && BLOCK_VECTORS <= 16
        && WIDE_VECTORS <= 16
        && CLUSTER_VECTORS <= 16
        && STREAMED_VECTORS <= 16
);
const _: () = assert!(SLOT_WORDS >= 3);

mod elem;
mod group;
mod ops;
mod passes;

pub use elem::*;
pub use group::*;
pub use ops::*;
use passes::{row_by_element, row_streamed};

/// Which of the row's vectors one thread holds, and how many there are.
#[derive(Clone, Copy)]
pub struct Lanes {
    /// The thread's first vector; its `j`-th is `first + j · stride`.
    pub first: u32,
    pub stride: u32,
    /// Whole vectors in the row.
    pub vectors: u32,
}

impl Lanes {
    #[inline(always)]
    fn vector(self, j: usize) -> u32 {
        self.first + j as u32 * self.stride
    }
}

/// `f(element)` for every element of the whole vectors below `at.vectors` this thread holds.
#[inline(always)]
fn each<E: Elem, const L: usize>(x: &[Words; L], at: Lanes, f: &mut dyn FnMut(f32)) {
    upto16!(L, j, {
        if at.vector(j) < at.vectors {
            upto16!(E::PER_VEC as usize, k, {
                f(E::get(&x[j], k as u32));
            });
        }
    });
}

/// This thread's vectors of the row at `row` (past its end: zeros, or as below): 16-byte
/// non-coherent loads that allocate in L1 (`ld.global.nc….v4`). The row is read once, but the
/// no-allocate load streamed about 3 % slower than this one on the H200 (docs/experiments.md,
/// E15: the same bytes at every level, a lower DRAM rate; no faster on the cluster kernels,
/// docs/part2.md). A thread reads each of its vectors before it writes it and never again,
/// so an `x` that is also `y` reads no stale line.
///
/// In a block or a cluster ([`Group::ROW_EVICT_LAST`]) the loads carry the L2 policy
/// `evict_last` ([`l2_evict_last`]), though the row is never read again, as torch.compile's
/// first pass over a row does: the L2 then keeps the dead lines of `x` over the dirty lines
/// of `y` the kernel writes, so those go back to DRAM sooner. On
/// the H200 the same DRAM bytes went faster (ncu: DRAM active 82.6–83.5 % → 85.3–86.8 % in
/// two block kernels): the block kernels at 16384 x 4096 and 8192 x 8192 +2.0–3.7 % (to
/// 0.98–1.00 × copy), the softmax and RMSNorm clusters +2.8–4.1 %; under `evict_first`, 54 of
/// 60 rows were slower (results/rows/1bb9ff0/experiments, results/rows/46a1023). Why the
/// prompter write-back keeps the DRAM busier is not measured here. A warp's rows load under
/// `evict_normal` ([`l2_evict_normal`]; [`Group::ROW_EVICT_LAST`] for [`Warp`] says why).
///
/// With `G::LOADS_IN_ONE_RUN`, a vector past the row's end loads the row's last vector
/// instead (and [`each`] and the stores skip it): the loads are one straight run, not one
/// branch each, and ptxas issues them all before the first is used. Behind a branch each,
/// ptxas interleaved the cluster kernels' fold of each vector with the next loads, so a warp
/// waited for one DRAM latency after another (rustc's softmax_cluster_f32: 7 of its 8 loads
/// waited on before the last was issued; 0.77 → 0.94 × copy at 4096 × 32768). The warp and
/// block schedules keep the branches: held to 32 registers (two blocks of 1024 an SM), with
/// the clamped addresses ptxas issued two of four loads late instead (nvvm's
/// rmsnorm_block_bf16 at 4096 × 32768: 0.96 → 0.80 × copy).
///
/// # Safety
/// The row's `at.vectors` vectors, at least one, must be readable, and `row` 16-byte aligned.
#[inline(always)]
unsafe fn load<E: Elem, G: Group, const L: usize>(row: *const E, at: Lanes) -> [Words; L] {
    let vectors = row as *const Vec4<u32>;
    let last = at.vectors - 1;
    let policy = if G::ROW_EVICT_LAST {
        l2_evict_last()
    } else {
        l2_evict_normal()
    };
    let mut x = [[0u32; 4]; L];
    upto16!(L, j, {
        let i = at.vector(j);
        if G::LOADS_IN_ONE_RUN {
            x[j] = load4_ro_with(vectors.add(i.min(last) as usize), policy).0;
        } else if i < at.vectors {
            x[j] = load4_ro_with(vectors.add(i as usize), policy).0;
        }
    });
    x
}

/// Whether this kernel keeps each thread's vectors of `w` in shared memory for every row
/// ([`Group::KEEPS_WEIGHTS`]), instead of loading them again each row through an L1 the row's
/// own lines push them out of. The host's launch asks shared memory for what is kept and no
/// more (`catalog::rows::Schedule::shared_bytes`).
#[inline(always)]
fn keeps_w<O: Op, G: Group>() -> bool {
    G::KEEPS_WEIGHTS && O::WEIGHTS >= 1
}

/// How many of this thread's first vectors of `b` the kernel keeps in shared memory past
/// those of `w` (`CLUSTER_KEPT_B_VECTORS` where it keeps `w` and reads `b`: LayerNorm's
/// cluster; all of them in a [`ClusterPair`], [`Group::KEEPS_ALL_B`]), so that fewer of them
/// are loaded from the L2 after the merge ([`b_ahead`]).
#[inline(always)]
fn kept_b<O: Op, G: Group>() -> usize {
    if keeps_w::<O, G>() && O::WEIGHTS >= 2 && G::KEEPS_ALL_B {
        // Every vector a thread holds: at most 16 (`upto16!`).
        16
    } else if keeps_w::<O, G>() && O::WEIGHTS >= 2 {
        CLUSTER_KEPT_B_VECTORS as usize
    } else {
        0
    }
}

/// How many vectors ahead of the one it writes a thread of LayerNorm's cluster loads `b`,
/// where `b` is not kept ([`kept_b`]): the load of vector `n` is issued while vector
/// `n − b_ahead` is written, and those of the vectors below `b_ahead` before the first is,
/// so the first loads leave as soon as the row's constants are known and the kept vectors'
/// outputs cover their L2 round trip. As many as fit the 64 registers the PTX's launch bounds
/// hold the kernel to (two blocks of 512 f32 threads or four of 256 bf16 ones an SM,
/// `CLUSTER_SM_THREADS`): 4 in f32, 3 in BF16 (5 and 4 spilled). Against 2 and 1 (the first
/// load after the first output; on the H200, two calls of two rounds each, x copy): f32 at
/// 4096 x 32768 0.951–0.954 → 0.977–0.983, BF16 at 256 x 262144 0.893–0.898 → 0.903–0.909,
/// the other four cluster cases −1.1 to +1.1 % (results/rows/827b5c3/experiments).
#[inline(always)]
fn b_ahead<E: Elem>() -> usize {
    if E::PER_VEC == 4 {
        4
    } else {
        3
    }
}

/// The `n`-th kept vector of this thread ([`keeps_w`]): past the merges' slots, the block's
/// threads' `n`-th vectors side by side; `w`'s `j`-th is the `j`-th, `b`'s the `L + j`-th.
#[inline(always)]
fn kept<E: Elem, G: Group, const L: usize>(seat: Seat, n: usize) -> *mut Vec4<u32> {
    // SAFETY: inside the launch's `SHARED_BYTES + 16 · threads · (L + kept_b)` (n < L +
    // kept_b, t < threads).
    unsafe {
        (dynamic_shared::<u8>().add(G::SLOTS_BYTES as usize) as *mut Vec4<u32>)
            .add(n * G::kept_stride::<E>(seat) as usize + seat.t as usize)
    }
}

/// Copies this thread's vectors of `w`, and its first `kept_b` of `b`, into its kept slots
/// ([`kept`]), before its group's first row. Only this thread reads them again: no barrier.
///
/// # Safety
/// As [`row_in_registers`] (the 16-byte path's), and the launch's shared memory holds the
/// slots.
#[inline(always)]
unsafe fn keep_weights<E: Elem, G: Group, const L: usize>(
    seat: Seat,
    (w, b): (*const E, *const E),
    kept_b: usize,
    cols: u32,
) {
    let at = lanes::<E, L>(seat, cols);
    let last = at.vectors - 1;
    let policy = l2_evict_last();
    upto16!(L, j, {
        let i = at.vector(j).min(last) as usize;
        *kept::<E, G, L>(seat, j) = load4_ro_with((w as *const Vec4<u32>).add(i), policy);
        if j < kept_b {
            *kept::<E, G, L>(seat, L + j) = load4_ro_with((b as *const Vec4<u32>).add(i), policy);
        }
    });
}

/// The row's vectors this thread holds ([`Lanes`]).
#[inline(always)]
fn lanes<E: Elem, const L: usize>(seat: Seat, cols: u32) -> Lanes {
    Lanes {
        first: seat.rank * seat.threads * L as u32 + seat.t,
        stride: seat.threads,
        vectors: cols / E::PER_VEC,
    }
}

/// One row held in registers: this thread's vectors by 16-byte loads (a warp's weights
/// beside them, [`Group::WEIGHTS_WITH_ROW`]), its statistic, the group's, then `O::out` of
/// each element with its weights (16-byte read-only loads through L1, where every row's group
/// finds them, or kept in shared memory, [`keeps_w`]), by 16-byte stores.
///
/// # Safety
/// As [`row_kernel`]'s, with `x`, `y`, `w`, `b` 16-byte aligned and `cols` a multiple of
/// `E::PER_VEC`.
#[inline(always)]
unsafe fn row_in_registers<E: Elem, O: Op, G: Group, const L: usize>(
    seat: Seat,
    x: *const E,
    (w, b): (*const E, *const E),
    y: *mut E,
    cols: u32,
    eps: f32,
) {
    let start = seat.row as u64 * cols as u64;
    // [`lanes`], written out: through the helper, rust-cuda's compiler gave two of its
    // kernels 40 registers instead of 32 (rmsnorm_block_f32, rmsnorm_warp_bf16).
    let at = Lanes {
        first: seat.rank * seat.threads * L as u32 + seat.t,
        stride: seat.threads,
        vectors: cols / E::PER_VEC,
    };
    let mut held = load::<E, G, L>(x.add(start as usize), at);
    // The weights, read again for every row, under `evict_last` whatever the row's policy:
    // the L2 keeps them past the rows' lines.
    let policy = l2_evict_last();
    let weights = |p: *const E, used: bool, i: u32| {
        if used {
            load4_ro_with((p as *const Vec4<u32>).add(i as usize), policy).0
        } else {
            [0u32; 4]
        }
    };
    // A group that loads its weights with its row ([`Group::WEIGHTS_WITH_ROW`]) holds them
    // in registers across the merge.
    let (mut w_held, mut b_held) = ([[0u32; 4]; L], [[0u32; 4]; L]);
    if G::WEIGHTS_WITH_ROW {
        upto16!(L, j, {
            let i = at.vector(j);
            if i < at.vectors {
                w_held[j] = weights(w, O::WEIGHTS >= 1, i);
                b_held[j] = weights(b, O::WEIGHTS >= 2, i);
            }
        });
    }
    let r = O::row_of_held::<E, G, L>(seat, &mut held, at, cols, eps);
    // The output pass's indices from the seat as the group gives it again after the merge
    // ([`Group::seat_again`]: the pair's rank read again, not held).
    let seat = G::seat_again(seat);
    let at = lanes::<E, L>(seat, cols);
    let y = y.add(start as usize) as *mut Vec4<u32>;
    // In one run (see [`load`]), every vector's weights are loaded and its outputs computed,
    // and the store is predicated off past the row's end: no branch between one vector's
    // weight loads and the next's, so they need not wait on each other. Not with two weight
    // vectors: holding both ahead took LayerNorm's cluster kernels to 70–72 registers, one
    // block of 512 an SM instead of two.
    let one_run = G::LOADS_IN_ONE_RUN && O::WEIGHTS < 2;
    let last = at.vectors - 1;
    // LayerNorm's cluster keeps `w` and the first vectors of `b`; each other vector of `b` is
    // loaded `b_ahead` vectors before the one it belongs to is written, from a clamped index
    // outside the vectors' branches, so the loads of the next vectors are in flight while
    // this one is written. (Waited for in turn, each after its branch, they were 51 % of the
    // kernel's long-scoreboard stalls at 256 x 262144 f32, results/rows/b6b55b8; an L1
    // prefetch of them during the merge had taken back part of that.) Its index goes through
    // `opaque_u32`: computed ahead of the merge and held across it, the indices took the
    // kernels to 70–71 registers. Not allocated in L1, which the row's next lines pass through
    // before the next row needs these again; coherent loads, so that ptxas issues them between
    // the stores where they stand here on both compilers ([`load4_ordered_with`]).
    let b_ahead_run = O::WEIGHTS >= 2 && keeps_w::<O, G>();
    let mut b_ahead_of = [[0u32; 4]; L];
    let b_vector = |n: usize| {
        let i = (opaque_u32(at.first) + n as u32 * at.stride).min(last) as usize;
        load4_ordered_with((b as *const Vec4<u32>).add(i), policy).0
    };
    if b_ahead_run {
        upto16!(L, n, {
            if n >= kept_b::<O, G>() && n < b_ahead::<E>() {
                b_ahead_of[n] = b_vector(n);
            }
        });
    }
    upto16!(L, j, {
        let n = j + b_ahead::<E>();
        if b_ahead_run && n >= kept_b::<O, G>() && n < L {
            b_ahead_of[n] = b_vector(n);
        }
        let i = at.vector(j);
        let at_i = if one_run { i.min(last) } else { i };
        if one_run || i < at.vectors {
            let wv = if keeps_w::<O, G>() {
                (*kept::<E, G, L>(seat, j)).0
            } else if G::WEIGHTS_WITH_ROW {
                w_held[j]
            } else {
                weights(w, O::WEIGHTS >= 1, at_i)
            };
            let bv = if j < kept_b::<O, G>() {
                (*kept::<E, G, L>(seat, L + j)).0
            } else if G::WEIGHTS_WITH_ROW {
                b_held[j]
            } else if b_ahead_run {
                b_ahead_of[j]
            } else {
                weights(b, O::WEIGHTS >= 2, at_i)
            };
            let mut out = [0.0f32; 8];
            upto16!(E::PER_VEC as usize, k, {
                let k32 = k as u32;
                out[k] = O::out_held::<E>(r, &held[j], k32, E::get(&wv, k32), E::get(&bv, k32));
            });
            if one_run {
                store4_where(
                    y.wrapping_add(i as usize),
                    Vec4(E::pack(&out)),
                    i < at.vectors,
                );
            } else {
                store4(y.add(i as usize), Vec4(E::pack(&out)));
            }
        }
    });
}

/// The family's kernel: `O` over every row, each held by a `G` group whose threads hold `L`
/// vectors each (see the module's documentation for the parameters and the launch).
///
/// # Safety
/// `x` and `y` hold `rows · cols` elements, `w` and `b` `cols` where `O` reads them; the
/// launch is the schedule's, and `cols` at most what its groups hold.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn row_kernel<E: Elem, O: Op, G: Group, const L: usize>(
    x: *const E,
    w: *const E,
    b: *const E,
    y: *mut E,
    rows: u32,
    cols: u32,
    eps: f32,
) {
    let addresses = x as usize | y as usize | w as usize | b as usize;
    // Whole, aligned vectors, at least one ([`load`] reads the row's last).
    let vectors = addresses % 16 == 0 && cols % E::PER_VEC == 0 && cols > 0;
    let mut seat = match G::seat(rows) {
        Some(s) => s,
        None => return,
    };
    G::start();
    let kept = keeps_w::<O, G>() && vectors;
    if kept && G::writes_kept() {
        keep_weights::<E, G, L>(seat, (w, b), kept_b::<O, G>(), cols);
    }
    G::ready(kept);
    loop {
        if G::SEATS_IDLE && seat.row >= rows {
            // A group seated past the last row (a [`ClusterPair`]'s idle half) holds none.
        } else if vectors && !G::HOLDS_ROW {
            row_streamed::<E, O, G, L>(seat, x, (w, b), y, cols, eps)
        } else if vectors {
            row_in_registers::<E, O, G, L>(seat, x, (w, b), y, cols, eps)
        } else {
            row_by_element::<E, O, G, L>(seat, x, (w, b), y, cols, eps)
        }
        match G::next(seat, rows) {
            Some(s) => seat = s,
            None => break,
        }
    }
    G::done();
}

/// Entry points: `<op>_<schedule>_<type>`, one per operation, schedule and element type.
macro_rules! row_entries {
    ($($(#[$m:meta])* $name:ident = $op:ty, $group:ty, $elem:ty, $vectors:expr;)*) => {$(
        kernel! {
            $(#[$m])*
            fn $name(
                x: *const $elem,
                w: *const $elem,
                b: *const $elem,
                y: *mut $elem,
                rows: u32,
                cols: u32,
                eps: f32,
            ) {
                row_kernel::<$elem, $op, $group, { $vectors as usize }>(x, w, b, y, rows, cols, eps)
            }
        }
    )*};
}

row_entries! {
    softmax_narrow_f32 = Softmax, Warp, f32, NARROW_VECTORS;
    softmax_narrow_bf16 = Softmax, Warp, Bf16, NARROW_VECTORS;
    rmsnorm_narrow_f32 = RmsNorm, Warp, f32, NARROW_VECTORS;
    rmsnorm_narrow_bf16 = RmsNorm, Warp, Bf16, NARROW_VECTORS;
    layernorm_narrow_f32 = LayerNorm, Warp, f32, NARROW_VECTORS;
    layernorm_narrow_bf16 = LayerNorm, Warp, Bf16, NARROW_VECTORS;
    softmax_warp_f32 = Softmax, Warp, f32, WARP_VECTORS;
    softmax_warp_bf16 = Softmax, Warp, Bf16, WARP_VECTORS;
    softmax_block_f32 = Softmax, Block, f32, BLOCK_VECTORS;
    softmax_block_bf16 = Softmax, Block, Bf16, BLOCK_VECTORS;
    rmsnorm_warp_f32 = RmsNorm, Warp, f32, WARP_VECTORS;
    rmsnorm_warp_bf16 = RmsNorm, Warp, Bf16, WARP_VECTORS;
    rmsnorm_block_f32 = RmsNorm, Block, f32, BLOCK_VECTORS;
    rmsnorm_block_bf16 = RmsNorm, Block, Bf16, BLOCK_VECTORS;
    layernorm_warp_f32 = LayerNorm, Warp, f32, WARP_VECTORS;
    layernorm_warp_bf16 = LayerNorm, Warp, Bf16, WARP_VECTORS;
    layernorm_block_f32 = LayerNorm, Block, f32, BLOCK_VECTORS;
    layernorm_block_bf16 = LayerNorm, Block, Bf16, BLOCK_VECTORS;
    softmax_wide_f32 = Softmax, Block, f32, WIDE_VECTORS;
    softmax_wide_bf16 = Softmax, Block, Bf16, WIDE_VECTORS;
    rmsnorm_wide_f32 = RmsNorm, Block, f32, WIDE_VECTORS;
    rmsnorm_wide_bf16 = RmsNorm, Block, Bf16, WIDE_VECTORS;
    layernorm_wide_f32 = LayerNorm, Block, f32, WIDE_VECTORS;
    layernorm_wide_bf16 = LayerNorm, Block, Bf16, WIDE_VECTORS;
    softmax_streamed_f32 = Softmax, Streamed, f32, STREAMED_VECTORS;
    softmax_streamed_bf16 = Softmax, Streamed, Bf16, STREAMED_VECTORS;
    rmsnorm_streamed_f32 = RmsNorm, Streamed, f32, STREAMED_VECTORS;
    rmsnorm_streamed_bf16 = RmsNorm, Streamed, Bf16, STREAMED_VECTORS;
    layernorm_streamed_f32 = LayerNorm, Streamed, f32, STREAMED_VECTORS;
    layernorm_streamed_bf16 = LayerNorm, Streamed, Bf16, STREAMED_VECTORS;
}

row_entries! {
    softmax_cluster_f32 = Softmax, Cluster, f32, CLUSTER_VECTORS;
    softmax_cluster_bf16 = Softmax, Cluster, Bf16, CLUSTER_VECTORS;
    rmsnorm_cluster_f32 = RmsNorm, Cluster, f32, CLUSTER_VECTORS;
    rmsnorm_cluster_bf16 = RmsNorm, Cluster, Bf16, CLUSTER_VECTORS;
    layernorm_cluster_f32 = LayerNorm, Cluster, f32, CLUSTER_VECTORS;
    layernorm_cluster_bf16 = LayerNorm, Cluster, Bf16, CLUSTER_VECTORS;
}

row_entries! {
    softmax_pair_f32 = Softmax, ClusterPair<CLUSTER_THREADS>, f32, CLUSTER_VECTORS;
    softmax_pair_bf16 = Softmax, ClusterPair<CLUSTER_THREADS_BF16>, Bf16, CLUSTER_VECTORS;
    rmsnorm_pair_f32 = RmsNorm, ClusterPair<CLUSTER_THREADS>, f32, CLUSTER_VECTORS;
    rmsnorm_pair_bf16 = RmsNorm, ClusterPair<CLUSTER_THREADS_BF16>, Bf16, CLUSTER_VECTORS;
    layernorm_pair_f32 = LayerNorm, ClusterPair<CLUSTER_THREADS>, f32, CLUSTER_VECTORS;
    layernorm_pair_bf16 = LayerNorm, ClusterPair<CLUSTER_THREADS_BF16>, Bf16, CLUSTER_VECTORS;
}
