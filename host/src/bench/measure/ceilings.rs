//! The ceilings: the FP32 FMA peak once (the roofline's compute roof), and at each size the
//! read stream and the driver's copy the reductions are compared with.

use super::Bench;
use crate::bench::report::Row;
use crate::bench::size;
use crate::cases::Case;
use crate::cases::stream::{FmaPeak, ReadStream};
use crate::cases::transpose::Matrix;
use crate::error::Result;
use catalog::{Dtype, Family, Runner};
use cust::memory::DeviceSlice;

/// Outer-loop trips per thread of `fma_peak_f32`: 2048 × 16 steps × 8 chains = 2^18 FMAs per
/// thread, a few ms per launch on an H200 (long enough for events to time well).
pub const FMA_ITERS: u32 = 2048;

impl Bench<'_> {
    /// The compute ceiling: `fma_peak_f32` on each backend (independent FMA chains, no memory
    /// traffic), as GFLOP/s. The roofline's compute roof; the best backend's row counts.
    pub fn compute_ceiling(&mut self) -> Result<()> {
        let (lab, plan) = (self.lab, self.plan);
        if !self.wants_fma_peak() {
            return Ok(());
        }
        for &b in &plan.backends {
            let case = FmaPeak::new(lab, b, FMA_ITERS).and_then(|c| Ok((c.flops()?, c)));
            let (flops, case) = match case {
                Ok(c) => c,
                Err(e) => {
                    let row =
                        Row::new(Family::Ceiling, "fma_peak", b, Dtype::F32, 0, "-".into(), 0);
                    self.record_each(row.failed(e.to_string()));
                    continue;
                }
            };
            let cfg = case.config().expect("a kernel launch has a configuration");
            let threads = cfg.grid.0 as u64 * cfg.block.0 as u64;
            let row = Row::new(
                Family::Ceiling,
                "fma_peak",
                b,
                Dtype::F32,
                threads,
                format!("{}x{}", cfg.grid.0, cfg.block.0),
                0,
            )
            .with_flops(flops)
            .with_note(&format!(
                "{} x {} x {FMA_ITERS} fma.rn.f32 per thread",
                catalog::launch::stream::FMA_CHAINS,
                catalog::launch::stream::FMA_UNROLL
            ));
            self.measure_case(row, &case, || case.verify());
        }
        Ok(())
    }

    /// The read ceiling (per backend: the best counts) and the D2D copy of the first `n` of
    /// `input` (its host copy `host`) into `dst`.
    pub(super) fn ceilings(
        &mut self,
        n: usize,
        input: &DeviceSlice<f32>,
        host: &[f32],
        dst: &DeviceSlice<f32>,
    ) -> Result<()> {
        let (lab, plan) = (self.lab, self.plan);
        let size = size::label(n as u64);
        let input = input.index(..n);
        for &b in &plan.backends {
            let row = Row::new(
                Family::Ceiling,
                "read_stream",
                b,
                Dtype::F32,
                n as u64,
                size.clone(),
                n as u64 * 4,
            );
            let case = match ReadStream::new(lab, b, input) {
                Ok(c) => c,
                Err(e) => {
                    self.record_each(row.failed(e.to_string()));
                    continue;
                }
            };
            // The note says what the ceiling is: a read of every byte, nothing written.
            self.measure_case(row, &case, || {
                Ok(case.verify()?.map(|_| "read only (no store)".to_string()))
            });
        }

        let row = Row::new(
            Family::Ceiling,
            "d2d_copy",
            Runner::Driver,
            Dtype::F32,
            n as u64,
            size,
            n as u64 * 8,
        );
        let copy = Matrix::driver_copy(lab, input, dst.index(..n));
        self.copy_row(row, &copy, &host[..n]);
        Ok(())
    }

    /// A copy row (the driver's or the copy kernel's): `want` is the input's host copy.
    pub(super) fn copy_row(&mut self, row: Row, copy: &Matrix<'_>, want: &[f32]) {
        self.measure_case(row, copy, || Ok(copy.verify(want)?.verdict("copy")));
    }
}
