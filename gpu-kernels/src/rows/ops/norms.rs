//! RMSNorm and LayerNorm: their statistics (a sum of squares; a count, mean and squared
//! deviations) and outputs with their weights.

use super::*;

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
