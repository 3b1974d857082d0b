//! The pairs whose fault is in how data moves: uncoalesced reads (the stride), too few loads in
//! flight (the live registers that cap occupancy), shared-memory bank conflicts, spills to
//! local memory, a single-stage async copy, and a working set past the L2.

use super::{check_aligned, check_len, fault_of, require, whole_blocks};
use crate::error::{Ctx, Result};
use crate::lab::Lab;
use crate::launchers::dims;
use catalog::kernels::Pair;
use catalog::launch::faults::{
    ASYNC_THREADS, L2_EXCEEDS_LOG2, L2_FITS_LOG2, LINE_WORDS, LIVE_FAULT, LIVE_FIXED, SPILL_PASSES,
    SPILL_WORDS, TILE,
};
use catalog::{Backend, Kernel};
use cust::launch;
use cust::memory::DeviceSlice;
use cust::stream::Stream;

impl Lab {
    /// Queues `out[i] = input[(i · stride) & (len − 1)]` for every `i < out.len()`, the
    /// kernel's stride (32 or 1); `input.len()` a power of two, at least `out.len()`.
    pub fn launch_strided_copy(
        &self,
        backend: Backend,
        k: &Kernel,
        input: &DeviceSlice<f32>,
        out: &DeviceSlice<f32>,
        stream: &Stream,
    ) -> Result<()> {
        fault_of(k, Pair::Coalescing)?;
        let (len, n) = (input.len() as u64, out.len() as u64);
        require(len.is_power_of_two(), "input length", len, "a power of two")?;
        require(len >= n, "input length", len, "at least the output's")?;
        let cfg = self.fault_config(backend, k, n)?;
        let func = self.function(backend, k.name)?;
        let (i, o, mask) = (input.as_device_ptr(), out.as_device_ptr(), len - 1);
        let (grid, block) = dims(&cfg);
        // SAFETY: each thread's elements i < n (four per thread) write out[i] (out has n
        // elements) and read input at an index masked below len; no shared memory.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, mask, o, n)) }
            .ctx(|| format!("launching {} [{backend}] n={n}", k.name))
    }

    /// Queues one warp-wide chase of `steps` steps per thread through `table` (lines of
    /// [`LINE_WORDS`] words, a power of two of them, 16-byte aligned), `out.len()` threads (a
    /// multiple of [`BLOCK`](catalog::launch::faults::BLOCK)), each storing its fold to `out`.
    pub fn launch_chase_live(
        &self,
        backend: Backend,
        k: &Kernel,
        table: &DeviceSlice<u32>,
        steps: u32,
        out: &DeviceSlice<u32>,
        stream: &Stream,
    ) -> Result<()> {
        let f = fault_of(k, Pair::Occupancy)?;
        let live = if f.fixed { LIVE_FIXED } else { LIVE_FAULT };
        require(
            steps.is_multiple_of(live),
            "steps",
            steps as u64,
            "a multiple of the live values",
        )?;
        let lines = table.len() as u64 / LINE_WORDS as u64;
        check_len("table", table.len(), lines * LINE_WORDS as u64)?;
        require(
            lines.is_power_of_two(),
            "table lines",
            lines,
            "a power of two",
        )?;
        require(
            lines <= 1 << 26,
            "table lines",
            lines,
            "at most 2^26 (u32 group indices)",
        )?;
        check_aligned("table", table)?;
        let n = out.len() as u64;
        whole_blocks("threads", n)?;
        let cfg = self.fault_config(backend, k, n)?;
        let func = self.function(backend, k.name)?;
        let (t, o, mask) = (
            table.as_device_ptr(),
            out.as_device_ptr(),
            (lines - 1) as u32,
        );
        let (grid, block) = dims(&cfg);
        // SAFETY: every load is of a 16-byte group `line · 64 + lane (+ 32)` with line masked
        // below the table's lines (checked: the table holds them all, 16-byte aligned); thread
        // t writes out[t], and there are exactly out.len() threads (a multiple of the block,
        // checked).
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(t, mask, steps, o)) }
            .ctx(|| format!("launching {} [{backend}] {n} threads", k.name))
    }

    /// Queues the tile reads of the bank-conflict pair: one 32 × 32 tile of `input` per warp
    /// (`input.len() = 32 · out.len()`, `out.len()` a multiple of [`BLOCK`](catalog::launch::faults::BLOCK)), read `reps`
    /// times by columns; `out[t]` gets thread t's fold.
    pub fn launch_column_reads(
        &self,
        backend: Backend,
        k: &Kernel,
        input: &DeviceSlice<u32>,
        reps: u32,
        out: &DeviceSlice<u32>,
        stream: &Stream,
    ) -> Result<()> {
        fault_of(k, Pair::BankConflicts)?;
        let n = out.len() as u64;
        whole_blocks("threads", n)?;
        check_len("input", input.len(), n * TILE as u64)?;
        let cfg = self.fault_config(backend, k, input.len() as u64)?;
        let func = self.function(backend, k.name)?;
        let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = dims(&cfg);
        // SAFETY: one block per 8192 words of input (the catalogue's shape), so each warp's tile
        // lies inside it and each thread's word of `out` exists; the shared memory is the
        // catalogue's: eight tiles of this kernel's pitch.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, reps, o)) }
            .ctx(|| format!("launching {} [{backend}] {n} threads", k.name))
    }

    /// Queues the spill pair over `input` (64 words per thread, `out.len()` threads, a
    /// multiple of [`BLOCK`](catalog::launch::faults::BLOCK)): the fault with its run-time `shift` (`Some`), the fix without.
    pub fn launch_words_array(
        &self,
        backend: Backend,
        k: &Kernel,
        input: &DeviceSlice<u32>,
        shift: Option<u32>,
        out: &DeviceSlice<u32>,
        stream: &Stream,
    ) -> Result<()> {
        let f = fault_of(k, Pair::Spills)?;
        require(
            f.fixed == shift.is_none(),
            "shift",
            0,
            "the fault takes one, the fix none",
        )?;
        let n = out.len() as u64;
        whole_blocks("threads", n)?;
        check_len(
            "input",
            input.len(),
            n * (SPILL_PASSES * SPILL_WORDS) as u64,
        )?;
        let cfg = self.fault_config(backend, k, input.len() as u64)?;
        let func = self.function(backend, k.name)?;
        let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = dims(&cfg);
        let what = || format!("launching {} [{backend}] {n} threads", k.name);
        // SAFETY: thread t reads input[e · n + t] for e < 64 (input has 64·n words) and writes
        // out[t]; the grid has exactly n threads (the catalogue's shape, n a multiple of the
        // block).
        match shift {
            Some(s) => unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, s, o)) },
            None => unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, o)) },
        }
        .ctx(what)
    }

    /// Queues the async pair's sum of `input`'s 16 KiB tiles (`input.len()` a multiple of
    /// 4096 words); `out` holds one word per thread of the grid.
    pub fn launch_staged_sum(
        &self,
        backend: Backend,
        k: &Kernel,
        input: &DeviceSlice<u32>,
        out: &DeviceSlice<u32>,
        stream: &Stream,
    ) -> Result<()> {
        fault_of(k, Pair::AsyncStages)?;
        let words = 4 * ASYNC_THREADS as u64;
        let len = input.len() as u64;
        require(
            len > 0 && len.is_multiple_of(words),
            "input",
            len,
            "a multiple of 4096 words",
        )?;
        require(
            len / words <= u32::MAX as u64,
            "tiles",
            len / words,
            "at most 2^32 − 1",
        )?;
        check_aligned("input", input)?;
        let cfg = self.fault_config(backend, k, len)?;
        check_len("out", out.len(), cfg.grid.0 as u64 * ASYNC_THREADS as u64)?;
        let func = self.function(backend, k.name)?;
        let (i, o, tiles) = (
            input.as_device_ptr(),
            out.as_device_ptr(),
            (len / words) as u32,
        );
        let (grid, block) = dims(&cfg);
        // SAFETY: block b copies tiles b, b + grid, … below `tiles` (all inside input, 16-byte
        // aligned, checked) into its ring, which the dynamic shared memory holds (the launch
        // has at least the catalogue's stages × 16 KiB); thread t of the grid writes out[t].
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, tiles, o)) }
            .ctx(|| format!("launching {} [{backend}] {tiles} tiles", k.name))
    }

    /// How many words of `out` the L2 pair writes: one per thread of its one-wave grid.
    pub fn reread_threads(&self, backend: Backend, k: &Kernel) -> Result<u64> {
        let cfg = self.fault_config(backend, k, 0)?;
        Ok(cfg.grid.0 as u64 * cfg.block.0 as u64)
    }

    /// Queues the L2 pair's `reads` 16-byte loads over its working set of `input` (at least
    /// the larger twin's 256 MiB, 16-byte aligned); `out` holds one word per thread.
    pub fn launch_reread(
        &self,
        backend: Backend,
        k: &Kernel,
        input: &DeviceSlice<u32>,
        reads: u64,
        out: &DeviceSlice<u32>,
        stream: &Stream,
    ) -> Result<()> {
        let f = fault_of(k, Pair::L2Resident)?;
        let set = 1u64
            << if f.fixed {
                L2_EXCEEDS_LOG2
            } else {
                L2_FITS_LOG2
            };
        let len = input.len() as u64;
        require(
            len >= 4 * set,
            "input",
            len,
            "at least 4 words per group of the working set",
        )?;
        check_aligned("input", input)?;
        check_len("out", out.len(), self.reread_threads(backend, k)?)?;
        let cfg = self.fault_config(backend, k, 0)?;
        let func = self.function(backend, k.name)?;
        let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = dims(&cfg);
        // SAFETY: load r reads group r & (set − 1), inside input (checked); thread t writes
        // out[t], and out has one word per thread of the grid (checked).
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, reads, o)) }
            .ctx(|| format!("launching {} [{backend}] {reads} reads", k.name))
    }
}
