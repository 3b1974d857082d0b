//! The fault catalogue, only when `--kernel` names it (`faults`, `all`, or its kernels): each
//! selected pair's inputs made once, then each selected kernel of the pair on each backend,
//! timed and verified like every other row, its reference the twin (so `vs ref` is the speed
//! against the twin: the bytes are the operation's, the same for both).

use super::Bench;
use crate::bench::report::{Row, target};
use crate::cases::faults::{FaultCase, Inputs, Scale};
use crate::error::Result;
use crate::launchers::faults::{faults, pair};
use crate::nvtx::range;
use catalog::kernels::Pair;
use catalog::{Backend, Dtype, Family, Kernel};

/// The table's element type of a fault kernel: its output's, the same for both twins (so a
/// pair's rows pair up in `compare`; the BF16 GEMM's inputs are in its note).
fn dtype(k: &Kernel) -> Dtype {
    match k.fault.map(|f| f.pair) {
        Some(Pair::Barrier) => Dtype::I32,
        Some(
            Pair::TensorCores
            | Pair::Coalescing
            | Pair::UndersizedGrid
            | Pair::MemoryBound
            | Pair::Sfu
            | Pair::Tail,
        ) => Dtype::F32,
        _ => Dtype::U32,
    }
}

impl Bench<'_> {
    /// The fault kernels the plan names, in catalogue order (none without a `--kernel`).
    pub(super) fn planned_faults(&self) -> Vec<&'static Kernel> {
        faults().filter(|k| self.plan.names(k.name)).collect()
    }

    /// Every named fault kernel on every Rust backend of the plan, pair by pair.
    pub fn faults(&mut self) -> Result<()> {
        let (lab, plan) = (self.lab, self.plan);
        let wanted = self.planned_faults();
        for p in Pair::ALL {
            let (fault, fixed) = pair(p);
            let kernels: Vec<&Kernel> = [fault, fixed]
                .into_iter()
                .filter(|k| wanted.iter().any(|w| w.name == k.name))
                .collect();
            if kernels.is_empty() {
                continue;
            }
            self.check_memory(Inputs::bytes(p))?;
            let what = format!("setup: fault pair {p:?}");
            self.progress.working_on(&what);
            let setup = range(&what);
            let inputs = Inputs::new(lab, p, Scale::Profile, plan.seed);
            drop(setup);
            let size = inputs
                .as_ref()
                .map_or_else(|_| "-".into(), Inputs::size_label);
            for &k in &kernels {
                let (twin, n) = k.fault.map_or(("", 0), |f| (f.twin, f.size));
                for &b in plan.backends.iter().filter(|&&b| k.carried_by(b)) {
                    let row = |bytes: u64| {
                        Row::new(Family::Faults, k.name, b, dtype(k), n, size.clone(), bytes)
                            .compared_with(None, Some(target(twin, dtype(k), &size)))
                    };
                    let inputs = match &inputs {
                        Ok(i) => i,
                        Err(e) => {
                            self.record_each(row(0).failed(e.to_string()));
                            continue;
                        }
                    };
                    self.fault_row(k, b, inputs, row);
                }
            }
        }
        Ok(())
    }

    /// Times and verifies one fault kernel on `b`.
    fn fault_row(
        &mut self,
        k: &'static Kernel,
        b: Backend,
        inputs: &Inputs,
        row: impl Fn(u64) -> Row,
    ) {
        match FaultCase::new(self.lab, b, k, inputs) {
            Ok(case) => {
                let (bytes, flops) = case.work();
                let row = row(bytes).with_flops(flops);
                self.measure_case(row, &case, || case.verify());
            }
            Err(e) => self.record_each(row(0).failed(e.to_string())),
        }
    }
}
