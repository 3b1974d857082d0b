//! The reductions: `Σ input` into the run's result word, by one of the lab's kernels on one
//! compiler, or by the library (CUB's `DeviceReduce::Sum`). The result is checked against the
//! f64 (or exact integer) sum within the rounding bound of the kernel's addition order, and,
//! given an exact-sum input, exactly.

use super::Case;
use super::cub::{CubElem, CubSum};
use super::verify::{self, Checked, SumRef, Verdict};
use crate::error::{Ctx, Result};
use crate::lab::Lab;
use crate::launchers::{Elem, LaunchConfig, addition_depth};
use catalog::{Backend, Kernel};
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceSlice};

/// Element types the reductions take: launched, checked and summed by CUB.
pub trait ReduceElem: Elem + Checked + CubElem {}
impl<T: Elem + Checked + CubElem> ReduceElem for T {}

/// `len` random elements (f32 uniform in [0, 1), i32 uniform in [-1000, 1000]).
pub fn input<T: Checked>(len: usize, seed: u64) -> Vec<T> {
    T::random(len, seed)
}

/// What the sum of `host` should be.
pub fn reference<T: Checked>(host: &[T]) -> SumRef {
    T::reference(host)
}

/// A second input a reduction is verified on, once, after its measured launches: integers
/// that every correct addition order sums exactly (`cpu::random::exact_sum_f32s`), so that a
/// lost or doubled element or block fails, which the rounding bound lets pass at large n.
/// `check` judges the sum of `input`.
pub struct ExactInput<'a, T: Elem> {
    pub input: DeviceSlice<T>,
    pub check: &'a dyn Fn(T) -> Verdict,
}

/// Who does the adding.
enum Via<T> {
    Kernel(Backend, LaunchConfig),
    Library(CubSum<T>),
}

/// One reduction of `input` into `out`, ready to launch.
pub struct Reduce<'a, T: ReduceElem> {
    lab: &'a Lab,
    kernel: &'static Kernel,
    via: Via<T>,
    input: DeviceSlice<T>,
    out: DeviceSlice<T>,
    /// The longest chain of dependent additions: the float error bound's factor.
    depth: u64,
}

impl<'a, T: ReduceElem> Reduce<'a, T> {
    /// `kernel` (one of the lab's, on `backend`; or the library call, which ignores it) over
    /// `input`, adding into `out`. Fails when the kernel cannot launch at this size or the
    /// library is not in this binary.
    pub fn new(
        lab: &'a Lab,
        kernel: &'static Kernel,
        backend: Backend,
        input: DeviceSlice<T>,
        out: DeviceSlice<T>,
    ) -> Result<Reduce<'a, T>> {
        let n = input.len() as u64;
        let (via, depth) = match kernel.library {
            Some(_) => (
                Via::Library(CubSum::new(n)?),
                verify::cub_depth(n, lab.info.sm_count),
            ),
            None => {
                let cfg = lab.reduce_config::<T>(backend, kernel, n)?;
                let depth = addition_depth(kernel, n, cfg.grid.0 as u64);
                (Via::Kernel(backend, cfg), depth)
            }
        };
        Ok(Reduce {
            lab,
            kernel,
            via,
            input,
            out,
            depth,
        })
    }

    /// Queues one reduction of `input` into the result word.
    fn launch_on(&self, input: &DeviceSlice<T>) -> Result<()> {
        let stream = &self.lab.stream;
        match &self.via {
            Via::Kernel(b, _) => self
                .lab
                .launch_reduce(*b, self.kernel, input, &self.out, stream),
            Via::Library(sum) => sum.launch(input, &self.out, stream),
        }
    }

    /// Checks the last launch's result against `reference` and, given `exact`, reduces its
    /// input once more and checks that sum too. The stream must be idle.
    pub fn verify(&self, reference: &SumRef, exact: Option<&ExactInput<'_, T>>) -> Result<Verdict> {
        let measured = T::check(self.read()?, reference, self.depth);
        let Some(e) = exact else {
            return Ok(measured);
        };
        self.reset()?;
        self.launch_on(&e.input)?;
        self.lab.sync()?;
        Ok(match (measured, (e.check)(self.read()?)) {
            (Ok(a), Ok(b)) => Ok(format!("{a}; {b}")),
            (Err(a), Err(b)) => Err(format!("{a}; {b}")),
            (Err(a), Ok(_)) | (Ok(_), Err(a)) => Err(a),
        })
    }

    fn read(&self) -> Result<T> {
        let mut r = [T::default()];
        self.out
            .index(..1)
            .copy_to(&mut r[..])
            .ctx(|| "reading the result back".into())?;
        Ok(r[0])
    }
}

impl<T: ReduceElem> Case for Reduce<'_, T> {
    fn config(&self) -> Option<LaunchConfig> {
        match self.via {
            Via::Kernel(_, cfg) => Some(cfg),
            Via::Library(_) => None,
        }
    }

    /// The lab's kernels add into the word with atomics: it starts at zero. The library
    /// overwrites it: it starts poisoned, so a call that wrote nothing cannot pass.
    fn reset(&self) -> Result<()> {
        let v = match self.via {
            Via::Kernel(..) => T::default(),
            Via::Library(_) => T::poison(),
        };
        let src = [v];
        // SAFETY: `out` is a live one-element device allocation that outlives the queue;
        // `src` is pageable, which the driver copies into staging before this call returns.
        unsafe { self.out.index(..1).async_copy_from(&src, &self.lab.stream) }
            .ctx(|| "resetting the result".into())
    }

    fn launch(&self) -> Result<()> {
        self.launch_on(&self.input)
    }
}
