//! The row-wise family's element types: f32 and BF16, four or eight to a 16-byte vector.

use crate::device::*;

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
    /// Whether each word of a vector is one element's f32 bits, so a word can take an f32
    /// computed from its element without rounding.
    const WORD_IS_F32: bool;
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
    const WORD_IS_F32: bool = true;
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
    const WORD_IS_F32: bool = false;
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
