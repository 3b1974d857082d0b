//! Softmax: its statistic (the max and the sum of exponentials), merged once or twice.

use super::*;
use core::f32::consts::LOG2_E;

/// `e^x` as `2^(x · log2 e)` on the SFU ([`ex2_approx_f32`]).
#[inline(always)]
fn exp(x: f32) -> f32 {
    ex2_approx_f32(x * LOG2_E)
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
