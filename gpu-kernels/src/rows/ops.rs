//! What each operation computes of a row: its partial statistic, how two merge, the row's
//! constants and each output element (softmax, RMSNorm, LayerNorm).

use super::*;
use core::f32::consts::LOG2_E;

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
    /// The statistic of this thread's part and lane `lane ^ mask`'s where both hold as many
    /// elements (a statistic that carries its count then needs neither its shuffle nor a
    /// division by it): [`Stat::merge`] of [`Stat::shfl_xor`] unless it says otherwise.
    ///
    /// # Safety
    /// As [`Stat::shfl_xor`].
    #[inline(always)]
    unsafe fn merge_equal_lane(self, mask: u32) -> Self {
        self.merge(self.shfl_xor(mask))
    }
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
    /// [`Op::out`] of element `k` of a held vector `v`, as [`Op::row_of_held`] left it.
    #[inline(always)]
    fn out_held<E: Elem>(r: Self::Row, v: &Words, k: u32, w: f32, b: f32) -> f32 {
        Self::out(r, E::get(v, k), w, b)
    }
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
    /// [`Op::row_of`] in the 16-byte path, from the vectors this thread holds (`held`, the
    /// row's those below `at.vectors`), which the op may replace by what its
    /// [`Op::out_held`] then reads in their place.
    ///
    /// # Safety
    /// As [`Group::merge`].
    #[inline(always)]
    unsafe fn row_of_held<E: Elem, G: Group, const L: usize>(
        seat: Seat,
        held: &mut [Words; L],
        at: Lanes,
        cols: u32,
        eps: f32,
    ) -> Self::Row {
        Self::row_of_each_held::<E, G, L>(seat, held, at, cols, eps)
    }
    /// [`Op::row_of`] with `each` a pass over the held vectors: [`Op::row_of_held`] where the
    /// op replaces nothing.
    ///
    /// # Safety
    /// As [`Group::merge`].
    #[inline(always)]
    unsafe fn row_of_each_held<E: Elem, G: Group, const L: usize>(
        seat: Seat,
        held: &[Words; L],
        at: Lanes,
        cols: u32,
        eps: f32,
    ) -> Self::Row {
        let each = |f: &mut dyn FnMut(f32)| each::<E, L>(held, at, f);
        Self::row_of::<G, _>(seat, each, cols, eps)
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

/// A statistic held in one f32, `$name(f32)`: given its empty value and how two merge; its
/// shuffle and its shared word are the f32's bits.
macro_rules! one_word_stat {
    ($(#[$m:meta])* $name:ident, empty: $empty:expr, merge: |$a:ident, $b:ident| $merge:expr) => {
        $(#[$m])*
        #[derive(Clone, Copy)]
        pub struct $name(pub f32);

        impl Stat for $name {
            const EMPTY: Self = $name($empty);
            const WORDS: usize = 1;
            #[inline(always)]
            fn merge(self, o: Self) -> Self {
                let ($a, $b) = (self.0, o.0);
                $name($merge)
            }
            #[inline(always)]
            unsafe fn shfl_xor(self, mask: u32) -> Self {
                $name(f32::from_bits(shfl_xor(self.0.to_bits(), mask)))
            }
            #[inline(always)]
            fn words(self) -> [u32; 3] {
                [self.0.to_bits(), 0, 0]
            }
            #[inline(always)]
            fn of_words(w: [u32; 3]) -> Self {
                $name(f32::from_bits(w[0]))
            }
        }
    };
}

one_word_stat!(
    /// The largest of a part's elements (NaN ignored): softmax's first merge where the group
    /// merges twice.
    Max, empty: f32::NEG_INFINITY, merge: |a, b| a.max(b)
);

one_word_stat!(
    /// A plain sum: RMSNorm's `Σ x²`, LayerNorm's `Σ x` and `Σ (x − mean)²` in a warp or a
    /// block.
    Sum, empty: 0.0, merge: |a, b| a + b
);

/// What softmax's every output needs of its row.
#[derive(Clone, Copy)]
pub struct SoftmaxRow {
    /// The row's max, subtracted before the exponential ([`shift`]).
    shift: f32,
    /// 1 / Σ e^(x − shift); from [`Op::row_of_held`], times what moves this thread's
    /// exponentials onto `shift`.
    inv: f32,
}

/// `F.softmax(x, dim=-1)`.
pub struct Softmax;

impl Op for Softmax {
    type Stat = MaxSum;
    type Row = SoftmaxRow;
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
    fn row(s: MaxSum, _cols: u32, _eps: f32) -> SoftmaxRow {
        SoftmaxRow {
            shift: shift(s.max),
            inv: div_full_f32(1.0, s.sum),
        }
    }
    #[inline(always)]
    fn out(r: SoftmaxRow, x: f32, _w: f32, _b: f32) -> f32 {
        exp(x - r.shift) * r.inv
    }
    /// The held exponential (f32 words, or in BF16 two IEEE halves a word) times `inv`.
    #[inline(always)]
    fn out_held<E: Elem>(r: SoftmaxRow, v: &Words, k: u32, _w: f32, _b: f32) -> f32 {
        let e = if E::WORD_IS_F32 {
            E::get(v, k)
        } else if k % 2 == 0 {
            f16_unpack::<false>(v[(k / 2) as usize])
        } else {
            f16_unpack::<true>(v[(k / 2) as usize])
        };
        e * r.inv
    }
    /// One `ex2` an element, each exponential kept in the register its element held, and
    /// each output that exponential times a factor: not [`MaxSum`]'s two (one for the sum,
    /// one for the output), which in BF16 ask the SFU for more than it has (16 `MUFU.EX2` a
    /// cycle an SM: at the copy's 4 TB/s, 2 · 10^12 BF16 elements a second, two each would
    /// keep it 96 % busy).
    ///
    /// Where the group merges again cheaply (a warp, a block) and a vector's words are f32:
    /// the row's max first, then each element's exponential of `x − max`, summed, the sum
    /// merged, and each output that exponential times 1 / Σ (rustc's `softmax_warp_f32`:
    /// 34 `MUFU.EX2` in the SASS instead of 60). Elsewhere (a cluster, or BF16) one merge
    /// ([`Softmax::exp_from_own_max`]).
    #[inline(always)]
    unsafe fn row_of_held<E: Elem, G: Group, const L: usize>(
        seat: Seat,
        held: &mut [Words; L],
        at: Lanes,
        cols: u32,
        eps: f32,
    ) -> SoftmaxRow {
        if !(G::MERGES_AGAIN_CHEAPLY && E::WORD_IS_F32) {
            return Self::exp_from_own_max::<E, G, L>(seat, held, at, cols, eps);
        }
        let mut max = f32::NEG_INFINITY;
        each::<E, L>(held, at, &mut |v| max = max.max(v));
        let to = shift(G::merge(seat, Max(max)).0);
        let sum = Self::exp_in_place::<E, L>(held, at, to);
        SoftmaxRow {
            shift: to,
            inv: div_full_f32(1.0, G::merge_again(seat, Sum(sum)).0),
        }
    }
}

impl Softmax {
    /// One merge: each element's exponential of `x` less its thread's own max, kept in its
    /// element's place and summed; the group merges [`MaxSum`] once; each output is that
    /// exponential times `e^(own max − row max) / Σ`, one factor a thread. In BF16 the
    /// exponentials (each in [0, 1]) are kept as IEEE halves, two a word where the two
    /// elements were: within 2^-12 of each (2^-25 absolute below 2^-14), before the output's
    /// own BF16 rounding (up to 2^-8).
    ///
    /// # Safety
    /// As [`Group::merge`].
    #[inline(always)]
    unsafe fn exp_from_own_max<E: Elem, G: Group, const L: usize>(
        seat: Seat,
        held: &mut [Words; L],
        at: Lanes,
        cols: u32,
        eps: f32,
    ) -> SoftmaxRow {
        let mut max = f32::NEG_INFINITY;
        each::<E, L>(held, at, &mut |v| max = max.max(v));
        let sum = Self::exp_in_place::<E, L>(held, at, shift(max));
        let row = Self::row(G::merge(seat, MaxSum { max, sum }), cols, eps);
        SoftmaxRow {
            inv: row.inv * MaxSum { max, sum: 1.0 }.rescaled(row.shift),
            ..row
        }
    }

    /// Each held element's `e^(x − to)` in its place (f32 words, or two IEEE halves a BF16
    /// word, as [`Op::out_held`] reads them), and their sum. Only the row's vectors: past its
    /// end a group's loads left zeros or clamped copies ([`load`]), and the stores skip them.
    #[inline(always)]
    fn exp_in_place<E: Elem, const L: usize>(held: &mut [Words; L], at: Lanes, to: f32) -> f32 {
        let mut sum = 0.0;
        upto16!(L, j, {
            if at.vector(j) < at.vectors {
                upto16!(4, k, {
                    if E::WORD_IS_F32 {
                        let e = exp(f32::from_bits(held[j][k]) - to);
                        held[j][k] = e.to_bits();
                        sum += e;
                    } else {
                        let lo = exp(E::get(&held[j], 2 * k as u32) - to);
                        let hi = exp(E::get(&held[j], 2 * k as u32 + 1) - to);
                        held[j][k] = f16x2_rn(hi, lo);
                        sum += lo + hi;
                    }
                });
            }
        });
        sum
    }
}

/// `F.rms_norm(x, (cols,), w, eps)`.
pub struct RmsNorm;

impl Op for RmsNorm {
    type Stat = Sum;
    /// 1 / sqrt(mean(x²) + eps).
    type Row = f32;
    const WEIGHTS: u32 = 1;
    /// The squares summed by FMA, as rust-cuda's compiler contracts `ss + v · v` by itself and
    /// rustc does not: with a multiplication and an addition an element, ptxas keeps rustc's
    /// `rmsnorm_block_f32` to 32 registers by issuing its 3rd and 4th row loads only after the
    /// 1st lands (a DRAM round trip more a row); by FMA it issues all four first, as in
    /// rust-cuda's kernel. At 32768 x 1024 f32 under ncu: DRAM 79.7 → 82.0 % busy, 63.3 →
    /// 61.4 µs; in the peers' rotation 1.023–1.032 → 1.007–1.014 x the best peer's time
    /// (results/rows/e8c249d/experiments, section 1).
    #[inline(always)]
    fn local(each: impl Fn(&mut dyn FnMut(f32))) -> Sum {
        let mut ss = 0.0;
        each(&mut |v| ss = fma_f32(v, v, ss));
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
        // ptxas would otherwise keep between every shuffle step. The count's reciprocal
        // within 1 ulp (`n` is at least 1 and whole, never subnormal) in one MUFU.RCP, not
        // `div.full` and its range checks, fifteen times a row in a cluster (five steps each
        // in the warp, block and cluster merges): LayerNorm's clusters at 1024 x 131072 and
        // 256 x 262144 0.84 → 0.87 and 0.77 → 0.79 x copy in BF16, 0.93 → 0.95 and 0.84 →
        // 0.86 in f32 (results/rows/5b88863/experiments).
        let f = o.n * rcp_approx_f32(n.max(1.0));
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
    /// Of two parts of `n` elements each: the mean of the two means and `m2a + m2b + d² · n / 2`,
    /// Chan's rule with its factor `n / 2n` a half: two shuffles (not the count's) and no
    /// reciprocal on the chain. The mean as `fma(0.5, b, 0.5 · a)`, which rounds `a / 2 + b / 2`
    /// once (each half exact unless subnormal), so both lanes of a pair hold the same bits.
    #[inline(always)]
    unsafe fn merge_equal_lane(self, mask: u32) -> Self {
        let mean = f32::from_bits(shfl_xor(self.mean.to_bits(), mask));
        let m2 = f32::from_bits(shfl_xor(self.m2.to_bits(), mask));
        let d = mean - self.mean;
        MeanVar {
            n: self.n * 2.0,
            mean: fma_f32(0.5, mean, 0.5 * self.mean),
            m2: fma_f32(d * d, 0.5 * self.n, self.m2 + m2),
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
    /// In BF16, `(x · rstd − mean · rstd) · w + b`: two FMAs an element instead of a
    /// subtraction, a multiplication and an FMA, where the BF16 kernels keep the SMs issuing
    /// (LayerNorm's BF16 cluster at 256 x 262144: issue 69 % of the cycles, DRAM 59 %,
    /// results/rows/3926b23/experiments). The sum with `−mean · rstd` adds at most about
    /// 2^-24 · |mean| / σ to `(x − mean) · rstd`: under the output's own BF16 rounding (2^-9
    /// of it) unless the row's mean is some 2^15 of its σ. In f32, [`Op::out`].
    #[inline(always)]
    fn out_held<E: Elem>((mean, rstd): (f32, f32), v: &Words, k: u32, w: f32, b: f32) -> f32 {
        let x = E::get(v, k);
        if E::WORD_IS_F32 {
            Self::out((mean, rstd), x, w, b)
        } else {
            fma_f32(fma_f32(x, rstd, -mean * rstd), w, b)
        }
    }
    /// In a cluster, and in any group where every thread's part is as long as every other's
    /// ([`Seat::equal_parts`]): the thread's statistic in one pass over its held elements,
    /// each less the thread's first, `k`: `n`, `s1 = Σ (x − k)` and `s2 = Σ (x − k)²`, then
    /// `mean = k + s1 / n` and `m2 = s2 − s1² / n`, and one merge of it: three instructions an
    /// element and, in BF16, one unpacking, where [`Op::local`]'s two passes take three and
    /// two unpackings. On top of the merge's reciprocal ([`MeanVar::merge`]), the BF16 cluster
    /// went from 0.87 to 0.90 x copy at 1024 x 131072 and from 0.79 to 0.83 at 256 x 262144,
    /// f32 unchanged (results/rows/5b88863/experiments).
    /// `k` is one of the elements, so `(k − mean)² ≤ n · var`: the subtraction cancels at most
    /// the bits of `n` (at most 64 elements a thread), never those of the data's offset
    /// `|mean| / σ`, as `E[x²] − E[x]²` would.
    ///
    /// In a warp or a block with equal parts the one merge is of equal parts (two shuffles a
    /// step, no reciprocal: [`MeanVar::merge_equal_lane`]), where two merges of a sum each
    /// ([`Op::row_of`]) take as many shuffles, a second pass over the held elements and, in a
    /// block, a second barrier. In the lab's bench on the H200 (two rounds, both compilers, x
    /// copy) the LayerNorm warp and block cases the catalogue chooses moved by −0.2 to +1.2 %
    /// but rust-cuda's narrow BF16 kernel at 65536 x 512 (−1.9 %): the blocks at 32768 x 1024
    /// f32 0.979–0.986 → 0.986–0.992, at 16384 x 4096 bf16 0.981–0.994 → 0.992–1.004, the warp
    /// at 65536 x 512 f32 0.985–1.000 → 0.990–0.995; the wide block, not chosen there, 0.72–0.74
    /// → 0.87 at 4096 x 32768 f32 (results/rows/827b5c3/experiments). With unequal parts
    /// every merge step divides by its count: there a warp or a block merges twice, as the
    /// same one merge read 2–5 % slower (the warp kernel at 65536 x 512 bf16, rust-cuda's
    /// wide one at 32768 x 1024 bf16).
    #[inline(always)]
    unsafe fn row_of_held<E: Elem, G: Group, const L: usize>(
        seat: Seat,
        held: &mut [Words; L],
        at: Lanes,
        cols: u32,
        eps: f32,
    ) -> (f32, f32) {
        let held = &*held;
        let equal = seat.equal_parts::<L>(at);
        if G::MERGES_AGAIN_CHEAPLY && !equal {
            return Self::row_of_each_held::<E, G, L>(seat, held, at, cols, eps);
        }
        let k = E::get(&held[0], 0);
        if equal {
            // Every thread's part is `L` whole vectors and every merge step pairs two equal
            // parts: no branch a vector, a count known at compile time (32 or 64: the
            // division is a multiplication), and the group's merge of equal parts
            // ([`Group::merge_equal`]).
            let (mut s1, mut s2) = (0.0f32, 0.0f32);
            upto16!(L, j, {
                upto16!(E::PER_VEC as usize, e, {
                    let d = E::get(&held[j], e as u32) - k;
                    s1 += d;
                    s2 = fma_f32(d, d, s2);
                });
            });
            let n = (L as u32 * E::PER_VEC) as f32;
            let shift = s1 / n;
            let part = MeanVar {
                n,
                mean: k + shift,
                m2: (s2 - s1 * shift).max(0.0),
            };
            return Self::row(G::merge_equal(seat, part), cols, eps);
        }
        let (mut count, mut s1, mut s2) = (0u32, 0.0f32, 0.0f32);
        each::<E, L>(held, at, &mut |v| {
            let d = v - k;
            count += 1;
            s1 += d;
            s2 = fma_f32(d, d, s2);
        });
        let part = if count == 0 {
            MeanVar::EMPTY
        } else {
            let n = count as f32;
            let shift = div_full_f32(s1, n);
            MeanVar {
                n,
                mean: k + shift,
                m2: (s2 - s1 * shift).max(0.0),
            }
        };
        Self::row(G::merge(seat, part), cols, eps)
    }
    /// Where the group merges again cheaply (a warp, a block) and the parts are unequal
    /// (else [`Op::row_of_held`]'s one merge), the exact two-pass variance:
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
