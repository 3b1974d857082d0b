//! Typed launchers, one per kernel family. Each checks what its kernel assumes (sizes, grid
//! limits, buffer lengths) and returns an error instead of launching something undefined, so
//! the launchers are safe to call.

use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use cust::function::{BlockSize, Function, GridSize};
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use cust::stream::Stream;
use std::ffi::c_void;

/// Threads per reduction block (the kernels' `reduce::BLOCK`).
pub const REDUCE_BLOCK: u32 = 256;
/// Elements each v4 and v5 thread adds privately (`reduce::COARSEN`).
pub const V4_COARSEN: u32 = 8;
/// Transpose tile edge and block height (`transpose::TILE`, `ROWS_PER_PASS`).
pub const TILE: u32 = 32;
pub const ROWS_PER_PASS: u32 = 8;
/// Independent 16-byte loads per v7 thread per loop trip (`reduce::V7_UNROLL`).
pub const V7_UNROLL: u32 = 4;
/// transpose_v4's tile edge and threads per block (`transpose::V4_TILE`, `V4_THREADS`).
pub const V4_TILE: u32 = 64;
pub const V4_THREADS: u32 = 256;
/// Largest grid x dimension the hardware accepts.
pub const MAX_GRID_X: u64 = (1 << 31) - 1;
/// Largest grid y dimension.
pub const MAX_GRID_Y: u64 = 65_535;

/// The compilers whose PTX the lab carries: the two Rust GPU compilers, and nvcc compiling
/// the same algorithms written in CUDA C++ (the reference the Rust versions are held to).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, clap::ValueEnum,
)]
pub enum Backend {
    /// rustc's built-in NVPTX backend (LLVM), nightly-2026-10-01, sm_90.
    Llvm = 0,
    /// rust-cuda's rustc_codegen_nvvm (libnvvm 11.8), nightly-2021-12-04, sm_80 PTX JIT-compiled.
    Nvvm = 1,
    /// nvcc 13 -O3 -arch=sm_90 on `gpu-kernels/cuda/kernels.cu`: the chapter's kernels in
    /// CUDA C++ (not the issue-7 ones, see [`Backend::carries`]).
    Nvcc = 2,
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Llvm, Backend::Nvvm, Backend::Nvcc];
    /// The Rust compilers: what the headline ratios ("best reduction / CUB") are about.
    pub const RUST: [Backend; 2] = [Backend::Llvm, Backend::Nvvm];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Llvm => "llvm",
            Backend::Nvvm => "nvvm",
            Backend::Nvcc => "nvcc",
        }
    }

    /// This compiler's PTX, embedded at build time (a missing one fails the build).
    pub fn ptx(self) -> &'static str {
        match self {
            Backend::Llvm => crate::ptx::LLVM,
            Backend::Nvvm => crate::ptx::NVVM,
            Backend::Nvcc => crate::ptx::NVCC,
        }
    }

    pub fn is_rust(self) -> bool {
        self != Backend::Nvcc
    }

    /// Whether this backend launches `kernel` (a family name such as `reduce_v7`). The Rust
    /// compilers build every kernel, so for them it is always true and a missing entry is an
    /// error where it is launched; the C++ file has the chapter's kernels, not the Rust-only
    /// experiments of issue 7, and which ones is read off its PTX (`asm --check` holds it to
    /// the chapter's list).
    pub fn carries(self, kernel: &str) -> bool {
        static NVCC_ENTRIES: std::sync::LazyLock<Vec<&'static str>> =
            std::sync::LazyLock::new(|| entries(Backend::Nvcc.ptx()));
        self.is_rust()
            || NVCC_ENTRIES.iter().any(|e| {
                // `bump`, or the family with its element type: `reduce_v3_f32`.
                e.strip_prefix(kernel)
                    .is_some_and(|rest| ["", "_f32", "_i32"].contains(&rest))
            })
    }
}

/// The kernel entry points a PTX module declares (`.visible .entry reduce_v3_f32(`).
fn entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.trim_start().strip_prefix(".visible .entry "))
        .map(|rest| rest.split('(').next().unwrap_or(rest).trim())
        .collect()
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The chapter's reduction versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Version {
    V1,
    V2,
    V3,
    V4,
    V5,
    V6,
    /// Issue 7: v6 with four 16-byte non-coherent loads in flight per thread.
    V7,
}

impl Version {
    pub const ALL: [Version; 7] = [
        Version::V1,
        Version::V2,
        Version::V3,
        Version::V4,
        Version::V5,
        Version::V6,
        Version::V7,
    ];

    /// `reduce_v3`.
    pub fn name(self) -> &'static str {
        [
            "reduce_v1",
            "reduce_v2",
            "reduce_v3",
            "reduce_v4",
            "reduce_v5",
            "reduce_v6",
            "reduce_v7",
        ][self as usize]
    }

    /// The PTX entry point for element type `T`: `reduce_v3_f32`.
    pub fn entry<T: Elem>(self) -> String {
        format!("{}_{}", self.name(), T::NAME)
    }

    pub fn from_name(name: &str) -> Option<Version> {
        Version::ALL.into_iter().find(|v| v.name() == name)
    }

    /// Longest chain of dependent additions any output bit went through, for the float
    /// error bound |error| <= depth · 2^-24 · Σ|x| (Higham's bound for recursive summation).
    pub fn addition_depth(self, n: u64, grid_blocks: u64) -> u64 {
        // 8 levels of a 256-value tree (v5: 2 in shared memory, the halves, 5 shuffles).
        let tree = REDUCE_BLOCK.ilog2() as u64;
        let per_thread = match self {
            Version::V4 | Version::V5 => V4_COARSEN as u64,
            Version::V6 => n.div_ceil(grid_blocks.max(1) * REDUCE_BLOCK as u64 * 4) + 2 + 2,
            // One add into the running sum per 16-byte group at most, + 4 levels of the
            // trip's (16-value) tree, + head and tail.
            Version::V7 => n.div_ceil(grid_blocks.max(1) * REDUCE_BLOCK as u64 * 4) + 4 + 2,
            _ => 1,
        };
        // + one atomic per block, applied in some order.
        per_thread + tree + grid_blocks
    }
}

impl Version {
    /// Elements one block covers before the grid is capped: one per thread (v1–v3); v4 and v5
    /// add [`V4_COARSEN`] per thread; v6 one 16-byte group per thread, v7 [`V7_UNROLL`] of them
    /// (these two are then capped at one wave). `Lab::reduce_config` sizes the grid the same
    /// way; `reduce_config_applies_the_grid_limit` (GPU) holds the two together.
    pub fn elements_per_block(self) -> u64 {
        let per_thread = match self {
            Version::V4 | Version::V5 => V4_COARSEN,
            Version::V6 => 4,
            Version::V7 => 4 * V7_UNROLL,
            _ => 1,
        };
        (REDUCE_BLOCK * per_thread) as u64
    }

    /// Refuses an `n` whose grid would pass the x limit, before anything is allocated or
    /// launched. v6 and v7 launch at most one wave, so any `n` fits.
    pub fn check_len(self, n: u64) -> Result<()> {
        if matches!(self, Version::V6 | Version::V7) {
            return Ok(());
        }
        let per_block = self.elements_per_block();
        if n.div_ceil(per_block) > MAX_GRID_X {
            return Err(HostError::TooLarge {
                what: "n",
                value: n,
                limit: MAX_GRID_X * per_block,
                why: "grid x limit × elements per block",
            });
        }
        Ok(())
    }
}

/// The transposes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Variant {
    Naive,
    Tiled,
    Padded,
    /// Issue 7: 64×64 tile, 16-byte global accesses, XOR-swizzled shared memory.
    V4,
}

impl Variant {
    pub const ALL: [Variant; 4] = [Variant::Naive, Variant::Tiled, Variant::Padded, Variant::V4];

    /// `transpose_tiled`.
    pub fn name(self) -> &'static str {
        [
            "transpose_naive",
            "transpose_tiled",
            "transpose_padded",
            "transpose_v4",
        ][self as usize]
    }

    pub fn entry(self) -> String {
        format!("{}_f32", self.name())
    }

    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// Dynamic shared memory per block: none, a 32×32 tile, a 32×33 tile, a 64×64 tile (v4).
    pub fn shared_bytes(self) -> u32 {
        let pitch = match self {
            Variant::Naive => return 0,
            Variant::V4 => return V4_TILE * V4_TILE * 4,
            Variant::Tiled => TILE,
            Variant::Padded => TILE + 1,
        };
        TILE * pitch * 4
    }

    /// Tile edge: the elements each block covers in x and y.
    pub fn tile(self) -> u32 {
        match self {
            Variant::V4 => V4_TILE,
            _ => TILE,
        }
    }

    /// Block shape.
    pub fn block(self) -> (u32, u32) {
        match self {
            Variant::V4 => (V4_THREADS, 1),
            _ => (TILE, ROWS_PER_PASS),
        }
    }

    /// The grid of a `rows × cols` transpose, one block per tile; a shape whose rows pass the
    /// grid's y limit is refused. (Columns cannot pass x: u32::MAX / 32 is far below it.)
    pub fn grid(self, rows: u32, cols: u32) -> Result<(u32, u32)> {
        let tile = self.tile();
        let gy = rows.div_ceil(tile) as u64;
        if gy > MAX_GRID_Y {
            return Err(HostError::TooLarge {
                what: "rows",
                value: rows as u64,
                limit: MAX_GRID_Y * tile as u64,
                why: "grid y limit × rows per tile",
            });
        }
        Ok((cols.div_ceil(tile), gy as u32))
    }
}

/// Refuses a transpose's input or output buffer shorter than `rows × cols` elements.
pub fn check_matrix_lengths(rows: u32, cols: u32, input: usize, output: usize) -> Result<()> {
    let elems = rows as usize * cols as usize;
    for (what, len) in [("input", input), ("output", output)] {
        if len < elems {
            return Err(HostError::Invalid {
                what,
                detail: format!("{len} elements, but {rows}×{cols} = {elems} needed"),
            });
        }
    }
    Ok(())
}

/// Element types the reductions are instantiated for.
pub trait Elem:
    DeviceCopy + Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static
{
    /// Suffix of the PTX entry points: `f32`, `i32`.
    const NAME: &'static str;
    fn to_f64(self) -> f64;
}

impl Elem for f32 {
    const NAME: &'static str = "f32";
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Elem for i32 {
    const NAME: &'static str = "i32";
    fn to_f64(self) -> f64 {
        self as f64
    }
}

/// Grid, block and dynamic shared memory of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LaunchConfig {
    pub grid: (u32, u32),
    pub block: (u32, u32),
    pub shared_bytes: u32,
}

impl Lab {
    /// Looks up a kernel by its PTX name.
    pub fn function(&self, backend: Backend, entry: &str) -> Result<Function<'_>> {
        self.module(backend)
            .get_function(entry)
            .map_err(|_| HostError::KernelNotFound {
                name: entry.to_string(),
                backend: backend.name(),
            })
    }

    /// How `version` is launched for `n` elements. v6's and v7's grid is one wave: as many
    /// blocks as the occupancy API says fit on all SMs at once (never more than the data needs).
    pub fn reduce_config<T: Elem>(
        &self,
        backend: Backend,
        version: Version,
        n: u64,
    ) -> Result<LaunchConfig> {
        version.check_len(n)?;
        // v6, v7: at most one wave, and no more blocks than give every thread one full trip.
        let needed = n.div_ceil(version.elements_per_block()).max(1);
        let (blocks, shared_bytes) = if matches!(version, Version::V6 | Version::V7) {
            let smem = (REDUCE_BLOCK / 32) * std::mem::size_of::<T>() as u32;
            let f = self.function(backend, &version.entry::<T>())?;
            let per_sm = f
                .max_active_blocks_per_multiprocessor(BlockSize::x(REDUCE_BLOCK), smem as usize)
                .ctx(|| format!("occupancy of {}", version.entry::<T>()))?;
            let wave = per_sm as u64 * self.info.sm_count as u64;
            (needed.min(wave), smem)
        } else {
            (needed, REDUCE_BLOCK * std::mem::size_of::<T>() as u32)
        };
        Ok(LaunchConfig {
            grid: (blocks as u32, 1),
            block: (REDUCE_BLOCK, 1),
            shared_bytes,
        })
    }

    /// Queues `*out += Σ input` on `stream` (the kernels accumulate with atomics: the caller
    /// zeroes `out`). An empty input queues nothing.
    pub fn launch_reduce<T: Elem>(
        &self,
        backend: Backend,
        version: Version,
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
        version.check_len(n)?;
        let cfg = self.reduce_config::<T>(backend, version, n)?;
        let f = self.function(backend, &version.entry::<T>())?;
        let (inp, o) = (input.as_device_ptr(), out.as_device_ptr());
        // SAFETY: the kernel reads input[0..n) and adds to out[0]; both are live device
        // allocations of those lengths, and the grid/smem come from reduce_config.
        unsafe { launch(stream, &f, cfg, &[arg(&inp), arg(&n), arg(&o)]) }
            .ctx(|| format!("launching {} [{backend}] n={n}", version.entry::<T>()))
    }

    /// Σ input on the GPU, waited for. Integer sums wrap like `wrapping_add`.
    pub fn reduce<T: Elem>(
        &self,
        backend: Backend,
        version: Version,
        input: &DeviceSlice<T>,
    ) -> Result<T> {
        let out =
            DeviceBuffer::from_slice(&[T::default()]).ctx(|| "allocating the result".into())?;
        self.launch_reduce(backend, version, input, &out, &self.stream)?;
        self.sync()?;
        let mut r = [T::default()];
        out.copy_to(&mut r[..])
            .ctx(|| "copying the result back".into())?;
        Ok(r[0])
    }

    /// How a `rows × cols` transpose is launched.
    pub fn transpose_config(&self, variant: Variant, rows: u32, cols: u32) -> Result<LaunchConfig> {
        let grid = variant.grid(rows, cols)?;
        let mut shared_bytes = variant.shared_bytes();
        if let (Variant::V4, Some(n)) = (variant, self.v4_blocks_per_sm) {
            shared_bytes = shared_bytes.max(shared_for_blocks_per_sm(self.info.shared_per_sm, n)?);
        }
        Ok(LaunchConfig {
            grid,
            block: variant.block(),
            shared_bytes,
        })
    }

    /// Queues `output[c][r] = input[r][c]` for a row-major `rows × cols` input.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_transpose(
        &self,
        backend: Backend,
        variant: Variant,
        input: &DeviceSlice<f32>,
        output: &DeviceSlice<f32>,
        rows: u32,
        cols: u32,
        stream: &Stream,
    ) -> Result<()> {
        check_matrix_lengths(rows, cols, input.len(), output.len())?;
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let cfg = self.transpose_config(variant, rows, cols)?;
        let f = self.function(backend, &variant.entry())?;
        let (i, o) = (input.as_device_ptr(), output.as_device_ptr());
        // SAFETY: the kernel reads input[0..rows·cols) and writes output[0..rows·cols), both
        // checked above; edge tiles are guarded in the kernel.
        unsafe { launch(stream, &f, cfg, &[arg(&i), arg(&o), arg(&rows), arg(&cols)]) }
            .ctx(|| format!("launching {} [{backend}] {rows}×{cols}", variant.entry()))
    }

    /// Queues `data[i] += 1` over the whole buffer (the launch-gap demo kernel).
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
        let cfg = LaunchConfig {
            grid: (n.div_ceil(256).max(1), 1),
            block: (256, 1),
            shared_bytes: 0,
        };
        let d = data.as_device_ptr();
        // SAFETY: bump writes data[0..n), the buffer's length.
        unsafe { launch(stream, f, cfg, &[arg(&d), arg(&n)]) }
            .ctx(|| format!("launching bump [{backend}]"))
    }
}

/// Dynamic shared memory per block that lets at most `n` blocks share an SM with `per_sm` bytes
/// (the `LAB_V4_BLOCKS_PER_SM` knob). The SM keeps 1 KiB per resident block for itself; the
/// result is rounded down to the 128-byte allocation unit. Above 48 KiB a kernel must opt in,
/// which the lab does not, so such an `n` is refused.
pub fn shared_for_blocks_per_sm(per_sm: u32, n: u32) -> Result<u32> {
    let bytes = (per_sm / n.max(1)).saturating_sub(1024) / 128 * 128;
    if bytes > 48 * 1024 {
        return Err(HostError::Invalid {
            what: "LAB_V4_BLOCKS_PER_SM",
            detail: format!(
                "{n} blocks per SM needs {bytes} bytes of shared memory per block, over the 49152 \
                 a launch may ask for without opting in: use a larger count"
            ),
        });
    }
    Ok(bytes)
}

/// Threads per block of the read-ceiling kernel (`stream::BLOCK`).
pub const STREAM_BLOCK: u32 = 256;

/// The read ceiling (`gpu-kernels/src/stream.rs`), for the bench.
impl Lab {
    /// How `read_stream_f32` is launched for `n` elements: one wave (blocks per SM from the
    /// occupancy API × SMs), never more blocks than the 16-byte groups need.
    pub fn read_stream_config(&self, backend: Backend, n: u64) -> Result<LaunchConfig> {
        self.one_wave_stream(backend, "read_stream_f32", n)
    }

    /// The stream kernels' launch: blocks of [`STREAM_BLOCK`], one wave of `entry`, no more
    /// blocks than `n` elements' 16-byte groups need.
    fn one_wave_stream(&self, backend: Backend, entry: &str, n: u64) -> Result<LaunchConfig> {
        let f = self.function(backend, entry)?;
        let per_sm = f
            .max_active_blocks_per_multiprocessor(BlockSize::x(STREAM_BLOCK), 0)
            .ctx(|| format!("occupancy of {entry}"))?;
        let wave = per_sm.max(1) as u64 * self.info.sm_count as u64;
        let needed = (n / 4).div_ceil(STREAM_BLOCK as u64).max(1);
        Ok(LaunchConfig {
            grid: (needed.min(wave) as u32, 1),
            block: (STREAM_BLOCK, 1),
            shared_bytes: 0,
        })
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
        if std::mem::size_of::<T>() != 4 {
            return Err(HostError::Invalid {
                what: "read_stream element",
                detail: format!("{} is not 4 bytes", T::NAME),
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
        let f = self.function(backend, "read_stream_f32")?;
        let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
        // SAFETY: the kernel reads input[0..n) (16-byte aligned, checked) and may write out[0],
        // both live allocations of those lengths; it uses no shared memory.
        unsafe {
            launch(
                stream,
                &f,
                cfg,
                &[arg(&i), arg(&n), arg(&sentinel), arg(&o)],
            )
        }
        .ctx(|| format!("launching read_stream_f32 [{backend}] n={n}"))
    }
}

/// The copy ceiling as a kernel (`gpu-kernels/src/stream.rs`): the transposes' traffic in its
/// easiest order, for the bench and for ncu (which cannot profile the driver's D2D copy).
impl Lab {
    /// How `copy_stream_f32` is launched for `n` elements: one wave, as the read stream.
    pub fn copy_stream_config(&self, backend: Backend, n: u64) -> Result<LaunchConfig> {
        self.one_wave_stream(backend, "copy_stream_f32", n)
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
        let f = self.function(backend, "copy_stream_f32")?;
        // SAFETY: the kernel reads input[0..n) and writes output[0..n), both live and at least
        // that long (checked), 16-byte aligned (checked); it uses no shared memory.
        unsafe { launch(stream, &f, cfg, &[arg(&i), arg(&o), arg(&n)]) }
            .ctx(|| format!("launching copy_stream_f32 [{backend}] n={n}"))
    }
}

/// Threads per block, independent chains per thread and chain steps per loop trip of the FMA
/// peak kernel (`stream::FMA_BLOCK`, `FMA_CHAINS`, `FMA_UNROLL`).
pub const FMA_BLOCK: u32 = 256;
pub const FMA_CHAINS: u32 = 8;
pub const FMA_UNROLL: u32 = 16;
/// Full waves of blocks per FMA peak launch (every block does the same work, so whole waves
/// leave no tail).
pub const FMA_WAVES: u64 = 2;
/// Each step computes `x · FMA_A + FMA_B`: every chain decays towards `FMA_B / (1 − FMA_A)`
/// = 10, so no value overflows or goes subnormal, and every chain stays positive.
const FMA_A: f32 = 0.9999;
const FMA_B: f32 = 0.001;
/// No thread's (positive) chain sum equals this, so the kernel never stores.
const FMA_SENTINEL: f32 = -1.0;

/// The compute ceiling (`gpu-kernels/src/stream.rs`), for the bench's roofline.
impl Lab {
    /// How `fma_peak_f32` is launched: [`FMA_WAVES`] full waves (blocks per SM from the
    /// occupancy API × SMs).
    pub fn fma_peak_config(&self, backend: Backend) -> Result<LaunchConfig> {
        let f = self.function(backend, "fma_peak_f32")?;
        let per_sm = f
            .max_active_blocks_per_multiprocessor(BlockSize::x(FMA_BLOCK), 0)
            .ctx(|| "occupancy of fma_peak_f32".into())?;
        let blocks = per_sm.max(1) as u64 * self.info.sm_count as u64 * FMA_WAVES;
        Ok(LaunchConfig {
            grid: (blocks.min(MAX_GRID_X) as u32, 1),
            block: (FMA_BLOCK, 1),
            shared_bytes: 0,
        })
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
        let f = self.function(backend, "fma_peak_f32")?;
        let o = out.as_device_ptr();
        // SAFETY: the kernel reads no memory and may write only out[0], a live allocation of
        // at least one element; it uses no shared memory.
        unsafe {
            launch(
                stream,
                &f,
                cfg,
                &[
                    arg(&iters),
                    arg(&FMA_A),
                    arg(&FMA_B),
                    arg(&FMA_SENTINEL),
                    arg(&o),
                ],
            )
        }
        .ctx(|| format!("launching fma_peak_f32 [{backend}] iters={iters}"))
    }
}

fn arg<T>(v: &T) -> *mut c_void {
    v as *const T as *mut c_void
}

/// # Safety
/// `args` must match the kernel's parameters in number, order and type, and the launch
/// must keep every access of the kernel inside live allocations.
unsafe fn launch(
    stream: &Stream,
    f: &Function,
    cfg: LaunchConfig,
    args: &[*mut c_void],
) -> cust::error::CudaResult<()> {
    unsafe {
        stream.launch(
            f,
            GridSize::xy(cfg.grid.0, cfg.grid.1),
            BlockSize::xy(cfg.block.0, cfg.block.1),
            cfg.shared_bytes,
            args,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvcc_carries_the_chapter_kernels_read_off_its_ptx() {
        for k in [
            "reduce_v1",
            "reduce_v6",
            "transpose_padded",
            "copy_stream",
            "bump",
        ] {
            assert!(Backend::Nvcc.carries(k), "{k}");
        }
        for k in ["reduce_v7", "transpose_v4", "reduce_v", "transpose"] {
            assert!(!Backend::Nvcc.carries(k), "{k}");
        }
        assert!(Backend::Llvm.carries("reduce_v7") && Backend::Nvvm.carries("transpose_v4"));
        assert_eq!(
            entries(".visible .entry bump(\n\t.param .u64 a\n)\n.visible .entry reduce_v1_f32(\n"),
            ["bump", "reduce_v1_f32"]
        );
    }

    /// The H200's 228 KiB per SM: 6 blocks get 37 KiB each (6 × 38 KiB fill the SM exactly),
    /// 8 get 27.5 KiB; 4 would need 56 KiB, over the 48 KiB a launch gets without opting in.
    #[test]
    fn blocks_per_sm_cap_sizes_shared_memory() {
        let h200 = 233_472;
        assert_eq!(shared_for_blocks_per_sm(h200, 6).unwrap(), 37_888);
        assert_eq!(shared_for_blocks_per_sm(h200, 8).unwrap(), 28_160);
        assert_eq!(shared_for_blocks_per_sm(h200, 5).unwrap(), 45_568);
        for n in [5, 6, 8] {
            let b = shared_for_blocks_per_sm(h200, n).unwrap();
            assert!(n * (b + 1024) <= h200 && (n + 1) * (b + 1024) > h200, "{n}");
        }
        let e = shared_for_blocks_per_sm(h200, 4).unwrap_err().to_string();
        assert!(e.contains("larger count"), "{e}");
    }
}
