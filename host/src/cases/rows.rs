//! The row-wise family: a random matrix and weights, an output poisoned before every launch,
//! and each output element checked against the f64 reference (`cpu::rows`) within its element
//! type's tolerance; and the driver's copy of the same matrix, the family's ceiling, checked
//! bit for bit.

use super::Case;
use super::verify::Verdict;
use crate::cpu;
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use crate::launchers::LaunchConfig;
use crate::launchers::rows::{RowArgs, RowElem, op_schedule};
use catalog::rows::{Op, RowLaunch};
use catalog::{Backend, Dtype, Kernel};
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceSlice};
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// How close an output element must be to the f64 reference: `|got − want| ≤ rtol · |want| +
/// atol · m`, `m` the largest finite |want| of its row; a NaN or an infinity of the reference
/// must be exactly that.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

/// The tolerance of `dtype`'s outputs. f32: 1e-5 relative (about 80 ulp: `ex2.approx`'s
/// 2^-22, the f32 rounding of `x − max` and of its product with log2 e at |x − max| up to
/// ~10, sums of up to 2^18 terms, `div.full`'s 2 ulp) plus 1e-6 of the row's largest output
/// (an output that small next to its row's largest carries the largest's absolute error).
/// BF16: 2^-7 relative (rounding to BF16's 8 significant bits is off by up to 2^-8; twice
/// that leaves room for the f32 work before it), plus 1e-5 of the row's largest.
pub fn tolerance(dtype: Dtype) -> Tolerance {
    match dtype {
        Dtype::Bf16 => Tolerance {
            rtol: 1.0 / 128.0,
            atol: 1e-5,
        },
        _ => Tolerance {
            rtol: 1e-5,
            atol: 1e-6,
        },
    }
}

/// How one output compared with the reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compared {
    /// Elements outside the tolerance (or with the wrong NaN or infinity).
    pub wrong: usize,
    /// The element whose error was the largest share of its bound: index, got, want, share.
    pub worst: Option<(usize, f64, f64, f64)>,
}

/// `got` (the output) against `want`, row by row of `cols`, on every core.
pub fn compare<G: Copy + Sync + Into<f64>>(
    got: &[G],
    want: &[f64],
    cols: usize,
    tol: Tolerance,
) -> Compared {
    assert_eq!(got.len(), want.len());
    let rows = got.len() / cols.max(1);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(rows.max(1));
    let per = rows.div_ceil(threads).max(1) * cols;
    let parts: Vec<Compared> = std::thread::scope(|scope| {
        let handles: Vec<_> = got
            .chunks(per)
            .zip(want.chunks(per))
            .enumerate()
            .map(|(part, (g, w))| scope.spawn(move || compare_rows(g, w, cols, tol, part * per)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all = Compared {
        wrong: 0,
        worst: None,
    };
    for p in parts {
        all.wrong += p.wrong;
        if p.worst.is_some_and(|w| all.worst.is_none_or(|a| w.3 > a.3)) {
            all.worst = p.worst;
        }
    }
    all
}

fn compare_rows<G: Copy + Into<f64>>(
    got: &[G],
    want: &[f64],
    cols: usize,
    tol: Tolerance,
    first: usize,
) -> Compared {
    let mut c = Compared {
        wrong: 0,
        worst: None,
    };
    for (r, (g, w)) in got.chunks(cols).zip(want.chunks(cols)).enumerate() {
        let m = w
            .iter()
            .filter(|v| v.is_finite())
            .fold(0f64, |m, v| m.max(v.abs()));
        for (j, (&g, &w)) in g.iter().zip(w).enumerate() {
            let g: f64 = g.into();
            let share = if w.is_nan() || w.is_infinite() || g.is_nan() || g.is_infinite() {
                let same = (w.is_nan() && g.is_nan()) || w == g;
                if same { 0.0 } else { f64::INFINITY }
            } else {
                (g - w).abs() / (tol.rtol * w.abs() + tol.atol * m).max(f64::MIN_POSITIVE)
            };
            if share > 1.0 {
                c.wrong += 1;
            }
            if c.worst.is_none_or(|x| share > x.3) {
                c.worst = Some((first + r * cols + j, g, w, share));
            }
        }
    }
    c
}

impl Compared {
    /// `max error 0.31 of the bound`, or the worst element and how many are wrong.
    pub fn verdict(&self, tol: Tolerance) -> Verdict {
        let bound = format!("bound {:e}·|want| + {:e}·row max", tol.rtol, tol.atol);
        match self.worst {
            None => Ok("empty".into()),
            Some((_, _, _, share)) if self.wrong == 0 => {
                Ok(format!("max error {share:.2} of the bound ({bound})"))
            }
            Some((i, g, w, _)) => Err(format!(
                "{} elements outside {bound}; the worst, element {i}: {g:e}, want {w:e}",
                self.wrong
            )),
        }
    }
}

/// A random `rows × cols` matrix and its weights, on the host.
pub struct Inputs<T> {
    pub x: Vec<T>,
    pub w: Vec<T>,
    pub b: Vec<T>,
}

impl<T: RowElem> Inputs<T> {
    /// `x` uniform in [−4, 4), `w` in [0.5, 1.5), `b` in [−0.5, 0.5), each rounded to `T`:
    /// never zeros, never ones (a missed weight or bias shows).
    pub fn random(rows: usize, cols: usize, seed: u64) -> Inputs<T> {
        let mut r = SmallRng::seed_from_u64(seed);
        let mut draw = |n: usize, lo: f32, hi: f32| -> Vec<T> {
            (0..n)
                .map(|_| T::from_f32(r.random_range(lo..hi)))
                .collect()
        };
        Inputs {
            x: draw(rows * cols, -4.0, 4.0),
            w: draw(cols, 0.5, 1.5),
            b: draw(cols, -0.5, 0.5),
        }
    }

    /// The reference of `op` over these inputs, in f64.
    pub fn reference(&self, op: Op, cols: usize) -> Vec<f64> {
        let f = |v: &[T]| v.iter().map(|e| e.to_f32()).collect::<Vec<f32>>();
        cpu::rows::reference(op, &f(&self.x), (&f(&self.w), &f(&self.b)), cols, op.eps())
    }
}

/// One launch of a row kernel, ready to run: its inputs and output on the device.
pub struct RowCase<'a, T: RowElem> {
    lab: &'a Lab,
    backend: Backend,
    kernel: &'static Kernel,
    op: Op,
    launch: RowLaunch,
    x: DeviceSlice<T>,
    w: DeviceSlice<T>,
    b: DeviceSlice<T>,
    y: DeviceSlice<T>,
    rows: u32,
    cols: u32,
}

impl<'a, T: RowElem> RowCase<'a, T> {
    /// `kernel` on `backend` over the `rows × cols` matrix `x` into `y`, with the weights `w`
    /// and `b` (`cols` each), the op's eps. A shape the kernel's schedule cannot hold is
    /// refused here, before anything runs.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        lab: &'a Lab,
        backend: Backend,
        kernel: &'static Kernel,
        (x, w, b): (DeviceSlice<T>, DeviceSlice<T>, DeviceSlice<T>),
        y: DeviceSlice<T>,
        rows: u32,
        cols: u32,
    ) -> Result<Self> {
        let (op, _) = op_schedule(kernel)?;
        let l = lab.rows_config(backend, kernel, T::DTYPE, (rows as u64, cols as u64))?;
        let case = RowCase {
            lab,
            backend,
            kernel,
            op,
            launch: l,
            x,
            w,
            b,
            y,
            rows,
            cols,
        };
        crate::launchers::rows::check_args(op, &case.args())?;
        Ok(case)
    }

    /// The launch, as the lab makes it on this GPU.
    pub fn row_launch(&self) -> RowLaunch {
        self.launch
    }

    fn args(&self) -> RowArgs<'_, T> {
        RowArgs {
            x: &self.x,
            w: (self.op.weights() >= 1).then_some(&self.w),
            b: (self.op.weights() >= 2).then_some(&self.b),
            y: &self.y,
            rows: self.rows,
            cols: self.cols,
            eps: self.op.eps(),
        }
    }

    /// Reads the output back (the stream must be idle).
    pub fn output(&self) -> Result<Vec<T>> {
        let n = self.rows as usize * self.cols as usize;
        let mut got = vec![T::default(); n];
        self.y
            .index(..n)
            .copy_to(&mut got[..])
            .ctx(|| "reading the output back".into())?;
        Ok(got)
    }

    /// The output against `want`, the reference, within `T`'s tolerance.
    pub fn verify(&self, want: &[f64]) -> Result<Verdict> {
        let tol = tolerance(T::DTYPE);
        Ok(compare(&self.output()?, want, self.cols as usize, tol).verdict(tol))
    }
}

impl<T: RowElem> Case for RowCase<'_, T> {
    fn config(&self) -> Option<LaunchConfig> {
        let l = self.launch;
        Some(LaunchConfig {
            grid: (l.blocks, 1),
            block: (l.threads, 1),
            shared_bytes: l.shared_bytes,
            cluster: l.cluster,
        })
    }

    fn reset(&self) -> Result<()> {
        poison(self.lab, &self.y)
    }

    fn launch(&self) -> Result<()> {
        self.lab
            .launch_rows(self.backend, self.kernel, &self.args(), &self.lab.stream)
    }
}

/// Queues `T::POISON` (a NaN) into every element of `y` on the lab's stream.
fn poison<T: RowElem>(lab: &Lab, y: &DeviceSlice<T>) -> Result<()> {
    let bits = T::POISON.bits();
    // SAFETY: stream-ordered memsets of a live buffer, which the case keeps until the stream
    // is synchronized; the element size picks the width (2 or 4 bytes).
    unsafe {
        match size_of::<T>() {
            2 => y.index(..).set_16_async(bits as u16, &lab.stream),
            _ => y.index(..).set_32_async(bits, &lab.stream),
        }
    }
    .ctx(|| "poisoning the output".into())
}

/// The driver's copy of `x` into `y` (`cuMemcpyDtoDAsync`), the family's ceiling: the same
/// bytes read once and written once, checked bit for bit.
pub struct DriverCopy<'a, T: RowElem> {
    lab: &'a Lab,
    x: DeviceSlice<T>,
    y: DeviceSlice<T>,
}

impl<'a, T: RowElem> DriverCopy<'a, T> {
    pub fn new(lab: &'a Lab, x: DeviceSlice<T>, y: DeviceSlice<T>) -> Result<Self> {
        if x.len() != y.len() {
            return Err(HostError::Invalid {
                what: "copy",
                detail: format!("{} elements into {}", x.len(), y.len()),
            });
        }
        Ok(DriverCopy { lab, x, y })
    }

    /// `y` equals `host`, the input's host copy, bit for bit. The stream must be idle.
    pub fn verify(&self, host: &[T]) -> Result<Verdict> {
        let mut got = vec![T::default(); self.y.len()];
        self.y
            .copy_to(&mut got[..])
            .ctx(|| "reading the copy back".into())?;
        let wrong = got
            .iter()
            .zip(host)
            .filter(|(g, h)| g.bits() != h.bits())
            .count();
        Ok(if wrong == 0 && got.len() == host.len() {
            Ok("exact".into())
        } else {
            Err(format!("copy: {wrong} of {} elements differ", host.len()))
        })
    }
}

impl<T: RowElem> Case for DriverCopy<'_, T> {
    fn config(&self) -> Option<LaunchConfig> {
        None
    }

    fn reset(&self) -> Result<()> {
        poison(self.lab, &self.y)
    }

    fn launch(&self) -> Result<()> {
        // SAFETY: both are live device allocations of the same length (checked), on the lab's
        // stream; the caller synchronizes before they are dropped.
        unsafe { self.y.index(..).async_copy_from(&self.x, &self.lab.stream) }
            .ctx(|| "cuMemcpyDtoDAsync".into())
    }
}

/// The inputs on the device and an output of the same size.
pub struct Device<T: RowElem> {
    pub x: DeviceBuffer<T>,
    pub w: DeviceBuffer<T>,
    pub b: DeviceBuffer<T>,
    pub y: DeviceBuffer<T>,
}

impl<T: RowElem> Device<T> {
    pub fn upload(lab: &Lab, host: &Inputs<T>) -> Result<Self> {
        Ok(Device {
            x: lab.upload(&host.x)?,
            w: lab.upload(&host.w)?,
            b: lab.upload(&host.b)?,
            y: lab.upload(&host.x)?,
        })
    }

    /// The three inputs as slices.
    pub fn inputs(&self) -> (DeviceSlice<T>, DeviceSlice<T>, DeviceSlice<T>) {
        (self.x.index(..), self.w.index(..), self.b.index(..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tolerance_passes_rounding_and_fails_a_wrong_element() {
        let tol = tolerance(Dtype::F32);
        let want = [0.5, 0.25, 0.25, 1e-12];
        let near: Vec<f64> = want.iter().map(|w| w * (1.0 + 5e-6)).collect();
        assert!(compare(&near, &want, 4, tol).verdict(tol).is_ok());
        let mut off = near.clone();
        off[1] *= 1.001;
        let c = compare(&off, &want, 4, tol);
        assert_eq!((c.wrong, c.worst.unwrap().0), (1, 1));
        let e = c.verdict(tol).unwrap_err();
        assert!(e.contains("element 1"), "{e}");
        // An element tiny next to its row's largest is held to the row's scale.
        let mut tiny = want.to_vec();
        tiny[3] = 2e-7;
        assert!(compare(&tiny, &want, 4, tol).wrong == 0);
        tiny[3] = 1e-5;
        assert_eq!(compare(&tiny, &want, 4, tol).wrong, 1);
    }

    #[test]
    fn nan_and_infinities_must_match_exactly() {
        let tol = tolerance(Dtype::Bf16);
        let want = [f64::NAN, f64::INFINITY, 1.0];
        assert_eq!(compare(&want, &want, 3, tol).wrong, 0);
        assert_eq!(compare(&[0.0, f64::INFINITY, 1.0], &want, 3, tol).wrong, 1);
        assert_eq!(
            compare(&[f64::NAN, f64::NEG_INFINITY, 1.0], &want, 3, tol).wrong,
            1
        );
        assert_eq!(
            compare(&[f64::NAN, f64::INFINITY, f64::NAN], &want, 3, tol).wrong,
            1
        );
        // The poison (a NaN) fails every finite reference.
        assert_eq!(compare(&[f64::NAN; 3], &[1.0; 3], 3, tol).wrong, 3);
    }

    #[test]
    fn bf16_rounding_passes_and_rows_split_over_threads_agree() {
        let tol = tolerance(Dtype::Bf16);
        let want: Vec<f64> = (0..4096).map(|i| 1.0 + i as f64 / 4096.0).collect();
        let got: Vec<f64> = want
            .iter()
            .map(|&w| crate::launchers::rows::Bf16::from_f32(w as f32).to_f32() as f64)
            .collect();
        let c = compare(&got, &want, 64, tol);
        assert_eq!(c.wrong, 0);
        assert!(c.worst.unwrap().3 <= 0.5 + 1e-9, "{c:?}");
    }

    #[test]
    fn random_inputs_have_their_ranges() {
        let i = Inputs::<f32>::random(3, 100, 1);
        assert!(i.x.iter().all(|v| (-4.0..4.0).contains(v)));
        assert!(i.w.iter().all(|v| (0.5..1.5).contains(v)) && i.w.len() == 100);
        assert!(i.b.iter().all(|v| (-0.5..0.5).contains(v)));
        let r = i.reference(Op::Softmax, 100);
        assert!((r[..100].iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
