//! One case per kernel family: the inputs a launch reads, how its output is reset before each
//! launch, the launch, the CPU reference and the check of the output. `lab bench` (warm-up,
//! timed launches, verify) and `lab run` (warm-up, one launch in the NVTX range `profile`,
//! verify) drive the same cases, so both check a kernel the same way.
//!
//! - [`reduce`]: the reductions and the library's (CUB), into the run's result word.
//! - [`transpose`]: the transposes, and the copies of the same bytes (kernel and driver).
//! - [`stream`]: the ceilings (read stream, FMA peak), which must store nothing.
//! - [`roofs`]: the roofs (atomics, shared memory, empty blocks, scattered stores), each
//!   checked exactly.
//! - [`bump`]: the launch-gap demo kernel.
//! - [`faults`]: the fault catalogue's pairs, each kernel checked against its CPU reference.
//! - [`rows`]: the row-wise family (softmax, RMSNorm, LayerNorm) against its f64 reference,
//!   and the driver's copy of the same matrix.
//! - [`verify`]: what counts as a right answer; [`cub`]: CUB's `DeviceReduce::Sum`.

pub mod bump;
pub mod cub;
pub mod faults;
pub mod reduce;
pub mod roofs;
pub mod rows;
pub mod stream;
pub mod transpose;
pub mod verify;

pub use verify::Verdict;

use crate::error::{Ctx, Result};
use crate::lab::Lab;
use crate::launchers::LaunchConfig;
use cust::error::CudaResult;
use cust::memory::DeviceSlice;
use cust::stream::Stream;

/// A launch with its buffers in place: what both commands drive.
pub trait Case {
    /// Grid, block and shared memory (None where the library or the driver chooses).
    fn config(&self) -> Option<LaunchConfig>;
    /// Queues the output's reset on the lab's stream: before every launch, never timed.
    fn reset(&self) -> Result<()>;
    /// Queues one launch on the lab's stream.
    fn launch(&self) -> Result<()>;
}

/// Written over outputs before each launch: a NaN, never a transposed or copied input.
pub const POISON_BITS: u32 = 0xffff_ffff;

/// Buffers of 4-byte words, which a reset fills with one bit pattern.
trait Words {
    /// Queues `bits` into every word on `stream`.
    ///
    /// # Safety
    /// The buffer must stay allocated until the stream has run the fill.
    unsafe fn fill_async(&self, bits: u32, stream: &Stream) -> CudaResult<()>;
}

/// The reductions' element types (f32, i32): 4-byte words.
impl<T: crate::launchers::Elem> Words for DeviceSlice<T> {
    unsafe fn fill_async(&self, bits: u32, stream: &Stream) -> CudaResult<()> {
        // SAFETY: the caller's contract.
        unsafe { self.index(..).set_32_async(bits, stream) }
    }
}

impl Words for DeviceSlice<u32> {
    unsafe fn fill_async(&self, bits: u32, stream: &Stream) -> CudaResult<()> {
        // SAFETY: the caller's contract.
        unsafe { self.index(..).set_32_async(bits, stream) }
    }
}

/// Indices (`u64`): two words each, both set to `bits`.
impl Words for DeviceSlice<u64> {
    unsafe fn fill_async(&self, bits: u32, stream: &Stream) -> CudaResult<()> {
        // SAFETY: the caller's contract.
        unsafe { self.index(..).set_32_async(bits, stream) }
    }
}

/// Queues `bits` into every 4-byte word of `buf` on the lab's stream.
fn fill(lab: &Lab, buf: &impl Words, bits: u32, what: &str) -> Result<()> {
    // SAFETY: a stream-ordered memset of a live buffer, which the case keeps until the stream
    // is synchronized.
    unsafe { buf.fill_async(bits, &lab.stream) }.ctx(|| format!("resetting {what}"))
}
