//! The ceiling kernels (`gpu-kernels/src/stream.rs`: the read stream, the copy stream, the FMA
//! peak) and the launch-gap demo kernel (`bump`). Their catalogue entries are looked up by
//! name: each is the one kernel of its role.

use super::{Elem, LaunchConfig, kernel};
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use catalog::launch::stream::{FMA_CHAINS, FMA_UNROLL};
use catalog::{Backend, Dtype, Kernel};
use cust::function::Function;
use cust::launch;
use cust::memory::DeviceSlice;
use cust::stream::Stream;

/// The read ceiling: every byte read once, nothing written.
pub fn read_stream() -> &'static Kernel {
    kernel("read_stream")
}

/// The copy ceiling as a kernel: the transposes' traffic in its easiest order.
pub fn copy_stream() -> &'static Kernel {
    kernel("copy_stream")
}

/// The FP32 compute ceiling.
pub fn fma_peak() -> &'static Kernel {
    kernel("fma_peak")
}

/// The launch-gap demo: `data[i] += 1`.
pub fn bump() -> &'static Kernel {
    kernel("bump")
}

/// Each FMA step computes `x · FMA_A + FMA_B`: every chain decays towards
/// `FMA_B / (1 − FMA_A)` = 10, so no value overflows or goes subnormal, and every chain stays
/// positive.
const FMA_A: f32 = 0.9999;
const FMA_B: f32 = 0.001;
/// No thread's (positive) chain sum equals this, so the kernel never stores.
const FMA_SENTINEL: f32 = -1.0;

impl Lab {
    /// How `read_stream_f32` is launched for `n` elements: the catalogue's shape (one 16-byte
    /// group per thread).
    pub fn read_stream_config(&self, backend: Backend, n: u64) -> Result<LaunchConfig> {
        let k = read_stream();
        self.linear_config(backend, k, &k.entry(Dtype::F32), n, 4)
    }

    /// Queues one read of every byte of `input` (any 4-byte element type). Nothing is written
    /// to `out` unless some thread's XOR of its words equals `sentinel`.
    pub fn launch_read_stream<T: Elem>(
        &self,
        backend: Backend,
        input: &DeviceSlice<T>,
        sentinel: u32,
        out: &DeviceSlice<u32>,
        stream: &Stream,
    ) -> Result<()> {
        let n = input.len() as u64;
        if size_of::<T>() != 4 {
            return Err(HostError::Invalid {
                what: "read_stream element",
                detail: format!("{} is not 4 bytes", T::DTYPE),
            });
        }
        if !input.as_device_ptr().as_raw().is_multiple_of(16) || out.is_empty() {
            return Err(HostError::Invalid {
                what: "read_stream buffers",
                detail: "input must be 16-byte aligned and out non-empty".into(),
            });
        }
        if n == 0 {
            return Ok(());
        }
        let cfg = self.read_stream_config(backend, n)?;
        let entry = read_stream().entry(Dtype::F32);
        let f = self.function(backend, &entry)?;
        let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = super::dims(&cfg);
        // SAFETY: the kernel reads input[0..n) (16-byte aligned, checked) and may write out[0],
        // both live allocations of those lengths; it uses no shared memory.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(i, n, sentinel, o)) }
            .ctx(|| format!("launching {entry} [{backend}] n={n}"))
    }

    /// How `copy_stream_f32` is launched for `n` elements: the catalogue's shape, as the read
    /// stream.
    pub fn copy_stream_config(&self, backend: Backend, n: u64) -> Result<LaunchConfig> {
        let k = copy_stream();
        self.linear_config(backend, k, &k.entry(Dtype::F32), n, 4)
    }

    /// Queues `output[i] = input[i]` for every element of `input`.
    pub fn launch_copy_stream(
        &self,
        backend: Backend,
        input: &DeviceSlice<f32>,
        output: &DeviceSlice<f32>,
        stream: &Stream,
    ) -> Result<()> {
        let n = input.len() as u64;
        if output.len() < input.len() {
            return Err(HostError::Invalid {
                what: "copy_stream output",
                detail: format!("{} elements, but the input has {n}", output.len()),
            });
        }
        let (i, o) = (input.as_device_ptr(), output.as_device_ptr());
        if !(i.as_raw() | o.as_raw()).is_multiple_of(16) {
            return Err(HostError::Invalid {
                what: "copy_stream buffers",
                detail: "input and output must be 16-byte aligned".into(),
            });
        }
        if n == 0 {
            return Ok(());
        }
        let cfg = self.copy_stream_config(backend, n)?;
        let entry = copy_stream().entry(Dtype::F32);
        let f = self.function(backend, &entry)?;
        let (grid, block) = super::dims(&cfg);
        // SAFETY: the kernel reads input[0..n) and writes output[0..n), both live and at least
        // that long (checked), 16-byte aligned (checked); it uses no shared memory.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(i, o, n)) }
            .ctx(|| format!("launching {entry} [{backend}] n={n}"))
    }

    /// How `fma_peak_f32` is launched: the catalogue's full waves of blocks.
    pub fn fma_peak_config(&self, backend: Backend) -> Result<LaunchConfig> {
        let k = fma_peak();
        self.linear_config(backend, k, &k.entry(Dtype::F32), 0, 4)
    }

    /// Floating-point operations one launch with `iters` trips does: 2 per FMA (a multiply
    /// and an add), `FMA_CHAINS · FMA_UNROLL` FMAs per trip and thread.
    pub fn fma_peak_flops(&self, backend: Backend, iters: u32) -> Result<u64> {
        let cfg = self.fma_peak_config(backend)?;
        let threads = cfg.grid.0 as u64 * cfg.block.0 as u64;
        Ok(threads * iters as u64 * (FMA_CHAINS * FMA_UNROLL) as u64 * 2)
    }

    /// Queues one `fma_peak_f32` launch of `iters` trips per thread. Nothing is written to
    /// `out` (the sentinel is never matched); it only has to exist.
    pub fn launch_fma_peak(
        &self,
        backend: Backend,
        iters: u32,
        out: &DeviceSlice<f32>,
        stream: &Stream,
    ) -> Result<()> {
        if out.is_empty() {
            return Err(HostError::Invalid {
                what: "fma_peak buffers",
                detail: "out must be non-empty".into(),
            });
        }
        let cfg = self.fma_peak_config(backend)?;
        let entry = fma_peak().entry(Dtype::F32);
        let f = self.function(backend, &entry)?;
        let o = out.as_device_ptr();
        let (grid, block) = super::dims(&cfg);
        let (a, b, sentinel) = (FMA_A, FMA_B, FMA_SENTINEL);
        // SAFETY: the kernel reads no memory and may write only out[0], a live allocation of
        // at least one element; it uses no shared memory.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(iters, a, b, sentinel, o)) }
            .ctx(|| format!("launching {entry} [{backend}] iters={iters}"))
    }

    /// How `bump` is launched over `n` elements.
    pub fn bump_config(&self, backend: Backend, n: u64) -> Result<LaunchConfig> {
        let k = bump();
        self.linear_config(backend, k, k.name, n, 4)
    }

    /// Queues `data[i] += 1` over the whole buffer (the launch-gap demo kernel); `f` is the
    /// backend's `bump`, looked up once by the caller (its launches are what is timed).
    pub fn launch_bump(
        &self,
        backend: Backend,
        f: &Function,
        data: &DeviceSlice<f32>,
        stream: &Stream,
    ) -> Result<()> {
        let n = u32::try_from(data.len()).map_err(|_| HostError::TooLarge {
            what: "bump length",
            value: data.len() as u64,
            limit: u32::MAX as u64,
            why: "the kernel's u32 index",
        })?;
        let cfg = self.bump_config(backend, n as u64)?;
        let d = data.as_device_ptr();
        let (grid, block) = super::dims(&cfg);
        // SAFETY: bump writes data[0..n), the buffer's length.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(d, n)) }
            .ctx(|| format!("launching bump [{backend}]"))
    }
}
