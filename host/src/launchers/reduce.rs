//! The reductions: `*out += Σ input`, each block adding its partial sum with one atomic.

use super::{Elem, LaunchConfig, MAX_GRID_X};
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use catalog::kernels::Chain;
use catalog::{Backend, Kernel, Shape};
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};
use cust::stream::Stream;

/// Longest chain of dependent additions any output bit of `kernel` went through over `n`
/// elements in `grid_blocks` blocks, for the float error bound
/// |error| <= depth · 2^-24 · Σ|x| (Higham's bound for recursive summation): the thread's own
/// chain ([`Chain`]), the block's tree, and one atomic per block applied in some order.
pub fn addition_depth(kernel: &Kernel, n: u64, grid_blocks: u64) -> u64 {
    let threads = (kernel.block.0 * kernel.block.1).max(1) as u64;
    let tree = threads.ilog2() as u64;
    let per_thread = match kernel.chain {
        Chain::PerThread(k) => k,
        Chain::GridStride { per_trip, extra } => {
            n.div_ceil(grid_blocks.max(1) * threads * per_trip) + extra
        }
        Chain::None | Chain::Library => 1,
    };
    per_thread + tree + grid_blocks
}

/// Refuses an `n` whose grid would pass the x limit, before anything is allocated or launched.
/// A kernel launched as one wave fits any `n`.
pub fn check_len(kernel: &Kernel, n: u64) -> Result<()> {
    if let Shape::Blocks { elements_per_block } = kernel.shape
        && n.div_ceil(elements_per_block.max(1)) > MAX_GRID_X
    {
        return Err(HostError::TooLarge {
            what: "n",
            value: n,
            limit: MAX_GRID_X * elements_per_block,
            why: "grid x limit × elements per block",
        });
    }
    Ok(())
}

impl Lab {
    /// How the reduction `kernel` is launched for `n` elements of `T`: one block per
    /// `elements_per_block`, or at most one wave (as many blocks as the occupancy API says fit
    /// on all SMs at once, never more than the data needs), as its catalogue entry says.
    pub fn reduce_config<T: Elem>(
        &self,
        backend: Backend,
        kernel: &Kernel,
        n: u64,
    ) -> Result<LaunchConfig> {
        check_len(kernel, n)?;
        let entry = kernel.entry(T::DTYPE);
        self.linear_config(backend, kernel, &entry, n, size_of::<T>() as u32)
    }

    /// Queues `*out += Σ input` on `stream` (the kernels accumulate with atomics: the caller
    /// zeroes `out`). An empty input queues nothing.
    pub fn launch_reduce<T: Elem>(
        &self,
        backend: Backend,
        kernel: &Kernel,
        input: &DeviceSlice<T>,
        out: &DeviceSlice<T>,
        stream: &Stream,
    ) -> Result<()> {
        let n = input.len() as u64;
        if n == 0 {
            return Ok(());
        }
        if out.is_empty() {
            return Err(HostError::Invalid {
                what: "out",
                detail: "reduction output has length 0".into(),
            });
        }
        let cfg = self.reduce_config::<T>(backend, kernel, n)?;
        let entry = kernel.entry(T::DTYPE);
        let f = self.function(backend, &entry)?;
        let (inp, o) = (input.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = super::dims(&cfg);
        // SAFETY: the kernel reads input[0..n) and adds to out[0]; both are live device
        // allocations of those lengths, and the grid/smem come from reduce_config.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(inp, n, o)) }
            .ctx(|| format!("launching {entry} [{backend}] n={n}"))
    }

    /// Σ input on the GPU, waited for. Integer sums wrap like `wrapping_add`.
    pub fn reduce<T: Elem>(
        &self,
        backend: Backend,
        kernel: &Kernel,
        input: &DeviceSlice<T>,
    ) -> Result<T> {
        let out =
            DeviceBuffer::from_slice(&[T::default()]).ctx(|| "allocating the result".into())?;
        self.launch_reduce(backend, kernel, input, &out, &self.stream)?;
        self.sync()?;
        let mut r = [T::default()];
        out.copy_to(&mut r[..])
            .ctx(|| "copying the result back".into())?;
        Ok(r[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The depth follows the catalogue's chain: one value per thread plus the 256-thread
    /// tree (8 levels) and one atomic per block; a grid-stride loop adds its trips.
    #[test]
    fn depth_follows_the_chain() {
        for k in super::super::reductions() {
            let threads = k.block.0 as u64;
            let d = addition_depth(k, threads * 1000, 10);
            assert!(d > 8 + 10, "{}: {d}", k.name);
            match k.chain {
                Chain::PerThread(c) => assert_eq!(d, c + 8 + 10, "{}", k.name),
                Chain::GridStride { per_trip, extra } => {
                    assert_eq!(d, (1000u64).div_ceil(10 * per_trip) + extra + 8 + 10)
                }
                _ => {}
            }
        }
    }

    #[test]
    fn a_grid_past_the_x_limit_is_refused_unless_the_kernel_runs_one_wave() {
        for k in super::super::reductions() {
            let r = check_len(k, u64::MAX / 2);
            match k.shape {
                Shape::OneWave { .. } => assert!(r.is_ok(), "{}", k.name),
                _ => assert!(r.unwrap_err().to_string().contains("grid x limit")),
            }
        }
    }
}
