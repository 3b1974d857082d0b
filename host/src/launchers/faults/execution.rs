//! The pairs whose fault is in how the SMs execute: a tail wave, an undersized grid,
//! divergent paths, an unfused pass (the memory-bound control), the SFU's sines, and a barrier
//! per sum.

use super::{check_len, fault_of, groups_of, pair, require, whole_blocks};
use crate::error::{Ctx, Result};
use crate::lab::Lab;
use crate::launchers::dims;
use catalog::kernels::Pair;
use catalog::launch::faults::{BLOCK, PER_THREAD, SEGMENT};
use catalog::{Backend, Kernel};
use cust::launch;
use cust::memory::DeviceSlice;
use cust::stream::Stream;

impl Lab {
    /// Units of work the tail pair runs: [`catalog::launch::faults::UNITS_PER_BLOCK`] per block
    /// of the fault's grid (1.15 waves), the same for both twins.
    pub fn tail_units(&self, backend: Backend) -> Result<u32> {
        let (fault, _) = pair(Pair::Tail);
        let blocks = self.fault_config(backend, fault, 0)?.grid.0;
        let per_block = fault_of(fault, Pair::Tail)?.size as u32;
        Ok(blocks * per_block)
    }

    /// Queues the tail pair's `units` units of FMA chains (`x = x · a + b`, starting from
    /// `seed`), the kernel's grid; `out` holds `units · BLOCK` sums.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_fma_units(
        &self,
        backend: Backend,
        k: &Kernel,
        seed: u32,
        (a, b): (f32, f32),
        units: u32,
        out: &DeviceSlice<f32>,
        stream: &Stream,
    ) -> Result<()> {
        fault_of(k, Pair::Tail)?;
        check_len("out", out.len(), units as u64 * BLOCK as u64)?;
        let cfg = self.fault_config(backend, k, 0)?;
        let func = self.function(backend, k.name)?;
        let o = out.as_device_ptr();
        let (grid, block) = dims(&cfg);
        // SAFETY: unit u's threads write out[u·256 + t], u < units (out has units·256 floats,
        // checked); the kernel reads no memory, and leaves its shared memory unused.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(seed, a, b, units, o)) }
            .ctx(|| format!("launching {} [{backend}] {units} units", k.name))
    }

    /// Queues `out = a · input + b` (grid-stride, 16-byte groups) on the undersized pair.
    pub fn launch_fma_grid_stride(
        &self,
        backend: Backend,
        k: &Kernel,
        input: &DeviceSlice<f32>,
        out: &DeviceSlice<f32>,
        (a, b): (f32, f32),
        stream: &Stream,
    ) -> Result<()> {
        fault_of(k, Pair::UndersizedGrid)?;
        let groups = groups_of(input, out)?;
        let cfg = self.fault_config(backend, k, 4 * groups)?;
        let func = self.function(backend, k.name)?;
        let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = dims(&cfg);
        // SAFETY: the grid-stride loop touches groups below `groups`: 4·groups f32 of input and
        // out, both that long and 16-byte aligned (checked); no shared memory.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, o, groups, a, b)) }
            .ctx(|| format!("launching {} [{backend}] {groups} groups", k.name))
    }

    /// Queues the divergence pair: `out[t] = path(seeds[t], steps)`, one thread per seed
    /// (a multiple of [`BLOCK`] of them).
    pub fn launch_two_paths(
        &self,
        backend: Backend,
        k: &Kernel,
        seeds: &DeviceSlice<u32>,
        steps: u32,
        out: &DeviceSlice<u32>,
        stream: &Stream,
    ) -> Result<()> {
        fault_of(k, Pair::Divergence)?;
        let n = seeds.len() as u64;
        whole_blocks("seeds", n)?;
        check_len("out", out.len(), n)?;
        let cfg = self.fault_config(backend, k, n)?;
        let func = self.function(backend, k.name)?;
        let (s, o) = (seeds.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = dims(&cfg);
        // SAFETY: thread t reads seeds[t] and writes out[t], and there are exactly n threads.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(s, steps, o)) }
            .ctx(|| format!("launching {} [{backend}] {n} threads", k.name))
    }

    /// Queues the memory-bound control: `out = a2 · (a1 · input + b1) + b2`, by the fused
    /// kernel (`steps` two `(a, b)`s) or one pass of the two-pass kernel (one `(a, b)`).
    pub fn launch_fma_passes(
        &self,
        backend: Backend,
        k: &Kernel,
        input: &DeviceSlice<f32>,
        out: &DeviceSlice<f32>,
        steps: &[(f32, f32)],
        stream: &Stream,
    ) -> Result<()> {
        let f = fault_of(k, Pair::MemoryBound)?;
        let want = if f.fixed { 2 } else { 1 };
        require(
            steps.len() == want,
            "passes",
            steps.len() as u64,
            "one per pass the kernel does",
        )?;
        let groups = groups_of(input, out)?;
        let cfg = self.fault_config(backend, k, 4 * groups)?;
        let func = self.function(backend, k.name)?;
        let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = dims(&cfg);
        let what = || format!("launching {} [{backend}] {groups} groups", k.name);
        // SAFETY: thread t moves the 16-byte group t < groups of input and out, both 4·groups
        // f32 long and 16-byte aligned (checked); no shared memory.
        match *steps {
            [(a, b)] => unsafe {
                launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, o, groups, a, b))
            },
            [(a1, b1), (a2, b2)] => unsafe {
                launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(
                    i, o, groups, a1, b1, a2, b2
                ))
            },
            _ => unreachable!("the step count is checked above"),
        }
        .ctx(what)
    }

    /// Queues the SFU pair: `out[i] = Σ_k sin(k θ_i)` for every element of `input`.
    pub fn launch_sines(
        &self,
        backend: Backend,
        k: &Kernel,
        input: &DeviceSlice<f32>,
        out: &DeviceSlice<f32>,
        stream: &Stream,
    ) -> Result<()> {
        fault_of(k, Pair::Sfu)?;
        let n = input.len() as u64;
        check_len("out", out.len(), n)?;
        let cfg = self.fault_config(backend, k, n)?;
        let func = self.function(backend, k.name)?;
        let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = dims(&cfg);
        // SAFETY: each thread's elements i < n (four per thread) read input[i] and write
        // out[i], both n long.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, o, n)) }
            .ctx(|| format!("launching {} [{backend}] n={n}", k.name))
    }

    /// Queues the barrier pair: `out[s] = Σ input[32s..32s+32]` (wrapping), `input.len()` a
    /// multiple of `BLOCK · PER_THREAD`, `out` a 32nd of it.
    pub fn launch_segment_sums(
        &self,
        backend: Backend,
        k: &Kernel,
        input: &DeviceSlice<i32>,
        out: &DeviceSlice<i32>,
        stream: &Stream,
    ) -> Result<()> {
        fault_of(k, Pair::Barrier)?;
        let n = input.len() as u64;
        require(
            n > 0 && n.is_multiple_of((BLOCK * PER_THREAD) as u64),
            "input",
            n,
            "a multiple of 1024",
        )?;
        check_len("out", out.len(), n / SEGMENT as u64)?;
        let cfg = self.fault_config(backend, k, n)?;
        let func = self.function(backend, k.name)?;
        let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = dims(&cfg);
        // SAFETY: blocks walk the n / 1024 chunks grid-stride, each reading its 1024 elements
        // and writing its 32 sums, inside input and out (checked); the shared memory is the
        // catalogue's (one word per thread for the fault, none for the fix).
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, n, o)) }
            .ctx(|| format!("launching {} [{backend}] n={n}", k.name))
    }
}
