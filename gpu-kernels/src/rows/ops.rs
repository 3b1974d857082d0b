//! What each operation computes of a row: its partial statistic, how two merge, the row's
//! constants and each output element (softmax, RMSNorm, LayerNorm).
//!
//! The operations: softmax in `softmax`, RMSNorm and LayerNorm in `norms`.

use super::*;

mod norms;
mod softmax;

pub use norms::*;
pub use softmax::*;

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
