//! What the control bits ([`crate::bits`]) say about the schedule ptxas made.
//!
//! Fixed-latency instructions (integer and floating-point arithmetic, moves) need no
//! scoreboard: the stall counts of the instructions between a producer and its consumer cover
//! its latency. Variable-latency ones (memory loads, special-register reads, shuffles) release
//! a write barrier, which the consumer waits on; stores and other instructions that read their
//! registers late release a read barrier, which an instruction overwriting those registers
//! waits on. [`Schedule`] follows the barriers through the control-flow graph: which loads
//! each wait is for, and whether every result is waited on before it is used, which is how
//! the decoding is checked (`studies/tests/it/asm_control.rs`, on every kernel of the lab).
//!
//! [`access`] is the register model (what each instruction reads and writes); [`schedule`] the
//! barriers followed through the control-flow graph, and the stall cycles between
//! fixed-latency results and their readers.

mod access;
mod schedule;
#[cfg(test)]
mod tests;

pub use access::{Access, Reg, access};
pub use schedule::{
    Cfg, Dep, Gap, Hazard, Producer, Schedule, Wait, branch_targets, gaps, schedule,
    variable_latency,
};

pub use crate::bits::{Control, LEGEND};

use crate::disasm;

/// The stall cycles a kernel's instructions schedule, added up over its listing (each
/// instruction once, whatever runs how often).
pub fn stall_cycles(f: &disasm::Function) -> u32 {
    f.control.values().map(|c| u32::from(c.stall)).sum()
}
