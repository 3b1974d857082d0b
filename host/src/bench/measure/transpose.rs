//! The transposes at each edge, after the copies of the same bytes they are compared with
//! (the driver's, and the copy kernel of each compiler: what ncu can see of a copy).

use super::Bench;
use crate::bench::report::{Row, target};
use crate::bench::size;
use crate::cases::transpose::{self, Matrix};
use crate::error::{Ctx, Result};
use crate::launchers;
use crate::nvtx::range;
use catalog::{Backend, Dtype, Family, Kernel, Runner};
use cust::memory::DeviceBuffer;

impl Bench<'_> {
    /// Every selected transpose at each edge, after a D2D copy of the same bytes (their
    /// ceiling) and the copy kernel on each backend.
    pub fn transposes(&mut self) -> Result<()> {
        let (lab, plan) = (self.lab, self.plan);
        let variants: Vec<&'static Kernel> = launchers::transposes()
            .filter(|v| plan.wants(v.name))
            .collect();
        if variants.is_empty() {
            return Ok(());
        }
        let copy_kernel = launchers::stream::copy_stream();
        for &edge in &plan.transpose {
            let e = (edge * edge) as usize;
            let dims = (edge as u32, edge as u32);
            let shape = size::shape_label(edge, edge);
            self.check_memory(2 * e as u64 * 4)?;
            let what = format!("setup: transpose {shape}");
            self.progress.working_on(&what);
            let setup = range(&what);
            let host = transpose::input(e, plan.seed ^ edge);
            let want = transpose::reference(&host, dims.0, dims.1);
            let input = lab.upload(&host)?;
            let output = DeviceBuffer::<f32>::zeroed(e).ctx(|| "allocating the output".into())?;
            drop(setup);

            let copy = target("d2d_copy", Dtype::F32, &shape);
            let row = Row::new(
                Family::Transpose,
                "d2d_copy",
                Runner::Driver,
                Dtype::F32,
                e as u64,
                shape.clone(),
                8 * e as u64,
            );
            let driver = Matrix::driver_copy(lab, input.index(..), output.index(..));
            self.copy_row(row, &driver, &host);
            // A row of this shape: `e` elements read and written, compared with the copy.
            let row = |kernel: &str, b: Backend| {
                Row::new(
                    Family::Transpose,
                    kernel,
                    b,
                    Dtype::F32,
                    e as u64,
                    shape.clone(),
                    8 * e as u64,
                )
                .compared_with(Some(copy.clone()), Some(copy.clone()))
            };
            let case = |k: &'static Kernel, b: Backend| {
                Matrix::kernel(lab, b, k, input.index(..), output.index(..), dims)
            };
            // The same traffic through a kernel of each compiler: what ncu can see of a copy.
            for &b in &plan.backends {
                let row = row(copy_kernel.name, b);
                match case(copy_kernel, b) {
                    Ok(c) => self.copy_row(row, &c, &host),
                    Err(e) => self.record_each(row.failed(e.to_string())),
                }
            }
            for &v in &variants {
                for &b in plan.backends.iter().filter(|&&b| v.carried_by(b)) {
                    let row = row(v.name, b);
                    match case(v, b) {
                        Ok(c) => {
                            self.measure_case(row, &c, || Ok(c.verify(&want)?.verdict("transpose")))
                        }
                        Err(e) => self.record_each(row.failed(e.to_string())),
                    }
                }
            }
        }
        Ok(())
    }
}
