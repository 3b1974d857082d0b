//! The GEMM pair: f32 on the FMA pipes against BF16 on the tensor cores, tile by tile.

use super::{check_aligned, check_len, fault_of, require};
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use crate::launchers::{LaunchConfig, dims};
use catalog::kernels::Pair;
use catalog::launch::faults::{GEMM_K_BF16, GEMM_TILE};
use catalog::{Backend, Kernel, Shape};
use cust::launch;
use cust::memory::{DeviceCopy, DeviceSlice};
use cust::stream::Stream;

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
        let (grid, block) = dims(&cfg);
        // SAFETY: the kernel reads A[0..m·kd) and B[0..n·kd) and writes C[0..m·n), each buffer
        // that long and 16-byte aligned (checked); m, n are multiples of the tile and kd of the
        // stage (checked), so no block reads or writes past them; the shared memory is the
        // catalogue's for this kernel.
        unsafe { launch!(func<<<grid, block, cfg.shared_bytes, stream>>>(pa, pb, pc, m, n, kd)) }
            .ctx(|| format!("launching {} [{backend}] {m}×{n}×{kd}", k.name))
    }
}
