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
//! - [`Warp`]: a warp per row (short rows), the reduction five shuffles;
//! - [`Block`]: a block per row, warp shuffles → one shared slot per warp → one barrier →
//!   shuffles again;
//! - [`Cluster`] (rustc's backend only): the row split over the blocks of a thread-block
//!   cluster, each block's statistic sent into every block's shared memory by `st.async` and
//!   counted by an mbarrier; the grid holds only the clusters that fit at once, each walking
//!   rows.
//!
//! A thread of rank `r` (its block's in the cluster, else 0) and index `t` among the `T`
//! threads of its block's share holds the row's vectors `r·T·L + t + j·T`, `j < L`: each of
//! its `L` loads is a coalesced run of the block's threads, and each block of a cluster reads
//! a contiguous part of the row.
//!
//! Each thread reduces its own elements to a partial statistic ([`Stat`]: the softmax's running
//! max and sum, the sum of squares, or LayerNorm's count, mean and squared deviations), the
//! group merges them, and each thread writes its elements from its registers. (LayerNorm in a
//! warp or a block merges twice instead, a sum each: [`Op::row_of`].)
//!
//! # Parameters (every entry point)
//! - `x`: the input, `rows · cols` elements; `y`: the output, the same shape (`x` itself, in
//!   place, or not overlapping it);
//! - `w`, `b`: `cols` weights and biases (RMSNorm reads `w`, LayerNorm both, softmax neither:
//!   null is fine where unread);
//! - `rows`, `cols`; `eps`: added to the variance (the norms).
//!
//! When `x`, `y`, `w` and `b` are 16-byte aligned and `cols` is a multiple of the vector's
//! elements, every access is a 16-byte `ld.global.nc.v4` / `st.global.v4`; otherwise the same
//! threads load and store element by element (correct, not fast).
//!
//! # Launch (`catalog::rows` computes it from `cols`)
//! - warp: blocks of `32 · WARP_ROWS_PER_BLOCK` threads, `ceil(rows / WARP_ROWS_PER_BLOCK)`
//!   blocks, `cols ≤ 32 · WARP_VECTORS · V`;
//! - block: `rows` blocks of `T` threads (a multiple of 32, at most `BLOCK_MAX_THREADS`),
//!   `cols ≤ T · BLOCK_VECTORS · V`;
//! - cluster: clusters of `C` blocks of `CLUSTER_THREADS` (`CLUSTER_MIN ≤ C ≤ CLUSTER_MAX`),
//!   cluster dimension `(C, 1, 1)`, `cols ≤ C · CLUSTER_THREADS · CLUSTER_VECTORS · V`; as
//!   many clusters as rows, or fewer (the host launches those that fit on the GPU at once),
//!   each then walking the rows a grid's length apart ([`Group::next`]);
//! - dynamic shared memory `SHARED_BYTES`.

use crate::device::*;
pub use crate::launch::rows::*;
use core::f32::consts::LOG2_E;

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
const _: () = assert!(WARP_VECTORS <= 16 && BLOCK_VECTORS <= 16 && CLUSTER_VECTORS <= 16);
const _: () = assert!(SLOT_WORDS >= 3);

/// A BF16 element, as its 16 bits.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct Bf16(pub u16);

/// One 16-byte vector of a row, as four 32-bit words.
pub type Words = [u32; 4];

/// The element types: how a vector's words hold them, and how one is loaded or stored alone.
pub trait Elem: Copy {
    /// Elements per 16-byte vector.
    const PER_VEC: u32;
    /// Element `k` (< `PER_VEC`) of `v`, as f32 (exact).
    fn get(v: &Words, k: u32) -> f32;
    /// A vector of the first `PER_VEC` of `vals` (BF16: rounded to nearest even).
    fn pack(vals: &[f32; 8]) -> Words;
    /// Puts element `k`'s `bits` (as [`Elem::load_one`] returns them) into `v`, which holds
    /// zero there.
    fn place(v: &mut Words, k: u32, bits: u32);
    /// The bits of element `i` of `p`.
    ///
    /// # Safety
    /// `p.add(i)` must be readable.
    unsafe fn load_one(p: *const Self, i: u64) -> u32;
    /// Stores `v` (BF16: rounded to nearest even) as element `i` of `p`.
    ///
    /// # Safety
    /// `p.add(i)` must be writable.
    unsafe fn store_one(p: *mut Self, i: u64, v: f32);
}

impl Elem for f32 {
    const PER_VEC: u32 = 4;
    #[inline(always)]
    fn get(v: &Words, k: u32) -> f32 {
        f32::from_bits(v[k as usize])
    }
    #[inline(always)]
    fn pack(vals: &[f32; 8]) -> Words {
        [
            vals[0].to_bits(),
            vals[1].to_bits(),
            vals[2].to_bits(),
            vals[3].to_bits(),
        ]
    }
    #[inline(always)]
    fn place(v: &mut Words, k: u32, bits: u32) {
        v[k as usize] = bits;
    }
    #[inline(always)]
    unsafe fn load_one(p: *const Self, i: u64) -> u32 {
        (*p.add(i as usize)).to_bits()
    }
    #[inline(always)]
    unsafe fn store_one(p: *mut Self, i: u64, v: f32) {
        *p.add(i as usize) = v;
    }
}

impl Elem for Bf16 {
    const PER_VEC: u32 = 8;
    /// A BF16 is the upper half of the f32 with the same bits: element `2i` is the low half
    /// of word `i` (little-endian), `2i + 1` the high half ([`bf16_unpack`]).
    #[inline(always)]
    fn get(v: &Words, k: u32) -> f32 {
        let w = v[(k / 2) as usize];
        if k % 2 == 0 {
            bf16_unpack::<false>(w)
        } else {
            bf16_unpack::<true>(w)
        }
    }
    #[inline(always)]
    fn pack(vals: &[f32; 8]) -> Words {
        [
            bf16x2_rn(vals[1], vals[0]),
            bf16x2_rn(vals[3], vals[2]),
            bf16x2_rn(vals[5], vals[4]),
            bf16x2_rn(vals[7], vals[6]),
        ]
    }
    #[inline(always)]
    fn place(v: &mut Words, k: u32, bits: u32) {
        v[(k / 2) as usize] |= bits << (16 * (k % 2));
    }
    #[inline(always)]
    unsafe fn load_one(p: *const Self, i: u64) -> u32 {
        (*p.add(i as usize)).0 as u32
    }
    #[inline(always)]
    unsafe fn store_one(p: *mut Self, i: u64, v: f32) {
        *p.add(i as usize) = Bf16(bf16x2_rn(0.0, v) as u16);
    }
}

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
/// non-coherent loads that allocate in L1 (`ld.global.nc.v4`). The row is read once, but the
/// no-allocate load streamed about 3 % slower than this one on the H200 (docs/experiments.md,
/// E15: the same bytes at every level, a lower DRAM rate; no faster on the cluster kernels,
/// docs/part2.md). A thread reads each of its vectors before it writes it and never again,
/// so an `x` that is also `y` reads no stale line.
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
    let mut x = [[0u32; 4]; L];
    upto16!(L, j, {
        let i = at.vector(j);
        if G::LOADS_IN_ONE_RUN {
            x[j] = load4_ro(vectors.add(i.min(last) as usize)).0;
        } else if i < at.vectors {
            x[j] = load4_ro(vectors.add(i as usize)).0;
        }
    });
    x
}

/// A partial statistic of some of a row's elements, merged across threads.
pub trait Stat: Copy {
    /// The statistic of no element.
    const EMPTY: Self;
    /// The statistic of both parts.
    fn merge(self, other: Self) -> Self;
    /// Lane `lane ^ mask`'s statistic (`shfl.sync.bfly` of each word).
    ///
    /// # Safety
    /// All 32 lanes of the warp call it together.
    unsafe fn shfl_xor(self, mask: u32) -> Self;
    /// Its words, for a shared slot (at most `SLOT_WORDS`).
    fn words(self) -> [u32; 3];
    fn of_words(w: [u32; 3]) -> Self;
    /// How many of [`Stat::words`] it uses.
    const WORDS: usize;
}

/// The statistic over the warp, in every lane: five `shfl.sync.bfly` steps.
///
/// # Safety
/// All 32 lanes of the warp call it together.
#[inline(always)]
unsafe fn warp_merge<S: Stat>(mut s: S) -> S {
    let mut mask = 16;
    while mask > 0 {
        s = s.merge(s.shfl_xor(mask));
        mask >>= 1;
    }
    s
}

/// `e^x` as `2^(x · log2 e)` on the SFU ([`ex2_approx_f32`]).
#[inline(always)]
fn exp(x: f32) -> f32 {
    ex2_approx_f32(x * LOG2_E)
}

/// What one operation does with a row: its statistic, the row's constants it derives from
/// the merged statistic, and each output element.
pub trait Op {
    type Stat: Stat;
    /// What every element's output needs of the row (the max and 1 / sum; the mean and 1 / σ).
    type Row: Copy;
    /// Weight vectors read: 0 (softmax), 1 (`w`), 2 (`w`, `b`).
    const WEIGHTS: u32;
    /// The statistic of the elements `each` hands out: each call of `each` is one pass, calling
    /// its argument on every element of this thread (held in registers, or loaded again).
    fn local(each: impl Fn(&mut dyn FnMut(f32))) -> Self::Stat;
    fn row(s: Self::Stat, cols: u32, eps: f32) -> Self::Row;
    fn out(r: Self::Row, x: f32, w: f32, b: f32) -> f32;
    /// The row's constants from this thread's elements (`each`, as [`Op::local`]'s): `row` of
    /// the group's merge of `local`.
    ///
    /// # Safety
    /// As [`Group::merge`].
    #[inline(always)]
    unsafe fn row_of<G: Group, F: Fn(&mut dyn FnMut(f32))>(
        seat: Seat,
        each: F,
        cols: u32,
        eps: f32,
    ) -> Self::Row {
        Self::row(G::merge(seat, Self::local(each)), cols, eps)
    }
}

/// The max subtracted before the exponential: the max itself, or 0 when it is −inf (a part
/// holding only −inf, whose exponentials are 0, not `e^(−inf + inf)` = NaN).
#[inline(always)]
fn shift(max: f32) -> f32 {
    if max == f32::NEG_INFINITY {
        0.0
    } else {
        max
    }
}

/// Softmax's partial statistic: the part's max (NaN ignored) and `Σ e^(x − shift(max))`.
#[derive(Clone, Copy)]
pub struct MaxSum {
    pub max: f32,
    pub sum: f32,
}

impl MaxSum {
    /// The factor that moves this part's sum onto `shift` (0 for a part of −inf alone; NaN
    /// when both are +inf, as the row's result must be).
    #[inline(always)]
    fn rescaled(self, shift_to: f32) -> f32 {
        let f = if self.max == f32::NEG_INFINITY {
            0.0
        } else {
            exp(self.max - shift_to)
        };
        self.sum * f
    }
}

impl Stat for MaxSum {
    const EMPTY: Self = MaxSum {
        max: f32::NEG_INFINITY,
        sum: 0.0,
    };
    const WORDS: usize = 2;
    #[inline(always)]
    fn merge(self, o: Self) -> Self {
        let max = self.max.max(o.max);
        let to = shift(max);
        MaxSum {
            max,
            sum: self.rescaled(to) + o.rescaled(to),
        }
    }
    #[inline(always)]
    unsafe fn shfl_xor(self, mask: u32) -> Self {
        MaxSum {
            max: f32::from_bits(shfl_xor(self.max.to_bits(), mask)),
            sum: f32::from_bits(shfl_xor(self.sum.to_bits(), mask)),
        }
    }
    #[inline(always)]
    fn words(self) -> [u32; 3] {
        [self.max.to_bits(), self.sum.to_bits(), 0]
    }
    #[inline(always)]
    fn of_words(w: [u32; 3]) -> Self {
        MaxSum {
            max: f32::from_bits(w[0]),
            sum: f32::from_bits(w[1]),
        }
    }
}

/// `F.softmax(x, dim=-1)`.
pub struct Softmax;

impl Op for Softmax {
    type Stat = MaxSum;
    /// The shift and 1 / Σ.
    type Row = (f32, f32);
    const WEIGHTS: u32 = 0;
    #[inline(always)]
    fn local(each: impl Fn(&mut dyn FnMut(f32))) -> MaxSum {
        let mut max = f32::NEG_INFINITY;
        each(&mut |v| max = max.max(v));
        let to = shift(max);
        let mut sum = 0.0;
        each(&mut |v| sum += exp(v - to));
        MaxSum { max, sum }
    }
    #[inline(always)]
    fn row(s: MaxSum, _cols: u32, _eps: f32) -> (f32, f32) {
        (shift(s.max), div_full_f32(1.0, s.sum))
    }
    #[inline(always)]
    fn out((to, inv): (f32, f32), x: f32, _w: f32, _b: f32) -> f32 {
        exp(x - to) * inv
    }
}

/// A plain sum: RMSNorm's `Σ x²`, LayerNorm's `Σ x` and `Σ (x − mean)²` in a warp or a block.
#[derive(Clone, Copy)]
pub struct Sum(pub f32);

impl Stat for Sum {
    const EMPTY: Self = Sum(0.0);
    const WORDS: usize = 1;
    #[inline(always)]
    fn merge(self, o: Self) -> Self {
        Sum(self.0 + o.0)
    }
    #[inline(always)]
    unsafe fn shfl_xor(self, mask: u32) -> Self {
        Sum(f32::from_bits(shfl_xor(self.0.to_bits(), mask)))
    }
    #[inline(always)]
    fn words(self) -> [u32; 3] {
        [self.0.to_bits(), 0, 0]
    }
    #[inline(always)]
    fn of_words(w: [u32; 3]) -> Self {
        Sum(f32::from_bits(w[0]))
    }
}

/// `F.rms_norm(x, (cols,), w, eps)`.
pub struct RmsNorm;

impl Op for RmsNorm {
    type Stat = Sum;
    /// 1 / sqrt(mean(x²) + eps).
    type Row = f32;
    const WEIGHTS: u32 = 1;
    #[inline(always)]
    fn local(each: impl Fn(&mut dyn FnMut(f32))) -> Sum {
        let mut ss = 0.0;
        each(&mut |v| ss += v * v);
        Sum(ss)
    }
    #[inline(always)]
    fn row(s: Sum, cols: u32, eps: f32) -> f32 {
        div_full_f32(1.0, sqrt_rn_f32(div_full_f32(s.0, cols as f32) + eps))
    }
    #[inline(always)]
    fn out(rstd: f32, x: f32, w: f32, _b: f32) -> f32 {
        x * rstd * w
    }
}

/// LayerNorm's partial statistic: the part's element count, mean and sum of squared
/// deviations from it, merged by Chan et al.'s pairwise rule (no cancellation of E[x²] − E[x]²).
#[derive(Clone, Copy)]
pub struct MeanVar {
    pub n: f32,
    pub mean: f32,
    pub m2: f32,
}

impl Stat for MeanVar {
    const EMPTY: Self = MeanVar {
        n: 0.0,
        mean: 0.0,
        m2: 0.0,
    };
    const WORDS: usize = 3;
    #[inline(always)]
    fn merge(self, o: Self) -> Self {
        let n = self.n + o.n;
        let d = o.mean - self.mean;
        // Counts are whole, so `n.max(1.0)` is `n` unless both parts are empty, and then `f`
        // is 0 and the merge is the empty statistic: no branch around the division, which
        // ptxas would otherwise keep between every shuffle step.
        let f = div_full_f32(o.n, n.max(1.0));
        MeanVar {
            n,
            mean: self.mean + d * f,
            m2: self.m2 + o.m2 + d * d * self.n * f,
        }
    }
    #[inline(always)]
    unsafe fn shfl_xor(self, mask: u32) -> Self {
        MeanVar {
            n: f32::from_bits(shfl_xor(self.n.to_bits(), mask)),
            mean: f32::from_bits(shfl_xor(self.mean.to_bits(), mask)),
            m2: f32::from_bits(shfl_xor(self.m2.to_bits(), mask)),
        }
    }
    #[inline(always)]
    fn words(self) -> [u32; 3] {
        [self.n.to_bits(), self.mean.to_bits(), self.m2.to_bits()]
    }
    #[inline(always)]
    fn of_words(w: [u32; 3]) -> Self {
        MeanVar {
            n: f32::from_bits(w[0]),
            mean: f32::from_bits(w[1]),
            m2: f32::from_bits(w[2]),
        }
    }
}

/// `F.layer_norm(x, (cols,), w, b, eps)`.
pub struct LayerNorm;

impl Op for LayerNorm {
    type Stat = MeanVar;
    /// The mean and 1 / sqrt(var + eps).
    type Row = (f32, f32);
    const WEIGHTS: u32 = 2;
    #[inline(always)]
    fn local(each: impl Fn(&mut dyn FnMut(f32))) -> MeanVar {
        // The count in an integer: its adds fold into one per vector, where a float count
        // is one more FADD per element.
        let (mut count, mut sum) = (0u32, 0.0f32);
        each(&mut |v| {
            count += 1;
            sum += v;
        });
        if count == 0 {
            return MeanVar::EMPTY;
        }
        let n = count as f32;
        let mean = div_full_f32(sum, n);
        let mut m2 = 0.0;
        each(&mut |v| m2 += (v - mean) * (v - mean));
        MeanVar { n, mean, m2 }
    }
    #[inline(always)]
    fn row(s: MeanVar, cols: u32, eps: f32) -> (f32, f32) {
        (
            s.mean,
            div_full_f32(1.0, sqrt_rn_f32(div_full_f32(s.m2, cols as f32) + eps)),
        )
    }
    #[inline(always)]
    fn out((mean, rstd): (f32, f32), x: f32, w: f32, b: f32) -> f32 {
        (x - mean) * rstd * w + b
    }
    /// Where the group merges again cheaply (a warp, a block), the exact two-pass variance:
    /// the group's `Σ x` gives the mean, then its `Σ (x − mean)²` over the held elements the
    /// variance. Two merges of one word each (five shuffle-adds per warp) instead of one of
    /// [`MeanVar`]'s three, whose every step divides: a shorter chain between the last load
    /// and the first store (no division in either merge). A cluster merges once.
    #[inline(always)]
    unsafe fn row_of<G: Group, F: Fn(&mut dyn FnMut(f32))>(
        seat: Seat,
        each: F,
        cols: u32,
        eps: f32,
    ) -> (f32, f32) {
        if !G::MERGES_AGAIN_CHEAPLY {
            return Self::row(G::merge(seat, Self::local(each)), cols, eps);
        }
        let mut sum = 0.0;
        each(&mut |v| sum += v);
        let mean = div_full_f32(G::merge(seat, Sum(sum)).0, cols as f32);
        let mut m2 = 0.0;
        each(&mut |v| m2 += (v - mean) * (v - mean));
        let var = div_full_f32(G::merge_again(seat, Sum(m2)).0, cols as f32);
        (mean, div_full_f32(1.0, sqrt_rn_f32(var + eps)))
    }
}

/// Where a thread sits in the group that holds its row.
#[derive(Clone, Copy)]
pub struct Seat {
    pub row: u32,
    /// Its block's rank in the cluster (0 outside a cluster).
    pub rank: u32,
    /// Its index among the threads of its block that hold the row, and how many those are.
    pub t: u32,
    pub threads: u32,
    /// How many rows the group held before this one (a cluster walks several).
    pub turn: u32,
}

/// How many threads hold a row, and how they merge their statistics.
pub trait Group {
    /// This thread's seat; None when its group has no row (past the last).
    fn seat(rows: u32) -> Option<Seat>;
    /// The seat of the group's next row, after `seat`'s: None where each group holds one row
    /// (a warp, a block); a cluster walks the rows its grid does not cover.
    #[inline(always)]
    fn next(_seat: Seat, _rows: u32) -> Option<Seat> {
        None
    }
    /// Before the group's first row.
    ///
    /// # Safety
    /// Every thread of the group calls it, once, before [`Group::merge`].
    #[inline(always)]
    unsafe fn start() {}
    /// The statistic over the whole group, in every thread.
    ///
    /// # Safety
    /// Every thread of the group calls it together (it may hold barriers), once a row.
    unsafe fn merge<S: Stat>(seat: Seat, s: S) -> S;
    /// Whether a second merge costs about what the first did (a warp's shuffles, a block's
    /// one barrier more), so an op may spend one on a simpler statistic; not a cluster's,
    /// whose blocks wait on each other again.
    const MERGES_AGAIN_CHEAPLY: bool = true;
    /// Whether the row's loads are one straight run ([`load`]): where the kernel has the
    /// registers for their clamped addresses.
    const LOADS_IN_ONE_RUN: bool = false;
    /// A merge after [`Group::merge`].
    ///
    /// # Safety
    /// As [`Group::merge`], after it, and the two statistics' words together at most
    /// `SLOT_WORDS`.
    #[inline(always)]
    unsafe fn merge_again<S: Stat>(seat: Seat, s: S) -> S {
        Self::merge(seat, s)
    }
    /// After the group's last row, before its threads exit.
    ///
    /// # Safety
    /// Every thread of the group calls it, once.
    #[inline(always)]
    unsafe fn done() {}
}

/// A warp per row: `block_dim / 32` rows per block.
pub struct Warp;

impl Group for Warp {
    #[inline(always)]
    fn seat(rows: u32) -> Option<Seat> {
        let row = block_idx_x() * (block_dim_x() / 32) + thread_idx_x() / 32;
        (row < rows).then(|| Seat {
            row,
            rank: 0,
            t: thread_idx_x() % 32,
            threads: 32,
            turn: 0,
        })
    }
    #[inline(always)]
    unsafe fn merge<S: Stat>(_seat: Seat, s: S) -> S {
        warp_merge(s)
    }
}

/// A block per row.
pub struct Block;

/// The statistic over the block, in every thread: each warp's in its lanes, lane 0 writes it
/// to the warp's shared slot (`slots`, a warp's every `SLOT_WORDS`), one barrier, then every
/// warp merges the slots.
///
/// # Safety
/// Every thread of the block calls it; `slots` points into the block's shared memory, at 32
/// slots, `S::WORDS` words of each free for this merge.
#[inline(always)]
unsafe fn block_merge<S: Stat>(s: S, slots: *mut u32) -> S {
    let s = warp_merge(s);
    let (tid, warps) = (thread_idx_x(), block_dim_x() / 32);
    let (warp, lane) = (tid / 32, tid % 32);
    if lane == 0 {
        let w = s.words();
        upto16!(S::WORDS, i, {
            *slots.add((warp * SLOT_WORDS) as usize + i) = w[i];
        });
    }
    sync_threads();
    let mine = if lane < warps {
        let mut w = [0u32; 3];
        upto16!(S::WORDS, i, {
            w[i] = *slots.add((lane * SLOT_WORDS) as usize + i);
        });
        S::of_words(w)
    } else {
        S::EMPTY
    };
    warp_merge(mine)
}

impl Group for Block {
    #[inline(always)]
    fn seat(rows: u32) -> Option<Seat> {
        (block_idx_x() < rows).then(|| Seat {
            row: block_idx_x(),
            rank: 0,
            t: thread_idx_x(),
            threads: block_dim_x(),
            turn: 0,
        })
    }
    #[inline(always)]
    unsafe fn merge<S: Stat>(_seat: Seat, s: S) -> S {
        block_merge(s, dynamic_shared::<u32>())
    }
    /// In the words of each slot the first merge left free (the slots' last `S::WORDS`), so
    /// no warp waits for the others to have read the first merge's: its one barrier.
    #[inline(always)]
    unsafe fn merge_again<S: Stat>(_seat: Seat, s: S) -> S {
        block_merge(
            s,
            dynamic_shared::<u32>().add(SLOT_WORDS as usize - S::WORDS),
        )
    }
}

/// A thread-block cluster per row (sm_90, rustc's backend only).
#[cfg(not(feature = "nvvm"))]
pub struct Cluster;

/// The cluster's shared memory, past the block's 32 slots: a second set of 32 (rows of odd
/// turn), then the blocks' statistics of even and odd turns (`CLUSTER_MAX` slots each), then
/// the two barriers that count them.
#[cfg(not(feature = "nvvm"))]
mod cluster_shared {
    use super::*;
    /// The 32 warp slots of a turn's block merge.
    pub fn warp_slots(turn: u32) -> *mut u32 {
        // SAFETY (all three): offsets inside `SHARED_BYTES`.
        unsafe { dynamic_shared::<u32>().add(((turn % 2) * 32 * SLOT_WORDS) as usize) }
    }
    /// The blocks' statistics of a turn, block `r`'s at slot `r`.
    pub fn block_slots(turn: u32) -> *mut u32 {
        let at = 64 * SLOT_WORDS + (turn % 2) * CLUSTER_MAX * SLOT_WORDS;
        unsafe { dynamic_shared::<u32>().add(at as usize) }
    }
    /// The barrier whose phase completes when every block's statistic of a turn has arrived.
    pub fn arrived(turn: u32) -> *mut u64 {
        let at = (64 + 2 * CLUSTER_MAX) * SLOT_WORDS * 4 + (turn % 2) * 8;
        unsafe { dynamic_shared::<u8>().add(at as usize) as *mut u64 }
    }
}

#[cfg(not(feature = "nvvm"))]
impl Group for Cluster {
    #[inline(always)]
    fn seat(rows: u32) -> Option<Seat> {
        (cluster_id_x() < rows).then(|| Seat {
            row: cluster_id_x(),
            rank: cluster_ctarank(),
            t: thread_idx_x(),
            threads: block_dim_x(),
            turn: 0,
        })
    }
    /// The grid holds at most the clusters that fit on the GPU at once (the host's launch):
    /// each walks the rows `r, r + clusters, …`, so its barriers are set up once, not once a
    /// row ([`Group::start`], [`Group::done`]). The thread's index passes through
    /// [`opaque_u32`]: the addresses of its vectors and weights are then computed for each
    /// row, not hoisted and held across rows (which took the kernels from 56–64 registers to
    /// 72–96: one block an SM instead of two).
    #[inline(always)]
    fn next(seat: Seat, rows: u32) -> Option<Seat> {
        let row = seat
            .row
            .checked_add(cluster_count_x())
            .filter(|&r| r < rows)?;
        Some(Seat {
            row,
            t: opaque_u32(seat.t),
            turn: seat.turn + 1,
            ..seat
        })
    }
    /// Thread 0 sets up the two barriers (each completes a phase on its one arrival and the
    /// bytes it expects); a cluster barrier, so no block sends to another's before they are.
    #[inline(always)]
    unsafe fn start() {
        if thread_idx_x() == 0 {
            mbarrier_init_for_cluster(cluster_shared::arrived(0), 1);
            mbarrier_init_for_cluster(cluster_shared::arrived(1), 1);
        }
        cluster_arrive_relaxed();
        cluster_wait();
    }
    /// Each block's statistic ([`block_merge`]), then thread `r` of each block sends it to
    /// block `r`'s slot by an asynchronous store that block `r`'s barrier counts; every
    /// thread waits for its block's barrier (every block's statistic there), and every warp
    /// merges the slots (lane r block r's). No cluster barrier, no fence: a block waits only
    /// for the words it needs. A turn's slots and barrier alternate with the next's, and a
    /// block cannot send a turn ahead before every block has read this one (it would need
    /// their next statistics first).
    #[inline(always)]
    unsafe fn merge<S: Stat>(seat: Seat, s: S) -> S {
        let s = block_merge(s, cluster_shared::warp_slots(seat.turn));
        let (slots, arrived) = (
            cluster_shared::block_slots(seat.turn),
            cluster_shared::arrived(seat.turn),
        );
        let blocks = cluster_nctarank();
        let tid = thread_idx_x();
        if tid == 0 {
            mbarrier_arrive_expect_tx(arrived, blocks * S::WORDS as u32 * 4);
        }
        if tid < blocks {
            let w = s.words();
            let mine = slots.add((seat.rank * SLOT_WORDS) as usize);
            upto16!(S::WORDS, i, {
                st_async_u32(mine.add(i), w[i], arrived, tid);
            });
        }
        mbarrier_wait_parity(arrived, (seat.turn / 2) % 2);
        let lane = tid % 32;
        let theirs = if lane < blocks {
            let mut w = [0u32; 3];
            upto16!(S::WORDS, i, {
                w[i] = *slots.add((lane * SLOT_WORDS) as usize + i);
            });
            S::of_words(w)
        } else {
            S::EMPTY
        };
        warp_merge(theirs)
    }
    const MERGES_AGAIN_CHEAPLY: bool = false;
    const LOADS_IN_ONE_RUN: bool = true;
    /// No block exits while another may still send to it.
    #[inline(always)]
    unsafe fn done() {
        cluster_arrive_relaxed();
        cluster_wait();
    }
}

/// One row held in registers: this thread's vectors by 16-byte loads, its statistic, the
/// group's, then `O::out` of each element with its weights (16-byte read-only loads through
/// L1, where every row's group finds them), by 16-byte stores.
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
    let at = Lanes {
        first: seat.rank * seat.threads * L as u32 + seat.t,
        stride: seat.threads,
        vectors: cols / E::PER_VEC,
    };
    let held = load::<E, G, L>(x.add(start as usize), at);
    let r = O::row_of::<G, _>(
        seat,
        |f: &mut dyn FnMut(f32)| each::<E, L>(&held, at, f),
        cols,
        eps,
    );
    let y = y.add(start as usize) as *mut Vec4<u32>;
    let weights = |p: *const E, used: bool, i: u32| {
        if used {
            load4_ro((p as *const Vec4<u32>).add(i as usize)).0
        } else {
            [0u32; 4]
        }
    };
    // In one run (see [`load`]), every vector's weights are loaded and its outputs computed,
    // and the store is predicated off past the row's end: no branch between one vector's
    // weight loads and the next's, so they need not wait on each other. Not with two weight
    // vectors: holding both ahead took LayerNorm's cluster kernels to 70–72 registers, one
    // block of 512 an SM instead of two.
    let one_run = G::LOADS_IN_ONE_RUN && O::WEIGHTS < 2;
    let last = at.vectors - 1;
    upto16!(L, j, {
        let i = at.vector(j);
        let at_i = if one_run { i.min(last) } else { i };
        if one_run || i < at.vectors {
            let wv = weights(w, O::WEIGHTS >= 1, at_i);
            let bv = weights(b, O::WEIGHTS >= 2, at_i);
            let mut out = [0.0f32; 8];
            upto16!(E::PER_VEC as usize, k, {
                let k32 = k as u32;
                out[k] = O::out(r, E::get(&held[j], k32), E::get(&wv, k32), E::get(&bv, k32));
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

/// One row element by element, for a misaligned pointer or `cols` not a multiple of
/// `E::PER_VEC`: the same threads and statistic, but each pass loads the thread's elements
/// again (nothing held: this path adds no registers to the kernel's fast path).
///
/// # Safety
/// As [`row_kernel`]'s.
#[inline(always)]
unsafe fn row_by_element<E: Elem, O: Op, G: Group, const L: usize>(
    seat: Seat,
    x: *const E,
    (w, b): (*const E, *const E),
    y: *mut E,
    cols: u32,
    eps: f32,
) {
    let start = seat.row as u64 * cols as u64;
    let (x, y) = (x.add(start as usize), y.add(start as usize));
    let per_vec = E::PER_VEC as u64;
    // The thread's vectors, `first`, `first + threads`, … below `end` (a run-time bound, so
    // the loops stay loops and their loads are not hoisted into registers), each element
    // inside the row.
    let chunk = seat.rank * seat.threads * L as u32;
    let vectors = cols / E::PER_VEC + (cols % E::PER_VEC != 0) as u32;
    let end = (chunk + seat.threads * L as u32).min(vectors);
    let each_element = |f: &mut dyn FnMut(u64)| {
        let mut v = chunk + seat.t;
        while v < end {
            for k in 0..per_vec {
                let e = v as u64 * per_vec + k;
                if e < cols as u64 {
                    f(e);
                }
            }
            v += seat.threads;
        }
    };
    let value = |p: *const E, e: u64| {
        let mut one = [0u32; 4];
        E::place(&mut one, 0, E::load_one(p, e));
        E::get(&one, 0)
    };
    let r = O::row_of::<G, _>(
        seat,
        |f: &mut dyn FnMut(f32)| each_element(&mut |e| f(value(x, e))),
        cols,
        eps,
    );
    each_element(&mut |e| {
        let wv = if O::WEIGHTS >= 1 { value(w, e) } else { 0.0 };
        let bv = if O::WEIGHTS >= 2 { value(b, e) } else { 0.0 };
        E::store_one(y, e, O::out(r, value(x, e), wv, bv));
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
    loop {
        if vectors {
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
}

#[cfg(not(feature = "nvvm"))]
row_entries! {
    softmax_cluster_f32 = Softmax, Cluster, f32, CLUSTER_VECTORS;
    softmax_cluster_bf16 = Softmax, Cluster, Bf16, CLUSTER_VECTORS;
    rmsnorm_cluster_f32 = RmsNorm, Cluster, f32, CLUSTER_VECTORS;
    rmsnorm_cluster_bf16 = RmsNorm, Cluster, Bf16, CLUSTER_VECTORS;
    layernorm_cluster_f32 = LayerNorm, Cluster, f32, CLUSTER_VECTORS;
    layernorm_cluster_bf16 = LayerNorm, Cluster, Bf16, CLUSTER_VECTORS;
}
