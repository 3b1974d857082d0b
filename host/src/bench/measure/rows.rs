//! The row-wise family, only when `--kernel` names it (`rows`, `all`, or its kernels): at each
//! shape and element type, the driver's copy of the same matrix first (the family's ceiling
//! and reference, in the same run), then every named kernel whose schedule holds the rows on
//! every backend that carries it, each checked against the f64 reference. The schedule
//! `catalog::rows::chosen` picks for the shape says so in its note.

use super::Bench;
use crate::bench::report::{Row, target};
use crate::bench::size;
use crate::cases::rows::{Device, DriverCopy, Inputs, RowCase};
use crate::error::Result;
use crate::launchers::rows::{Bf16, RowElem, op_schedule, row_kernels};
use crate::nvtx::range;
use catalog::rows::{Op, chosen};
use catalog::{Backend, Dtype, Family, Kernel, Runner};

/// One shape and element type of the plan: the kernels (with their backends) that run there.
pub(super) struct RowsStep {
    pub rows: u32,
    pub cols: u32,
    pub dtype: Dtype,
    pub runs: Vec<(&'static Kernel, Backend)>,
}

impl RowsStep {
    /// Bytes the step's matrix moves (one read, one write).
    pub fn matrix_bytes(&self) -> u64 {
        2 * self.rows as u64 * self.cols as u64 * self.dtype.size()
    }
}

impl Bench<'_> {
    /// What the row-wise phase runs, shape by shape and type by type (none without a
    /// `--kernel` that names the family's kernels).
    pub(super) fn planned_rows(&self) -> Vec<RowsStep> {
        let p = self.plan;
        let kernels: Vec<&'static Kernel> = row_kernels().filter(|k| p.names(k.name)).collect();
        if kernels.is_empty() {
            return Vec::new();
        }
        let mut steps = Vec::new();
        for &(rows, cols) in &p.shapes {
            for &dtype in &p.row_dtypes {
                let runs = kernels
                    .iter()
                    .filter(|k| {
                        op_schedule(k).is_ok_and(|(o, s)| {
                            s.launch(o, rows as u64, cols as u64, dtype).is_ok()
                        })
                    })
                    .flat_map(|&k| {
                        p.backends
                            .iter()
                            .filter(move |&&b| k.carried_by(b))
                            .map(move |&b| (k, b))
                    })
                    .collect();
                steps.push(RowsStep {
                    rows,
                    cols,
                    dtype,
                    runs,
                });
            }
        }
        steps
    }

    /// Every named row-wise kernel at every shape and element type of the plan.
    pub fn rows(&mut self) -> Result<()> {
        for step in self.planned_rows() {
            match step.dtype {
                Dtype::Bf16 => self.rows_step::<Bf16>(&step)?,
                _ => self.rows_step::<f32>(&step)?,
            }
        }
        Ok(())
    }

    /// One shape and type: inputs, the copy, then each kernel; the reference of each
    /// operation computed once, when its first kernel has run.
    fn rows_step<T: RowElem>(&mut self, step: &RowsStep) -> Result<()> {
        let (lab, plan) = (self.lab, self.plan);
        let (rows, cols) = (step.rows, step.cols);
        let shape = size::shape_label(rows as u64, cols as u64);
        let n = rows as u64 * cols as u64;
        self.check_memory(step.matrix_bytes() + 2 * cols as u64 * step.dtype.size())?;
        let what = format!("setup: rows {shape} {}", step.dtype);
        self.progress.working_on(&what);
        let setup = range(&what);
        let seed = plan.seed ^ n ^ (step.dtype as u64) << 40;
        let host = Inputs::<T>::random(rows as usize, cols as usize, seed);
        let dev = Device::upload(lab, &host)?;
        drop(setup);

        let copy = target("d2d_copy", step.dtype, &shape);
        let row = Row::new(
            Family::Rows,
            "d2d_copy",
            Runner::Driver,
            step.dtype,
            n,
            shape.clone(),
            step.matrix_bytes(),
        );
        match DriverCopy::new(lab, dev.x.index(..), dev.y.index(..)) {
            Ok(c) => self.measure_case(row, &c, || c.verify(&host.x)),
            Err(e) => self.record_each(row.failed(e.to_string())),
        }

        let mut references: Vec<(Op, Vec<f64>)> = Vec::new();
        for &(k, b) in &step.runs {
            let (op, schedule) = op_schedule(k)?;
            let picked = chosen(op, cols as u64, step.dtype) == Some(schedule);
            let row = Row::new(
                Family::Rows,
                k.name,
                b,
                step.dtype,
                n,
                shape.clone(),
                catalog::rows::bytes(op, rows as u64, cols as u64, step.dtype),
            )
            .compared_with(Some(copy.clone()), Some(copy.clone()));
            let case = match RowCase::new(lab, b, k, dev.inputs(), dev.y.index(..), rows, cols) {
                Ok(c) => c,
                Err(e) => {
                    self.record_each(row.failed(e.to_string()));
                    continue;
                }
            };
            let row = row.with_launch(case.row_launch());
            if !references.iter().any(|(o, _)| *o == op) {
                let what = format!("setup: {} reference {shape} {}", op.name(), step.dtype);
                self.progress.working_on(&what);
                let _r = range(&what);
                references.push((op, host.reference(op, cols as usize)));
            }
            let want = &references
                .iter()
                .find(|(o, _)| *o == op)
                .expect("made above")
                .1;
            self.measure_case(row, &case, || {
                let v = case.verify(want)?;
                Ok(v.map(|note| {
                    if picked {
                        format!("chosen for this shape; {note}")
                    } else {
                        note
                    }
                }))
            });
        }
        Ok(())
    }
}
