//! The transposes, and the copies of the same bytes they are compared with: the lab's copy
//! kernel and the driver's D2D copy. The output is poisoned before every launch and compared
//! with the CPU's transpose (or the input, for a copy) bit for bit.

use super::verify::Mismatches;
use super::{Case, POISON_BITS, fill};
use crate::cpu;
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use crate::launchers::LaunchConfig;
use catalog::{Backend, Kernel, Shape};
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceSlice};
use std::borrow::Cow;

/// `len` random floats, uniform in [0, 1).
pub fn input(len: usize, seed: u64) -> Vec<f32> {
    cpu::random::f32s(len, seed)
}

/// The transpose of a row-major `rows × cols` matrix.
pub fn reference(host: &[f32], rows: u32, cols: u32) -> Vec<f32> {
    cpu::transpose(host, rows as usize, cols as usize)
}

/// What writes the output.
#[derive(Clone, Copy)]
enum Op {
    /// A transpose launched on tiles, of a `rows × cols` input.
    Transpose {
        backend: Backend,
        kernel: &'static Kernel,
        rows: u32,
        cols: u32,
    },
    /// The transpose family's copy kernel: `output[i] = input[i]`.
    CopyKernel(Backend),
    /// `cuMemcpyDtoDAsync`.
    DriverCopy,
}

/// One transpose or copy of `input` into `output`, ready to launch.
pub struct Matrix<'a> {
    lab: &'a Lab,
    op: Op,
    config: Option<LaunchConfig>,
    input: DeviceSlice<f32>,
    output: DeviceSlice<f32>,
}

impl<'a> Matrix<'a> {
    /// A transpose-family kernel on `backend`: the transposes launched on tiles of the
    /// `rows × cols` input, the copy kernel over its elements.
    pub fn kernel(
        lab: &'a Lab,
        backend: Backend,
        kernel: &'static Kernel,
        input: DeviceSlice<f32>,
        output: DeviceSlice<f32>,
        (rows, cols): (u32, u32),
    ) -> Result<Matrix<'a>> {
        let (op, config) = match kernel.shape {
            Shape::Tiles { .. } => (
                Op::Transpose {
                    backend,
                    kernel,
                    rows,
                    cols,
                },
                lab.transpose_config(kernel, rows, cols)?,
            ),
            _ => (
                Op::CopyKernel(backend),
                lab.copy_stream_config(backend, input.len() as u64)?,
            ),
        };
        Ok(Matrix {
            lab,
            op,
            config: Some(config),
            input,
            output,
        })
    }

    /// The driver's copy of `input` into `output` (the same length).
    pub fn driver_copy(lab: &'a Lab, input: DeviceSlice<f32>, output: DeviceSlice<f32>) -> Self {
        Matrix {
            lab,
            op: Op::DriverCopy,
            config: None,
            input,
            output,
        }
    }

    /// Whether the output is the input transposed (else a copy of it).
    pub fn transposes(&self) -> bool {
        matches!(self.op, Op::Transpose { .. })
    }

    /// The output the CPU expects from `host`, the input's host copy: its transpose, or
    /// `host` itself for a copy.
    pub fn reference<'h>(&self, host: &'h [f32]) -> Cow<'h, [f32]> {
        match self.op {
            Op::Transpose { rows, cols, .. } => Cow::Owned(reference(host, rows, cols)),
            _ => Cow::Borrowed(host),
        }
    }

    /// Reads the output back and compares it with `want`, of the output's length. The stream
    /// must be idle.
    pub fn verify(&self, want: &[f32]) -> Result<Mismatches> {
        if want.len() != self.output.len() {
            return Err(HostError::Invalid {
                what: "reference",
                detail: format!(
                    "{} elements for an output of {}",
                    want.len(),
                    self.output.len()
                ),
            });
        }
        let mut got = vec![0f32; self.output.len()];
        self.output
            .copy_to(&mut got[..])
            .ctx(|| "reading the output back".into())?;
        Ok(Mismatches::of(&got, want))
    }
}

impl Case for Matrix<'_> {
    fn config(&self) -> Option<LaunchConfig> {
        self.config
    }

    fn reset(&self) -> Result<()> {
        fill(self.lab, &self.output, POISON_BITS, "the output")
    }

    fn launch(&self) -> Result<()> {
        let (lab, stream) = (self.lab, &self.lab.stream);
        let (input, output) = (&self.input, &self.output);
        match self.op {
            Op::Transpose {
                backend,
                kernel,
                rows,
                cols,
            } => lab.launch_transpose(backend, kernel, input, output, rows, cols, stream),
            Op::CopyKernel(b) => lab.launch_copy_stream(b, input, output, stream),
            // SAFETY: both are live device allocations of the same length (the caller's
            // slices), on the lab's stream; the caller synchronizes before they are dropped.
            Op::DriverCopy => unsafe { output.index(..).async_copy_from(input, stream) }
                .ctx(|| "cuMemcpyDtoDAsync".into()),
        }
    }
}
