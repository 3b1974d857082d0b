//! The control bits of one sm_90 SASS instruction, decoded from its encoding.
//!
//! Since Volta every instruction is one 128-bit word whose top 23 bits are not the operation
//! but its scheduling: the assembler, not the hardware, decides how long the warp waits after
//! issuing it and which results it must wait for (Jia et al., "Dissecting the NVIDIA Volta GPU
//! Architecture via Microbenchmarking", 2018, section 2.2; the same fields on Turing, Ampere
//! and Hopper). Bit 0 is the least significant bit of the first 64-bit word nvdisasm prints,
//! bit 64 that of the second:
//!
//! | bits    | field         | meaning |
//! |---------|---------------|---------|
//! | 105–108 | stall         | cycles the warp scheduler waits before issuing the warp's next instruction (1–15; 0 only in the padding after the last `EXIT`) |
//! | 109     | yield         | *clear*: the scheduler may switch to another warp after this one (the bit is inverted: 1 means no yield) |
//! | 110–112 | write barrier | scoreboard SB0–SB5 that this instruction's result will release when it arrives (7: none) |
//! | 113–115 | read barrier  | scoreboard released once the instruction has read its source registers (7: none) |
//! | 116–121 | wait mask     | scoreboards to wait for before issuing (bit *k*: SB*k*) |
//! | 122–125 | reuse         | keep source operand slot *k* in the operand reuse cache (nvdisasm prints these as `.reuse`) |
//! | 126–127 | —             | zero |
//!

use serde::Serialize;

/// One instruction's control bits (see the module documentation for the layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Control {
    /// Cycles before the warp's next instruction may issue.
    pub stall: u8,
    /// The scheduler may switch warps after this instruction (bit 109 clear).
    pub yields: bool,
    /// Scoreboard (0–5) the result releases.
    pub write: Option<u8>,
    /// Scoreboard (0–5) released once the source registers have been read.
    pub read: Option<u8>,
    /// Scoreboards waited for before issue, bit *k* for SB*k*.
    pub wait: u8,
    /// Operand slots kept in the reuse cache, bit *k* for slot *k*.
    pub reuse: u8,
    /// Bits 126–127, zero on every instruction seen.
    pub spare: u8,
}

/// Where the 23 control bits start in the 128-bit instruction.
pub(crate) const CONTROL_SHIFT: u32 = 105;

impl Control {
    /// From the two 64-bit words of an encoding, as nvdisasm `-hex` prints them (bits 0–63,
    /// then 64–127).
    pub fn decode(lo: u64, hi: u64) -> Control {
        let word = (u128::from(hi) << 64) | u128::from(lo);
        let field =
            |shift: u32, bits: u32| ((word >> (CONTROL_SHIFT + shift)) & ((1 << bits) - 1)) as u8;
        let barrier = |b: u8| (b != 7).then_some(b);
        Control {
            stall: field(0, 4),
            yields: field(4, 1) == 0,
            write: barrier(field(5, 3)),
            read: barrier(field(8, 3)),
            wait: field(11, 6),
            reuse: field(17, 4),
            spare: field(21, 2),
        }
    }

    /// The scoreboards waited on, lowest first.
    pub fn waits(&self) -> impl Iterator<Item = u8> + '_ {
        (0..6).filter(|b| self.wait >> b & 1 == 1)
    }

    /// `B--2--- R- W0 Y S04 r0--`: wait mask (the waited scoreboards' numbers), read barrier,
    /// write barrier, yield, stall cycles, reused operand slots.
    pub fn columns(&self) -> String {
        let wait = bit_chars(self.wait, 6, b'0');
        let sb = |b: Option<u8>| b.map_or('-', |b| char::from(b'0' + b));
        let reuse = bit_chars(self.reuse, 4, b'a');
        format!(
            "B{wait} R{} W{} {} S{:02} {reuse}",
            sb(self.read),
            sb(self.write),
            if self.yields { 'Y' } else { '-' },
            self.stall
        )
    }
}

/// `n` characters for the low `n` bits of `mask`: `first + k` where bit `k` is set, `-` where
/// it is clear (`--2---` for scoreboard 2, `a-c-` for reuse slots 0 and 2).
fn bit_chars(mask: u8, n: u8, first: u8) -> String {
    (0..n)
        .map(|k| {
            if mask >> k & 1 == 1 {
                char::from(first + k)
            } else {
                '-'
            }
        })
        .collect()
}

/// The header lines of a listing with control columns.
pub const LEGEND: &str = "\
// control bits after each address: B wait mask (scoreboards SB0-SB5 waited on), R read barrier
// and W write barrier (the scoreboard each releases), Y may yield, S stall cycles, reused operand
// slots a-d (docs/asm-walkthrough.md, \"Control bits\")";
