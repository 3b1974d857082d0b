//! Typed launchers, one module per kernel family. Each checks what its kernel assumes (sizes,
//! grid limits, buffer lengths) and returns an error instead of launching something undefined,
//! so the launchers are safe to call. Launch shapes, block sizes and shared memory come from the
//! kernel's catalogue entry ([`catalog::Kernel`]); nothing here names a particular version.
//!
//! - [`reduce`]: the reductions (`Σ input` into one result word).
//! - [`transpose`]: the tiled transposes.
//! - [`stream`]: the ceiling kernels (read stream, copy stream, FMA peak) and the launch-gap
//!   demo kernel.
//! - [`roofs`]: the roof kernels (atomics, shared memory, empty blocks, scattered stores).
//! - [`faults`]: the fault catalogue's pairs, one launcher per pair.
//! - [`rows`]: the row-wise family (softmax, RMSNorm, LayerNorm), a warp, a block (or a wide
//!   block) or a cluster per row.

pub mod faults;
pub mod reduce;
pub mod roofs;
pub mod rows;
pub mod stream;
pub mod transpose;

use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use catalog::{Backend, Dtype, Kernel, Shape};
use cust::function::{BlockSize, Function, GridSize};
use cust::memory::DeviceCopy;

pub use reduce::addition_depth;
pub use transpose::check_matrix_lengths;

/// Largest grid x dimension the hardware accepts.
pub const MAX_GRID_X: u64 = (1 << 31) - 1;
/// Largest grid y dimension.
pub const MAX_GRID_Y: u64 = 65_535;
/// Shared memory an sm_80+ SM reserves for each resident block, beside the block's own.
const RESERVED_SHARED_PER_BLOCK: u32 = 1024;

/// The catalogue's kernel named `name`. For the kernels the lab launches by role (the
/// ceilings, the launch-gap demo); `every_role_kernel_is_catalogued` holds them to the table.
pub fn kernel(name: &str) -> &'static Kernel {
    catalog::kernels::find(name)
        .unwrap_or_else(|| panic!("'{name}' is not in the kernel catalogue"))
}

/// The reductions the lab launches itself (every catalogued reduction but the library call),
/// in catalogue order.
pub fn reductions() -> impl Iterator<Item = &'static Kernel> {
    catalog::KERNELS
        .iter()
        .filter(|k| k.family == catalog::Family::Reduce && k.library.is_none())
}

/// The library reduction (CUB's `DeviceReduce::Sum`).
pub fn library_reduction() -> &'static Kernel {
    catalog::KERNELS
        .iter()
        .find(|k| k.family == catalog::Family::Reduce && k.library.is_some())
        .expect("the catalogue has a library reduction")
}

/// The tiled transposes (the transpose family's kernels launched on tiles), in catalogue order.
pub fn transposes() -> impl Iterator<Item = &'static Kernel> {
    catalog::KERNELS.iter().filter(|k| {
        k.family == catalog::Family::Transpose && matches!(k.shape, Shape::Tiles { .. })
    })
}

/// Element types the reductions are instantiated for.
pub trait Elem:
    DeviceCopy
    + cust::memory::bytemuck::Pod
    + Copy
    + Default
    + PartialEq
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// Its element type (whose name is the PTX entry points' suffix).
    const DTYPE: Dtype;
    fn to_f64(self) -> f64;
}

impl Elem for f32 {
    const DTYPE: Dtype = Dtype::F32;
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Elem for i32 {
    const DTYPE: Dtype = Dtype::I32;
    fn to_f64(self) -> f64 {
        self as f64
    }
}

pub use catalog::records::LaunchConfig;

/// A launch configuration's grid and block, as the driver takes them.
pub(crate) fn dims(cfg: &LaunchConfig) -> (GridSize, BlockSize) {
    (
        GridSize::xy(cfg.grid.0, cfg.grid.1),
        BlockSize::xy(cfg.block.0, cfg.block.1),
    )
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

    /// Blocks of `entry` one SM holds (the occupancy API) with `kernel`'s block and
    /// `shared_bytes` of dynamic shared memory.
    pub fn resident_per_sm(
        &self,
        backend: Backend,
        kernel: &Kernel,
        entry: &str,
        shared_bytes: u32,
    ) -> Result<u32> {
        let f = self.function(backend, entry)?;
        let threads = kernel.block.0 * kernel.block.1;
        f.max_active_blocks_per_multiprocessor(BlockSize::x(threads), shared_bytes as usize)
            .ctx(|| format!("occupancy of {entry}"))
    }

    /// Blocks of one full wave of `entry` (blocks per SM from the occupancy API × SMs) with
    /// `kernel`'s block and `shared_bytes` of dynamic shared memory.
    pub(crate) fn wave(
        &self,
        backend: Backend,
        kernel: &Kernel,
        entry: &str,
        shared_bytes: u32,
    ) -> Result<u64> {
        let per_sm = self.resident_per_sm(backend, kernel, entry, shared_bytes)?;
        Ok(per_sm.max(1) as u64 * self.info.sm_count as u64)
    }

    /// Dynamic shared memory that holds `entry` to exactly `resident` blocks per SM: the SM's
    /// shared memory over `resident`, less the 1 KiB it reserves per block, and never less
    /// than the `needed` bytes the kernel uses (the rest goes unused). Refuses an occupancy
    /// that `kernel`'s threads or shared memory cannot meet.
    pub(crate) fn shared_for_resident(
        &self,
        backend: Backend,
        kernel: &Kernel,
        entry: &str,
        needed: u32,
        resident: u32,
    ) -> Result<u32> {
        let bytes = (self.info.shared_per_sm / resident.max(1))
            .saturating_sub(RESERVED_SHARED_PER_BLOCK)
            .max(needed);
        crate::ffi::allow_dynamic_shared(&self.function(backend, entry)?, bytes)?;
        let got = self.resident_per_sm(backend, kernel, entry, bytes)?;
        if got != resident {
            return Err(HostError::Invalid {
                what: "occupancy",
                detail: format!(
                    "{entry} [{backend}] with {bytes} B of shared memory holds {got} blocks per \
                     SM, not the {resident} asked for"
                ),
            });
        }
        Ok(bytes)
    }

    /// A 1-D launch of `kernel` ([`Shape::Blocks`] or [`Shape::OneWave`]) over `n` elements:
    /// `ceil(n / elements_per_block)` blocks (at least one), capped at one wave for
    /// `OneWave`; whole or part waves ([`Shape::Waves`], [`Shape::WavePercent`]) or a fixed
    /// grid ([`Shape::Grid`]) whatever `n`; the shared memory its entry asks for
    /// `elem_bytes`-byte elements.
    pub(crate) fn linear_config(
        &self,
        backend: Backend,
        kernel: &Kernel,
        entry: &str,
        n: u64,
        elem_bytes: u32,
    ) -> Result<LaunchConfig> {
        let shared_bytes = kernel.shared_bytes(elem_bytes);
        self.linear_config_with(backend, kernel, entry, n, shared_bytes)
    }

    /// [`Lab::linear_config`] with `shared_bytes` of dynamic shared memory per block (which
    /// also sets how many blocks make a wave).
    pub(crate) fn linear_config_with(
        &self,
        backend: Backend,
        kernel: &Kernel,
        entry: &str,
        n: u64,
        shared_bytes: u32,
    ) -> Result<LaunchConfig> {
        let blocks = match kernel.shape {
            Shape::Blocks { elements_per_block } => n.div_ceil(elements_per_block).max(1),
            Shape::OneWave { elements_per_block } => n
                .div_ceil(elements_per_block)
                .max(1)
                .min(self.wave(backend, kernel, entry, shared_bytes)?),
            Shape::Waves { waves } => {
                (self.wave(backend, kernel, entry, shared_bytes)? * waves).min(MAX_GRID_X)
            }
            Shape::WavePercent { percent } => (self.wave(backend, kernel, entry, shared_bytes)?
                * percent)
                .div_ceil(100)
                .min(MAX_GRID_X),
            Shape::Grid { blocks } => blocks,
            Shape::Tiles { .. } | Shape::Rows { .. } => {
                return Err(HostError::Invalid {
                    what: "launch shape",
                    detail: format!(
                        "{} is launched on a matrix, not over n elements",
                        kernel.name
                    ),
                });
            }
        };
        if blocks > MAX_GRID_X {
            return Err(HostError::TooLarge {
                what: "n",
                value: n,
                limit: MAX_GRID_X * elements_per_block(kernel),
                why: "grid x limit × elements per block",
            });
        }
        Ok(LaunchConfig {
            grid: (blocks as u32, 1),
            block: kernel.block,
            shared_bytes,
            cluster: 1,
        })
    }
}

/// Elements one block covers before any cap (0 for a shape that is not 1-D over elements).
pub fn elements_per_block(kernel: &Kernel) -> u64 {
    match kernel.shape {
        Shape::Blocks { elements_per_block } | Shape::OneWave { elements_per_block } => {
            elements_per_block
        }
        Shape::Tiles { .. }
        | Shape::Rows { .. }
        | Shape::Waves { .. }
        | Shape::WavePercent { .. }
        | Shape::Grid { .. } => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_kernel_is_catalogued() {
        for name in ["read_stream", "copy_stream", "fma_peak", "bump"] {
            assert_eq!(kernel(name).name, name);
        }
        assert!(library_reduction().library.is_some());
        assert!(reductions().count() >= 2);
        assert!(transposes().all(|k| k.family == catalog::Family::Transpose));
        assert!(!transposes().any(|k| k.name == "copy_stream"));
    }
}
