//! The reductions at each size: their ceilings first, then every version on every backend
//! and CUB, per element type, each checked on the timed input and (f32) on an exact-sum input.

use super::Bench;
use crate::bench::args::Dtype;
use crate::bench::report::{Row, target};
use crate::bench::size;
use crate::cases::cub;
use crate::cases::reduce::{self, ExactInput, Reduce, ReduceElem};
use crate::cases::verify::{self, SumRef};
use crate::cpu;
use crate::error::{Ctx, Result};
use crate::launchers;
use crate::nvtx::range;
use crate::placement::{Placement, ResultSlots};
use catalog::{Backend, Family, Kernel, Runner};
use cust::memory::{DeviceBuffer, DeviceSlice};

impl Bench<'_> {
    /// For each size: the two ceilings, then every reduction and CUB, per element type.
    pub fn reductions(&mut self) -> Result<()> {
        let p = self.plan;
        let wants_reduce = self.wants_reduce();
        if !self.wants_bandwidth_ceilings() {
            return Ok(());
        }
        let max = *p.sizes.iter().max().expect("at least one size") as usize;
        let ints = wants_reduce && p.dtypes.contains(&Dtype::I32);
        let floats_exact = wants_reduce && p.dtypes.contains(&Dtype::F32);
        let buffers = 2 + ints as u64 + floats_exact as u64;
        self.check_memory(buffers * max as u64 * 4)?;

        let setup_label = format!("setup: random inputs, {}", size::label(max as u64));
        self.progress.working_on(&setup_label);
        let _setup = range(&setup_label);
        let floats = reduce::input::<f32>(max, p.seed);
        let f32_dev = self.lab.upload(&floats)?;
        let ints_host = if ints {
            reduce::input::<i32>(max, p.seed + 1)
        } else {
            Vec::new()
        };
        let i32_dev = if ints {
            Some(self.lab.upload(&ints_host)?)
        } else {
            None
        };
        // The f32 rows' second input: its sum per size, then the host copy is not needed.
        let (exact_dev, exact_sums) = if floats_exact {
            let x = cpu::random::exact_sum_f32s(max, p.seed + 2);
            let sums: Vec<i64> = p
                .sizes
                .iter()
                .map(|&n| cpu::sum_ints_i64(&x[..n as usize]))
                .collect();
            (Some(self.lab.upload(&x)?), sums)
        } else {
            (None, Vec::new())
        };
        let copy_dst =
            DeviceBuffer::<f32>::zeroed(max).ctx(|| "allocating the copy destination".into())?;
        drop(_setup);

        // The result word: in the slot where same-address atomics are fastest, so the v1–v5
        // rows do not move with where an allocation happened to land.
        let mut slots = ResultSlots::new()?;
        if wants_reduce {
            let what = "setup: result word placement (same-address atomics per slot)";
            self.progress.working_on(what);
            let _r = range(what);
            slots.calibrate(self.lab)?;
            self.placement = Some(Placement::from(&slots));
        }

        for (k, &n) in p.sizes.iter().enumerate() {
            let n = n as usize;
            self.ceilings(n, &f32_dev, &floats, &copy_dst)?;
            if !wants_reduce {
                continue;
            }
            if let Some(dev) = &exact_dev {
                let check = |got: f32| {
                    let on = format!("±{} ints", cpu::random::EXACT_SUM_MAX);
                    verify::check_f32_exact(got, exact_sums[k])
                        .map(|ok| format!("{ok} on {on}"))
                        .map_err(|e| format!("on {on}: {e}"))
                };
                let exact = ExactInput {
                    input: dev.index(..n),
                    check: &check,
                };
                self.reduce::<f32>(f32_dev.index(..n), &floats[..n], Some(exact), &slots);
            }
            if let Some(dev) = &i32_dev {
                self.reduce::<i32>(dev.index(..n), &ints_host[..n], None, &slots);
            }
        }
        // The same-address roof adds into the same word.
        self.slots = Some(slots);
        Ok(())
    }

    /// Every version on every backend, then CUB, on `input` (its CPU copy `host`); each row
    /// checked on `exact` too when given.
    fn reduce<T: ReduceElem>(
        &mut self,
        input: DeviceSlice<T>,
        host: &[T],
        exact: Option<ExactInput<'_, T>>,
        slots: &ResultSlots,
    ) {
        let plan = self.plan;
        let n = input.len() as u64;
        let size = size::label(n);
        let reference = {
            let what = format!("setup: CPU reference, {} {size}", T::DTYPE);
            self.progress.working_on(&what);
            let _r = range(&what);
            reduce::reference(host)
        };
        let ceiling = Some(target("read_stream", Dtype::F32, &size));
        let library = launchers::library_reduction();
        let cub_target = Some(target(library.name, T::DTYPE, &size));
        let bytes = n * std::mem::size_of::<T>() as u64;
        // n − 1 additions; only float adds count as FLOPs (the roofline's y axis).
        let flops = if T::DTYPE == Dtype::F32 {
            n.saturating_sub(1)
        } else {
            0
        };
        let row = |kernel: &Kernel, backend: Runner| {
            let reference = kernel
                .library
                .is_none()
                .then(|| cub_target.clone())
                .flatten();
            Row::new(
                Family::Reduce,
                kernel.name,
                backend,
                T::DTYPE,
                n,
                size.clone(),
                bytes,
            )
            .with_flops(flops)
            .compared_with(ceiling.clone(), reference)
        };
        let versions: Vec<&Kernel> = launchers::reductions()
            .filter(|v| plan.wants(v.name))
            .collect();
        for v in versions {
            for &b in plan.backends.iter().filter(|&&b| v.carried_by(b)) {
                let row = row(v, b.into());
                self.reduce_row(row, v, b, input, slots, &reference, exact.as_ref());
            }
        }
        // CUB: always, when any reduction ran (it is their reference).
        let row = row(library, Runner::Cub);
        match cub::unavailable() {
            Some(why) => self.record_each(row.skipped(why)),
            // The library call has no backend: the argument is not read.
            None => self.reduce_row(
                row,
                library,
                Backend::Llvm,
                input,
                slots,
                &reference,
                exact.as_ref(),
            ),
        }
    }

    /// One reduction row: `kernel` on `backend` over `input` into the chosen slot.
    #[allow(clippy::too_many_arguments)]
    fn reduce_row<T: ReduceElem>(
        &mut self,
        row: Row,
        kernel: &'static Kernel,
        backend: Backend,
        input: DeviceSlice<T>,
        slots: &ResultSlots,
        reference: &SumRef,
        exact: Option<&ExactInput<'_, T>>,
    ) {
        match Reduce::new(self.lab, kernel, backend, input, slots.result::<T>()) {
            Ok(case) => self.measure_case(row, &case, || case.verify(reference, exact)),
            Err(e) => self.record_each(row.failed(e.to_string())),
        }
    }
}
