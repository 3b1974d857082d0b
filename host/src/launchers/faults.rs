//! The fault catalogue (`gpu-kernels/src/faults.rs`): one launcher per pair, which launches
//! either kernel of the pair (the catalogue's [`Fault`] record says which it is) after
//! checking what both assume: buffer lengths, divisibility, alignment, and that the kernel is
//! of the pair. Shapes, blocks and shared memory come from the kernels' catalogue entries.

use super::{Elem, LaunchConfig};
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use catalog::kernels::{Fault, Pair};
use catalog::launch::faults::{
    ASYNC_THREADS, BLOCK, GEMM_K_BF16, GEMM_TILE, L2_EXCEEDS_LOG2, L2_FITS_LOG2, LINE_WORDS,
    LIVE_FAULT, LIVE_FIXED, PER_THREAD, SEGMENT, SPILL_PASSES, SPILL_WORDS, TILE,
};
use catalog::{Backend, Family, Kernel, Shape};
use cust::launch;
use cust::memory::{DeviceCopy, DeviceSlice};
use cust::stream::Stream;

/// The pairs whose blocks the launch holds to one per SM (by the shared memory it reserves):
/// the async copies, one block's ring per SM, and the tail, whose blocks each fill an SM's FMA
/// pipe alone, so that a wave is one block per SM and a block's time the same wherever it runs.
const ONE_BLOCK_PER_SM: [Pair; 2] = [Pair::AsyncStages, Pair::Tail];

/// The fault catalogue's kernels, in catalogue order (each fault, then its fixed twin).
pub fn faults() -> impl Iterator<Item = &'static Kernel> {
    catalog::KERNELS
        .iter()
        .filter(|k| k.family == Family::Faults)
}

/// The pair's two kernels: the one with the fault, then the fixed twin.
pub fn pair(p: Pair) -> (&'static Kernel, &'static Kernel) {
    let of = |fixed: bool| {
        faults()
            .find(|k| k.fault.is_some_and(|f| f.pair == p && f.fixed == fixed))
            .expect("the catalogue has both kernels of every pair")
    };
    (of(false), of(true))
}

/// `kernel`'s fault record, when it is a kernel of pair `p`.
pub fn fault_of(kernel: &Kernel, p: Pair) -> Result<Fault> {
    match kernel.fault {
        Some(f) if f.pair == p => Ok(f),
        _ => Err(HostError::Invalid {
            what: "fault kernel",
            detail: format!("{} is not a kernel of the {p:?} pair", kernel.name),
        }),
    }
}

/// Refuses a buffer whose length is not `want` (`what` names it in the error).
fn check_len(what: &'static str, len: usize, want: u64) -> Result<()> {
    if len as u64 == want {
        return Ok(());
    }
    Err(HostError::Invalid {
        what,
        detail: format!("{len} elements, but the launch needs {want}"),
    })
}

/// Refuses a buffer not 16-byte aligned.
fn check_aligned<T: DeviceCopy>(what: &'static str, buf: &DeviceSlice<T>) -> Result<()> {
    if buf.as_device_ptr().as_raw().is_multiple_of(16) {
        return Ok(());
    }
    Err(HostError::Invalid {
        what,
        detail: "must be 16-byte aligned".into(),
    })
}

/// Refuses `what` = `value` unless `ok`, saying what it must be.
fn require(ok: bool, what: &'static str, value: u64, must: &str) -> Result<()> {
    if ok {
        return Ok(());
    }
    Err(HostError::Invalid {
        what,
        detail: format!("{value}: {must}"),
    })
}

/// The GEMMs' input element: f32 for the fault, BF16 bits for the fixed twin.
pub trait GemmInput: DeviceCopy {
    const BF16: bool;
}

impl GemmInput for f32 {
    const BF16: bool = false;
}

impl GemmInput for u16 {
    const BF16: bool = true;
}

impl Lab {
    /// How fault kernel `k` is launched over `n` of its elements (its doc's unit: elements,
    /// threads, words), from the catalogue's shape; the [`ONE_BLOCK_PER_SM`] pairs held to one
    /// block per SM (the same for both twins, so the one change is what differs). Not the GEMMs
    /// ([`Lab::gemm_config`]).
    pub fn fault_config(&self, backend: Backend, k: &Kernel, n: u64) -> Result<LaunchConfig> {
        if k.fault.is_some_and(|f| ONE_BLOCK_PER_SM.contains(&f.pair)) {
            // The shared memory that holds the blocks to one per SM, and the waves at it.
            let needed = k.shared_bytes(4);
            let shared_bytes = self.shared_for_resident(backend, k, k.name, needed, 1)?;
            return self.linear_config_with(backend, k, k.name, n, shared_bytes);
        }
        self.linear_config(backend, k, k.name, n, 4)
    }

    /// A GEMM's launch for an `m × n` C: one block per `GEMM_TILE²` tile.
    pub fn gemm_config(&self, k: &Kernel, m: u32, n: u32) -> Result<LaunchConfig> {
        let tile = match k.shape {
            Shape::Tiles { tile, .. } => tile,
            _ => {
                return Err(HostError::Invalid {
                    what: "GEMM",
                    detail: format!("{} is not launched on tiles", k.name),
                });
            }
        };
        Ok(LaunchConfig {
            grid: (n / tile, m / tile),
            block: k.block,
            shared_bytes: k.shared_bytes(4),
            cluster: 1,
        })
    }

    /// Queues `C = A · Bᵀ` (A `m × kd`, B `n × kd`, both k-contiguous; C `m × n`) on either
    /// GEMM: `T` = f32 for the fault, u16 (BF16 bits) for the fix.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_gemm<T: GemmInput>(
        &self,
        backend: Backend,
        k: &Kernel,
        a: &DeviceSlice<T>,
        b: &DeviceSlice<T>,
        c: &DeviceSlice<f32>,
        (m, n, kd): (u32, u32, u32),
        stream: &Stream,
    ) -> Result<()> {
        let f = fault_of(k, Pair::TensorCores)?;
        require(
            f.fixed == T::BF16,
            "GEMM input",
            0,
            "f32 for the fault, BF16 for the fix",
        )?;
        for (what, v) in [("m", m), ("n", n)] {
            require(
                v > 0 && v % GEMM_TILE == 0,
                what,
                v as u64,
                "a multiple of 128",
            )?;
        }
        require(
            kd > 0 && kd % GEMM_K_BF16 == 0,
            "k",
            kd as u64,
            "a multiple of 32",
        )?;
        check_len("A", a.len(), m as u64 * kd as u64)?;
        check_len("B", b.len(), n as u64 * kd as u64)?;
        check_len("C", c.len(), m as u64 * n as u64)?;
        for (what, p) in [
            ("A", a.as_device_ptr().as_raw()),
            ("B", b.as_device_ptr().as_raw()),
        ] {
            require(p.is_multiple_of(16), what, p, "must be 16-byte aligned")?;
        }
        check_aligned("C", c)?;
        let cfg = self.gemm_config(k, m, n)?;
        let func = self.function(backend, k.name)?;
        let (pa, pb, pc) = (a.as_device_ptr(), b.as_device_ptr(), c.as_device_ptr());
        let (grid, block) = super::dims(&cfg);
        // SAFETY: the kernel reads A[0..m·kd) and B[0..n·kd) and writes C[0..m·n), each buffer
        // that long and 16-byte aligned (checked); m, n are multiples of the tile and kd of the
        // stage (checked), so no block reads or writes past them; the shared memory is the
        // catalogue's for this kernel.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(pa, pb, pc, m, n, kd)) }
            .ctx(|| format!("launching {} [{backend}] {m}×{n}×{kd}", k.name))
    }

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
        let (grid, block) = super::dims(&cfg);
        // SAFETY: each thread's elements i < n (four per thread) write out[i] (out has n
        // elements) and read input at an index masked below len; no shared memory.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, mask, o, n)) }
            .ctx(|| format!("launching {} [{backend}] n={n}", k.name))
    }

    /// Queues one warp-wide chase of `steps` steps per thread through `table` (lines of
    /// [`LINE_WORDS`] words, a power of two of them, 16-byte aligned), `out.len()` threads (a
    /// multiple of [`BLOCK`]), each storing its fold to `out`.
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
        require(
            n > 0 && n.is_multiple_of(BLOCK as u64),
            "threads",
            n,
            "a multiple of 256",
        )?;
        let cfg = self.fault_config(backend, k, n)?;
        let func = self.function(backend, k.name)?;
        let (t, o, mask) = (
            table.as_device_ptr(),
            out.as_device_ptr(),
            (lines - 1) as u32,
        );
        let (grid, block) = super::dims(&cfg);
        // SAFETY: every load is of a 16-byte group `line · 64 + lane (+ 32)` with line masked
        // below the table's lines (checked: the table holds them all, 16-byte aligned); thread
        // t writes out[t], and there are exactly out.len() threads (a multiple of the block,
        // checked).
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(t, mask, steps, o)) }
            .ctx(|| format!("launching {} [{backend}] {n} threads", k.name))
    }

    /// Queues the tile reads of the bank-conflict pair: one 32 × 32 tile of `input` per warp
    /// (`input.len() = 32 · out.len()`, `out.len()` a multiple of [`BLOCK`]), read `reps`
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
        require(
            n > 0 && n.is_multiple_of(BLOCK as u64),
            "threads",
            n,
            "a multiple of 256",
        )?;
        check_len("input", input.len(), n * TILE as u64)?;
        let cfg = self.fault_config(backend, k, input.len() as u64)?;
        let func = self.function(backend, k.name)?;
        let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = super::dims(&cfg);
        // SAFETY: one block per 8192 words of input (the catalogue's shape), so each warp's tile
        // lies inside it and each thread's word of `out` exists; the shared memory is the
        // catalogue's: eight tiles of this kernel's pitch.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, reps, o)) }
            .ctx(|| format!("launching {} [{backend}] {n} threads", k.name))
    }

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
        let (grid, block) = super::dims(&cfg);
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
        let (grid, block) = super::dims(&cfg);
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
        require(
            n > 0 && n.is_multiple_of(BLOCK as u64),
            "seeds",
            n,
            "a multiple of 256",
        )?;
        check_len("out", out.len(), n)?;
        let cfg = self.fault_config(backend, k, n)?;
        let func = self.function(backend, k.name)?;
        let (s, o) = (seeds.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = super::dims(&cfg);
        // SAFETY: thread t reads seeds[t] and writes out[t], and there are exactly n threads.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(s, steps, o)) }
            .ctx(|| format!("launching {} [{backend}] {n} threads", k.name))
    }

    /// Queues the spill pair over `input` (64 words per thread, `out.len()` threads, a
    /// multiple of [`BLOCK`]): the fault with its run-time `shift` (`Some`), the fix without.
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
        require(
            n > 0 && n.is_multiple_of(BLOCK as u64),
            "threads",
            n,
            "a multiple of 256",
        )?;
        check_len(
            "input",
            input.len(),
            n * (SPILL_PASSES * SPILL_WORDS) as u64,
        )?;
        let cfg = self.fault_config(backend, k, input.len() as u64)?;
        let func = self.function(backend, k.name)?;
        let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
        let (grid, block) = super::dims(&cfg);
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
        let (grid, block) = super::dims(&cfg);
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
        let (grid, block) = super::dims(&cfg);
        // SAFETY: block b copies tiles b, b + grid, … below `tiles` (all inside input, 16-byte
        // aligned, checked) into its ring, which the dynamic shared memory holds (the launch
        // has at least the catalogue's stages × 16 KiB); thread t of the grid writes out[t].
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, tiles, o)) }
            .ctx(|| format!("launching {} [{backend}] {tiles} tiles", k.name))
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
        let (grid, block) = super::dims(&cfg);
        // SAFETY: each thread's elements i < n (four per thread) read input[i] and write
        // out[i], both n long.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, o, n)) }
            .ctx(|| format!("launching {} [{backend}] n={n}", k.name))
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
        let (grid, block) = super::dims(&cfg);
        // SAFETY: load r reads group r & (set − 1), inside input (checked); thread t writes
        // out[t], and out has one word per thread of the grid (checked).
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, reads, o)) }
            .ctx(|| format!("launching {} [{backend}] {reads} reads", k.name))
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
        let (grid, block) = super::dims(&cfg);
        // SAFETY: blocks walk the n / 1024 chunks grid-stride, each reading its 1024 elements
        // and writing its 32 sums, inside input and out (checked); the shared memory is the
        // catalogue's (one word per thread for the fault, none for the fix).
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(i, n, o)) }
            .ctx(|| format!("launching {} [{backend}] n={n}", k.name))
    }
}

/// The 16-byte groups of an elementwise launch: `input` and `out` the same length, a
/// multiple of 4, 16-byte aligned.
fn groups_of<T: Elem>(input: &DeviceSlice<T>, out: &DeviceSlice<T>) -> Result<u64> {
    let n = input.len() as u64;
    require(
        n > 0 && n.is_multiple_of(4),
        "elements",
        n,
        "a positive multiple of 4",
    )?;
    check_len("out", out.len(), n)?;
    check_aligned("input", input)?;
    check_aligned("out", out)?;
    Ok(n / 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_has_its_two_kernels() {
        for p in Pair::ALL {
            let (fault, fixed) = pair(p);
            assert!(
                !fault.fault.unwrap().fixed && fixed.fault.unwrap().fixed,
                "{p:?}"
            );
            assert_eq!(fault_of(fault, p).unwrap().twin, fixed.name);
            assert!(fault_of(fault, Pair::ALL[(p as usize + 1) % 13]).is_err());
        }
        assert_eq!(faults().count(), 2 * Pair::ALL.len());
    }
}
