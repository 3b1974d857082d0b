//! The L2 flush of a cold row: before every launch (warm-up and timed), on the bench stream,
//! then waited for; the output's reset and the start event follow:
//!
//! 1. `cuMemsetD32Async` over a buffer of [`L2_MULTIPLE`] times the L2's size (the device
//!    attribute), as nvbench flushes (it writes one L2's worth): the written lines displace the
//!    input, so the timed launch reads its input from DRAM;
//! 2. `read_stream` over the same buffer, which leaves the L2 holding clean copies of it. After
//!    the memset alone the L2 would be full of dirty lines, and the timed launch, evicting them,
//!    would write up to an L2's worth back to DRAM inside its own timing (on the H200, up to
//!    a quarter more DRAM traffic for a 2^26-element f32 read), none of it the kernel's doing.

use crate::cases::Case;
use crate::cases::stream::ReadStream;
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use catalog::Backend;
use cust::memory::DeviceBuffer;

/// The flush writes this many L2s' worth of bytes. One L2's worth displaces every line only
/// under an exact LRU over evenly hashed sets; twice leaves a margin for the hash and the
/// replacement policy, for one more L2's worth of traffic per launch, outside the timing.
pub const L2_MULTIPLE: u64 = 2;

/// The word the memset writes: not zero, so no zero-fill shortcut can skip the lines. Four
/// equal words XOR to 0, never `read_stream`'s sentinel, so the read-back stores nothing.
const FLUSH_BITS: u32 = 0x5a5a_5a5a;

/// Bytes the flush writes for an L2 of `l2_bytes` (whole 16-byte groups, `read_stream`'s unit).
pub fn flush_bytes(l2_bytes: u64) -> u64 {
    (L2_MULTIPLE * l2_bytes).next_multiple_of(16)
}

/// The flush buffer and its read-back, set up once per run.
pub struct L2Flush<'a> {
    lab: &'a Lab,
    buf: DeviceBuffer<f32>,
    read_back: ReadStream<'a>,
    /// What one flush writes (and then reads), in bytes.
    pub bytes: u64,
}

impl<'a> L2Flush<'a> {
    /// Allocates the buffer for the lab's device; its read-back runs `backend`'s `read_stream`.
    /// Fails when the device reports no L2 size or the buffer does not fit.
    pub fn new(lab: &'a Lab, backend: Backend) -> Result<L2Flush<'a>> {
        if lab.info.l2_bytes == 0 {
            return Err(HostError::Invalid {
                what: "--cache cold",
                detail: "the device reports no L2 size, so there is nothing to size the flush by: measure with --cache hot".into(),
            });
        }
        let bytes = flush_bytes(lab.info.l2_bytes);
        lab.check_fits(bytes)?;
        let buf = DeviceBuffer::<f32>::zeroed((bytes / 4) as usize)
            .ctx(|| format!("allocating the {bytes}-byte L2 flush buffer"))?;
        let read_back = ReadStream::new(lab, backend, buf.index(..))?;
        Ok(L2Flush {
            lab,
            buf,
            read_back,
            bytes,
        })
    }

    /// Queues the flush on the lab's stream: the memset, then the read-back.
    pub fn queue(&self) -> Result<()> {
        // SAFETY: a stream-ordered memset of a live buffer that `self` keeps until the run
        // ends, after the stream is synchronized.
        unsafe {
            self.buf
                .index(..)
                .set_32_async(FLUSH_BITS, &self.lab.stream)
        }
        .ctx(|| "flushing the L2 (cuMemsetD32Async)".into())?;
        self.read_back.launch()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flush_covers_twice_the_l2_in_whole_16_byte_groups() {
        // The H200's 60 MiB L2: 120 MiB.
        assert_eq!(flush_bytes(60 << 20), 120 << 20);
        assert_eq!(flush_bytes(3), 16);
        assert_eq!(flush_bytes(0), 0);
    }
}
