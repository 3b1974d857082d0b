//! The ceilings: the read stream (every byte read once) and the FMA peak (no memory traffic).
//! Each may store only when a sentinel is matched, which the inputs never allow: the check is
//! that nothing was stored.

use super::verify::Verdict;
use super::{Case, fill};
use crate::error::{Ctx, Result};
use crate::lab::Lab;
use crate::launchers::LaunchConfig;
use catalog::Backend;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};

/// Passed to `read_stream_f32`: the inputs are floats in [0, 1), whose sign bits are all
/// clear, so no XOR of them has the sign bit set and the kernel never stores.
const STREAM_SENTINEL: u32 = 0xffff_ffff;

/// One read of every byte of `input`, ready to launch.
pub struct ReadStream<'a> {
    lab: &'a Lab,
    backend: Backend,
    config: LaunchConfig,
    input: DeviceSlice<f32>,
    /// Zero before each launch; the kernel stores here only on the sentinel.
    flag: DeviceBuffer<u32>,
}

impl<'a> ReadStream<'a> {
    /// A read of `input` (floats in [0, 1), 16-byte aligned) on `backend`.
    pub fn new(lab: &'a Lab, backend: Backend, input: DeviceSlice<f32>) -> Result<Self> {
        Ok(ReadStream {
            lab,
            backend,
            config: lab.read_stream_config(backend, input.len() as u64)?,
            input,
            flag: DeviceBuffer::zeroed(1).ctx(|| "allocating a flag".into())?,
        })
    }

    /// `no store`, or what the kernel stored. The stream must be idle.
    pub fn verify(&self) -> Result<Verdict> {
        let mut got = [1u32];
        self.flag
            .copy_to(&mut got[..])
            .ctx(|| "reading the flag".into())?;
        Ok(match got[0] {
            0 => Ok("no store".into()),
            x => Err(format!(
                "the kernel stored {x:#x}: a thread's fold matched the sentinel"
            )),
        })
    }
}

impl Case for ReadStream<'_> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        fill(self.lab, &*self.flag, 0, "the flag")
    }

    fn launch(&self) -> Result<()> {
        let lab = self.lab;
        lab.launch_read_stream(
            self.backend,
            &self.input,
            STREAM_SENTINEL,
            &self.flag,
            &lab.stream,
        )
    }
}

/// One `fma_peak_f32` launch of `iters` trips per thread, ready to launch.
pub struct FmaPeak<'a> {
    lab: &'a Lab,
    backend: Backend,
    iters: u32,
    config: LaunchConfig,
    /// Zero before each launch; the kernel stores here only on its sentinel.
    out: DeviceBuffer<f32>,
}

impl<'a> FmaPeak<'a> {
    pub fn new(lab: &'a Lab, backend: Backend, iters: u32) -> Result<Self> {
        Ok(FmaPeak {
            lab,
            backend,
            iters,
            config: lab.fma_peak_config(backend)?,
            out: DeviceBuffer::zeroed(1).ctx(|| "allocating the FMA output".into())?,
        })
    }

    /// Floating-point operations of one launch.
    pub fn flops(&self) -> Result<u64> {
        self.lab.fma_peak_flops(self.backend, self.iters)
    }

    /// `no store`, or what the kernel stored. The stream must be idle.
    pub fn verify(&self) -> Result<Verdict> {
        let mut got = [1f32];
        self.out
            .copy_to(&mut got[..])
            .ctx(|| "reading the FMA output".into())?;
        Ok(if got[0] == 0.0 {
            Ok("no store".into())
        } else {
            Err(format!(
                "the kernel stored {}: a chain sum matched the sentinel",
                got[0]
            ))
        })
    }
}

impl Case for FmaPeak<'_> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        fill(self.lab, &*self.out, 0, "the FMA output")
    }

    fn launch(&self) -> Result<()> {
        let lab = self.lab;
        lab.launch_fma_peak(self.backend, self.iters, &self.out, &lab.stream)
    }
}
