//! What one launch of a catalogue kernel does, counted from what the catalogue knows (its
//! launch shape, block, shared memory and the size): the [`Counts`] the model
//! (`crate::model`) divides by the measured roofs.
//!
//! Each catalogue entry names its counts function ([`CountsFn`], the `counts` field of
//! [`Kernel`]); the per-block figures it passes are the kernel's own (its tree, its tile), so a
//! new kernel states them where it is defined. The functions here turn them into per-launch
//! [`Counts`]: bytes read and written, launches, blocks, barriers, same-address atomics,
//! shared-memory wavefronts (bank-conflict passes included) beside the coalesced global ones,
//! the L2 sectors of scattered stores, bytes in the 32×32 tile order, the block tree, FLOPs.

use super::{Kernel, Shape, Tree};
use crate::{Backend, Dtype};
use serde::{Deserialize, Serialize};

/// sm_90 limits on the blocks one SM holds: threads, blocks, shared memory (bytes).
const MAX_THREADS_PER_SM: u32 = 2048;
const MAX_BLOCKS_PER_SM: u32 = 32;
const SHARED_PER_SM: u32 = 228 * 1024;

/// How big one launch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Size {
    /// `n` elements (reductions, the streams).
    Vector(u64),
    /// A `rows × cols` matrix (the transposes; `copy_stream` copies its elements).
    Matrix { rows: u32, cols: u32 },
}

impl Size {
    /// Elements: `n`, or rows × cols.
    pub fn elements(self) -> u64 {
        match self {
            Size::Vector(n) => n,
            Size::Matrix { rows, cols } => rows as u64 * cols as u64,
        }
    }

    /// `2^28` for a power of two, else the number; `4096x4096`: the bench's size labels.
    pub fn label(self) -> String {
        match self {
            Size::Vector(n) if n.is_power_of_two() => format!("2^{}", n.trailing_zeros()),
            Size::Vector(n) => n.to_string(),
            Size::Matrix { rows, cols } => format!("{rows}x{cols}"),
        }
    }

    /// Reads a bench size label back: `RxC` is a matrix, anything else is `n` elements.
    pub fn of_label(label: &str, n: u64) -> Option<Size> {
        match label.split_once('x') {
            Some((r, c)) => Some(Size::Matrix {
                rows: r.trim().parse().ok()?,
                cols: c.trim().parse().ok()?,
            }),
            None => Some(Size::Vector(n)),
        }
    }
}

/// One launch to predict: the element type, the size, and the GPU's SM count (it sets how
/// many blocks a one-wave grid has).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub dtype: Dtype,
    pub size: Size,
    pub sm_count: u32,
    /// The compiler whose code runs: its own tree roofs where the run measured them. None (a
    /// library, or not known): the fastest compiler's.
    pub backend: Option<Backend>,
}

/// What one timed sample of a kernel does, whole-launch totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Kernel launches per sample (CUB's `DeviceReduce::Sum`: two kernels).
    pub launches: u64,
    /// Blocks launched (0: unknown, a library's own choice).
    pub blocks: u64,
    /// Block-wide barriers executed, all blocks.
    pub barriers: u64,
    /// Bytes that must come from memory, and bytes written to it.
    pub read_bytes: u64,
    pub written_bytes: u64,
    /// `red.global.add`s to one address (one per block for the reductions).
    pub same_address_reds: u64,
    /// Shared-memory wavefronts (passes through the banks): a request with a k-way bank
    /// conflict counts k.
    pub shared_wavefronts: u64,
    /// Wavefronts of coalesced global loads and stores through the same L1 data pipe: one
    /// per 128 bytes (a warp's 4-byte access to consecutive words).
    #[serde(default)]
    pub global_wavefronts: u64,
    /// 32-byte sectors the L2 serves for a launch whose stores scatter one 4-byte lane per
    /// sector: those stores' sectors and its loads' (ncu, E17: each costs the L2 alike).
    pub scattered_sectors: u64,
    /// Bytes read and written in the 32×32 transposes' raster tile order (a 128-byte row
    /// segment of 32 rows per tile, each side), bound by that order's DRAM rate.
    #[serde(default)]
    pub tile_order_bytes: u64,
    /// The block tree each of the launch's blocks runs (a reduction's), bound by that tree's
    /// own roof: blocks × its time per block alone.
    #[serde(default)]
    pub tree: Option<Tree>,
    /// Blocks one SM holds of the launch ([`resident_blocks_per_sm`]).
    #[serde(default)]
    pub resident_per_sm: u32,
    /// Whether each block first loads one element per thread into shared memory and waits at
    /// a barrier before its tree (v1–v3, v3_shfl): its load holds its slot (the model's slots roof).
    #[serde(default)]
    pub loads_before_tree: bool,
    /// Floating-point operations (an add one, an FMA two).
    pub flops: u64,
    /// FP32 lane instructions (an add or an FMA each): what the FP32 pipes issue.
    pub fp32_ops: u64,
}

impl Counts {
    /// Bytes the launch touches in memory: read + written.
    pub fn footprint(&self) -> u64 {
        self.read_bytes + self.written_bytes
    }
}

/// A catalogue entry's counts: the kernel (its shape and block) and the launch.
pub type CountsFn = fn(&Kernel, &Problem) -> Counts;

/// Blocks resident on one SM: sm_90's thread, block and shared-memory limits for the kernel's
/// block. Registers are not counted (every kernel here fits 2048 threads in the register
/// file but v7, whose one-wave grid then has fewer blocks and `red`s: a few hundred either
/// way, under 1 % of its time).
pub fn resident_blocks_per_sm(k: &Kernel, dtype: Dtype) -> u32 {
    let threads = (k.block.0 * k.block.1).max(1);
    let by_shared = match k.shared_bytes(dtype.size() as u32) {
        0 => MAX_BLOCKS_PER_SM,
        s => SHARED_PER_SM / s,
    };
    (MAX_THREADS_PER_SM / threads)
        .min(MAX_BLOCKS_PER_SM)
        .min(by_shared)
        .max(1)
}

/// Blocks in the kernel's grid for `p` (the host's launchers build the same grid; a one-wave
/// grid here uses [`resident_blocks_per_sm`] where the host asks the occupancy API).
pub fn blocks(k: &Kernel, p: &Problem) -> u64 {
    let n = p.size.elements();
    let wave = resident_blocks_per_sm(k, p.dtype) as u64 * p.sm_count as u64;
    match k.shape {
        Shape::Blocks { elements_per_block } => n.div_ceil(elements_per_block.max(1)).max(1),
        Shape::OneWave { elements_per_block } => {
            n.div_ceil(elements_per_block.max(1)).max(1).min(wave)
        }
        Shape::Tiles { tile, .. } => match p.size {
            Size::Matrix { rows, cols } => rows.div_ceil(tile) as u64 * cols.div_ceil(tile) as u64,
            Size::Vector(n) => n.div_ceil(tile as u64 * tile as u64),
        },
        Shape::Waves { waves } => waves * wave,
        Shape::WavePercent { percent } => (wave * percent).div_ceil(100),
        Shape::Grid { blocks } => blocks,
        Shape::Rows { op, schedule } => match p.size {
            Size::Matrix { rows, cols } => schedule
                .launch(op, rows as u64, cols as u64, p.dtype)
                .map_or(0, |l| l.blocks as u64),
            Size::Vector(_) => 0,
        },
    }
}

/// A row-wise kernel (`crate::rows`): the matrix read once and written once, in its launch's
/// blocks, so the model's copy is the D2D copy of the same matrix the bench measures beside it.
/// The weights the norms read (one row's worth, from DRAM once, then the L2: at most 1 MiB,
/// under 0.1 % of any bench shape's bytes) are left out. Nothing else bounds it in the model:
/// its statistic's shuffles and one barrier (a cluster's two) per row are far below the copy.
pub fn rows_moved_once(k: &Kernel, p: &Problem) -> Counts {
    let (Shape::Rows { .. }, Size::Matrix { rows, cols }) = (k.shape, p.size) else {
        return Counts::default();
    };
    let matrix = rows as u64 * cols as u64 * p.dtype.size();
    Counts {
        launches: 1,
        blocks: blocks(k, p),
        read_bytes: matrix,
        written_bytes: matrix,
        global_wavefronts: wavefronts_of(2 * matrix),
        resident_per_sm: resident_blocks_per_sm(k, p.dtype),
        ..Counts::default()
    }
}

/// A reduction whose every block reads its share once, reduces it through `WAVEFRONTS`
/// shared-memory wavefronts and `BARRIERS` barriers, and adds the result to one word with one
/// `red` (the chapter's section 6: v1–v7).
pub fn one_red_per_block<const WAVEFRONTS: u64, const BARRIERS: u64>(
    k: &Kernel,
    p: &Problem,
) -> Counts {
    let b = blocks(k, p);
    let n = p.size.elements();
    let threads = (k.block.0 * k.block.1) as u64;
    let one_per_thread =
        matches!(k.shape, Shape::Blocks { elements_per_block } if elements_per_block == threads);
    Counts {
        launches: 1,
        blocks: b,
        barriers: b * BARRIERS,
        read_bytes: n * p.dtype.size(),
        same_address_reds: b,
        shared_wavefronts: b * WAVEFRONTS,
        global_wavefronts: wavefronts_of(n * p.dtype.size()),
        tree: k.tree,
        resident_per_sm: resident_blocks_per_sm(k, p.dtype),
        loads_before_tree: k.tree.is_some() && one_per_thread,
        flops: f32_adds(p.dtype, n),
        fp32_ops: f32_adds(p.dtype, n),
        ..Counts::default()
    }
}

/// A library reduction of `LAUNCHES` kernels whose grids it chooses (CUB: tiles, then one
/// block to finish): the input read once.
pub fn library_reduction<const LAUNCHES: u64>(_: &Kernel, p: &Problem) -> Counts {
    let n = p.size.elements();
    Counts {
        launches: LAUNCHES,
        read_bytes: n * p.dtype.size(),
        flops: f32_adds(p.dtype, n),
        fp32_ops: f32_adds(p.dtype, n),
        ..Counts::default()
    }
}

/// The `n − 1` additions of an f32 sum (an i32 sum does no floating point).
fn f32_adds(dtype: Dtype, n: u64) -> u64 {
    match dtype {
        Dtype::F32 => n.saturating_sub(1),
        Dtype::I32 | Dtype::U32 | Dtype::Bf16 => 0,
    }
}

/// Every element read once, nothing written (the read ceiling).
pub fn read_once(k: &Kernel, p: &Problem) -> Counts {
    let bytes = p.size.elements() * p.dtype.size();
    Counts {
        launches: 1,
        blocks: blocks(k, p),
        read_bytes: bytes,
        global_wavefronts: wavefronts_of(bytes),
        ..Counts::default()
    }
}

/// L1 data-pipe wavefronts of `bytes` moved by coalesced warp-wide accesses: one per 128.
fn wavefronts_of(bytes: u64) -> u64 {
    bytes.div_ceil(128)
}

/// A transpose or a copy: every element read once and written once, through tiles of the
/// kernel's shape, each tile passing `WAVEFRONTS` shared-memory wavefronts (bank conflicts
/// included) with `BARRIERS` barriers. A kernel whose stores scatter states the L2 sectors of
/// one tile as `SCATTERED` (its coalesced loads' sectors included); its stores are not
/// wavefronts of the L1's data pipe. A kernel launched on the chapter's 32×32 tiles in raster
/// order moves its bytes in that order.
pub fn moved_once<const WAVEFRONTS: u64, const SCATTERED: u64, const BARRIERS: u64>(
    k: &Kernel,
    p: &Problem,
) -> Counts {
    let b = blocks(k, p);
    let bytes = p.size.elements() * p.dtype.size();
    let coalesced = if SCATTERED > 0 { bytes } else { 2 * bytes };
    let raster_32 = matches!(
        k.shape,
        Shape::Tiles {
            tile: crate::launch::transpose::TILE,
            down_columns: false
        }
    );
    Counts {
        launches: 1,
        blocks: b,
        barriers: b * BARRIERS,
        read_bytes: bytes,
        written_bytes: bytes,
        shared_wavefronts: b * WAVEFRONTS,
        global_wavefronts: wavefronts_of(coalesced),
        scattered_sectors: b * SCATTERED,
        tile_order_bytes: if raster_32 { 2 * bytes } else { 0 },
        ..Counts::default()
    }
}
