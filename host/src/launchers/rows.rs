//! The row-wise family: softmax, RMSNorm and LayerNorm over every row of a matrix, each
//! schedule launched as `catalog::rows` computes from the row's length (a warp or a block per
//! row through the usual launch, clusters through `cuLaunchKernelEx`, as many as fit at once).

use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use catalog::rows::{Op, RowLaunch, Schedule};
use catalog::{Backend, Dtype, Kernel, Shape};
use cust::launch;
use cust::memory::{DeviceCopy, DeviceSlice};
use cust::stream::Stream;
use std::ffi::c_void;

/// A BF16 element as the kernels take it: its 16 bits.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bf16(pub u16);

// SAFETY (all three): a plain 16-bit value with no pointers or padding, valid for every bit
// pattern, zero included.
unsafe impl DeviceCopy for Bf16 {}
unsafe impl cust::memory::bytemuck::Zeroable for Bf16 {}
unsafe impl cust::memory::bytemuck::Pod for Bf16 {}

/// A BF16's value, exactly.
impl From<Bf16> for f64 {
    fn from(v: Bf16) -> f64 {
        v.to_f32() as f64
    }
}

/// The family's element types on the host.
pub trait RowElem:
    DeviceCopy
    + cust::memory::bytemuck::Pod
    + Into<f64>
    + Default
    + PartialEq
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// Its element type (the PTX entry points' suffix).
    const DTYPE: Dtype;
    /// A NaN, written over outputs before each launch.
    const POISON: Self;
    /// Its value, exactly.
    fn to_f32(self) -> f32;
    /// `v`, rounded to nearest even.
    fn from_f32(v: f32) -> Self;
    /// Its bits, widened.
    fn bits(self) -> u32;
}

impl RowElem for f32 {
    const DTYPE: Dtype = Dtype::F32;
    const POISON: f32 = f32::from_bits(0xffff_ffff);
    fn to_f32(self) -> f32 {
        self
    }
    fn from_f32(v: f32) -> f32 {
        v
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
}

impl RowElem for Bf16 {
    const DTYPE: Dtype = Dtype::Bf16;
    const POISON: Bf16 = Bf16(0xffff);
    fn to_f32(self) -> f32 {
        half::bf16::from_bits(self.0).to_f32()
    }
    fn from_f32(v: f32) -> Bf16 {
        Bf16(half::bf16::from_f32(v).to_bits())
    }
    fn bits(self) -> u32 {
        self.0 as u32
    }
}

/// The operation and schedule of a row-wise catalogue kernel; an error for any other kernel.
pub fn op_schedule(kernel: &Kernel) -> Result<(Op, Schedule)> {
    match kernel.shape {
        Shape::Rows { op, schedule } => Ok((op, schedule)),
        _ => Err(HostError::Invalid {
            what: "row kernel",
            detail: format!("{} is not a row-wise kernel", kernel.name),
        }),
    }
}

/// The row-wise kernels, in catalogue order.
pub fn row_kernels() -> impl Iterator<Item = &'static Kernel> {
    catalog::KERNELS
        .iter()
        .filter(|k| k.family == catalog::Family::Rows)
}

/// The catalogue's kernel of `op` in `schedule`.
pub fn row_kernel(op: Op, schedule: Schedule) -> &'static Kernel {
    row_kernels()
        .find(|k| matches!(k.shape, Shape::Rows { op: o, schedule: s } if o == op && s == schedule))
        .expect("the catalogue has every operation in every schedule")
}

/// What one launch reads and writes: `x` and `y` of `rows × cols` elements (the same buffer, or
/// not overlapping), `w` and `b` of `cols` where the operation reads them.
pub struct RowArgs<'a, T: RowElem> {
    pub x: &'a DeviceSlice<T>,
    pub w: Option<&'a DeviceSlice<T>>,
    pub b: Option<&'a DeviceSlice<T>>,
    pub y: &'a DeviceSlice<T>,
    pub rows: u32,
    pub cols: u32,
    pub eps: f32,
}

/// Refuses buffers a launch of `op` over `rows × cols` would read or write past, an `x` and
/// `y` that partly overlap, and a `rows × cols` that overflows.
pub fn check_args<T: RowElem>(op: Op, a: &RowArgs<T>) -> Result<()> {
    let elems = a.rows as u64 * a.cols as u64;
    let elem_bytes = size_of::<T>() as u64;
    let bytes = elems
        .checked_mul(elem_bytes)
        .ok_or_else(|| HostError::TooLarge {
            what: "rows × cols",
            value: elems,
            limit: u64::MAX / elem_bytes,
            why: "elements whose bytes a u64 can address",
        })?;
    let short = |what: &'static str, len: usize, need: u64| -> Result<()> {
        if (len as u64) < need {
            return Err(HostError::Invalid {
                what,
                detail: format!("{len} elements, but {} × {} needs {need}", a.rows, a.cols),
            });
        }
        Ok(())
    };
    short("x", a.x.len(), elems)?;
    short("y", a.y.len(), elems)?;
    for (what, buf, used) in [("w", a.w, op.weights() >= 1), ("b", a.b, op.weights() >= 2)] {
        match buf {
            Some(buf) => short(what, buf.len(), a.cols as u64)?,
            None if used => {
                return Err(HostError::Invalid {
                    what,
                    detail: format!(
                        "{} reads {what} ({} elements); none given",
                        op.name(),
                        a.cols
                    ),
                });
            }
            None => {}
        }
    }
    let (x0, y0) = (a.x.as_device_ptr().as_raw(), a.y.as_device_ptr().as_raw());
    if x0 != y0 && x0 < y0 + bytes && y0 < x0 + bytes {
        return Err(HostError::Invalid {
            what: "x and y",
            detail: "they overlap without being the same buffer: pass one buffer (in place) or two apart".into(),
        });
    }
    Ok(())
}

impl Lab {
    /// How `kernel` (a row-wise kernel) is launched on `backend` for `rows × cols` elements of
    /// `dtype`: the schedule's launch, a cluster grid cut to the clusters that fit on the GPU
    /// at once (each then walks several rows); a shape its schedule cannot hold is refused in
    /// one line.
    pub fn rows_config(
        &self,
        backend: Backend,
        kernel: &Kernel,
        dtype: Dtype,
        (rows, cols): (u64, u64),
    ) -> Result<RowLaunch> {
        let (op, schedule) = op_schedule(kernel)?;
        let mut l =
            schedule
                .launch(op, rows, cols, dtype)
                .map_err(|detail| HostError::Invalid {
                    what: "row kernel shape",
                    detail: format!("{}: {detail}", kernel.name),
                })?;
        if schedule.in_clusters() {
            // Past 48 KiB (the kept weights), the function must allow it first. Asked at
            // every launch, but while the output's poisoning memset still runs, before the
            // timed launch's start event (`timing::time_launches`): no time of its own.
            crate::ffi::allow_dynamic_shared(
                &self.function(backend, &kernel.entry(dtype))?,
                l.shared_bytes,
            )?;
            let fit = self.clusters_at_once(
                backend,
                &kernel.entry(dtype),
                (l.threads, l.cluster),
                l.shared_bytes,
                l.balanced,
            )?;
            l.blocks = l.blocks.min(fit * l.cluster);
        }
        Ok(l)
    }

    /// Queues `kernel`'s operation over every row of `a.x` into `a.y`. An empty matrix queues
    /// nothing.
    pub fn launch_rows<T: RowElem>(
        &self,
        backend: Backend,
        kernel: &Kernel,
        a: &RowArgs<T>,
        stream: &Stream,
    ) -> Result<()> {
        let (op, schedule) = op_schedule(kernel)?;
        check_args(op, a)?;
        if a.rows == 0 || a.cols == 0 {
            return Ok(());
        }
        let cfg = self.rows_config(backend, kernel, T::DTYPE, (a.rows as u64, a.cols as u64))?;
        let entry = kernel.entry(T::DTYPE);
        let f = self.function(backend, &entry)?;
        let ptr = |s: Option<&DeviceSlice<T>>| s.map_or(0u64, |s| s.as_device_ptr().as_raw());
        let (x, w, b, y) = (ptr(Some(a.x)), ptr(a.w), ptr(a.b), ptr(Some(a.y)));
        let (rows, cols, eps) = (a.rows, a.cols, a.eps);
        let what = || format!("launching {entry} [{backend}] {rows}×{cols}");
        // The cluster schedules always take the cluster launch, whatever its size: on the
        // H200 its kernels with one block a cluster, launched plainly, stopped at an illegal
        // instruction (results/rows/95481da/experiments).
        if schedule.in_clusters() {
            let args = [
                &x as *const u64 as *mut c_void,
                &w as *const u64 as *mut c_void,
                &b as *const u64 as *mut c_void,
                &y as *const u64 as *mut c_void,
                &rows as *const u32 as *mut c_void,
                &cols as *const u32 as *mut c_void,
                &eps as *const f32 as *mut c_void,
            ];
            // SAFETY: the seven arguments are the kernel's (x, w, b, y, rows, cols, eps) in
            // order and type; check_args made sure x and y hold rows·cols elements and w, b
            // cols where read (unread ones are null); the launch is the schedule's.
            return unsafe {
                crate::ffi::launch_clusters(
                    &f,
                    (cfg.blocks, cfg.threads, cfg.cluster),
                    cfg.shared_bytes,
                    cfg.balanced,
                    stream,
                    &args,
                )
            }
            .map_err(|e| HostError::Invalid {
                what: "row kernel launch",
                detail: format!("{}: {e}", what()),
            });
        }
        // SAFETY: as above, through the ordinary launch (no cluster).
        unsafe {
            launch!(f<<<cfg.blocks, cfg.threads, cfg.shared_bytes, stream>>>(x, w, b, y, rows, cols, eps))
        }
        .ctx(what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_every_schedule() {
        for op in Op::ALL {
            for s in Schedule::ALL {
                let k = row_kernel(op, s);
                assert_eq!(k.name, format!("{}_{}", op.name(), s.name()));
                assert_eq!(op_schedule(k).unwrap(), (op, s));
            }
        }
        assert_eq!(row_kernels().count(), Op::ALL.len() * Schedule::ALL.len());
        assert!(op_schedule(catalog::kernels::find("reduce_v6").unwrap()).is_err());
    }

    #[test]
    fn bf16_rounds_to_nearest_even_and_keeps_nan() {
        assert_eq!(Bf16::from_f32(1.0).0, 0x3f80);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to even (1).
        assert_eq!(Bf16::from_f32(1.0 + 1.0 / 256.0).0, 0x3f80);
        assert_eq!(Bf16::from_f32(1.0 + 3.0 / 256.0).0, 0x3f82);
        assert!(Bf16::POISON.to_f32().is_nan() && f32::POISON.is_nan());
        assert_eq!(Bf16(0x4049).to_f32(), 3.140625);
    }
}
