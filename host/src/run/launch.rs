//! `lab run`'s launches: for each planned (kernel, backend), its family's case
//! (`crate::cases`) is prepared, reset and launched once untimed, reset again and launched
//! exactly once inside the NVTX range [`PROFILE_RANGE`], then verified.

use super::plan::{RunKernel, planned_backend, planned_kernel};
use super::{PROFILE_RANGE, WARMUP_RANGE};
use crate::cases::bump::Bump;
use crate::cases::faults::{self as fault_cases, FaultCase, Scale};
use crate::cases::reduce::{self, Reduce, ReduceElem};
use crate::cases::rows::{self as rows_cases, RowCase};
use crate::cases::stream::{FmaPeak, ReadStream};
use crate::cases::transpose::{self, Matrix};
use crate::cases::{Case, Verdict};
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use crate::launchers::rows::{Bf16, RowElem, op_schedule};
use crate::launchers::{Elem, LaunchConfig, stream::read_stream};
use crate::nvtx;
use crate::placement::ResultSlots;
use catalog::kernels::Pair;
use catalog::records::{Launched, Plan, Planned, Sizes};
use catalog::{Backend, Dtype, Family};
use cust::context::CurrentContext;
use cust::memory::DeviceBuffer;

/// `fma_peak`'s trips per thread in `lab run` (one launch: a fraction of a millisecond).
const FMA_ITERS: u32 = 64;

/// Host inputs and their device copies, made once per run and shared by every kernel that
/// reads them.
#[derive(Default)]
struct Inputs {
    f32s: Option<(Vec<f32>, DeviceBuffer<f32>)>,
    i32s: Option<(Vec<i32>, DeviceBuffer<i32>)>,
    matrix: Option<(Vec<f32>, DeviceBuffer<f32>)>,
    /// The last fault pair's inputs (the plan runs a pair's launches one after the other).
    fault_pair: Option<fault_cases::Inputs>,
    /// The row-wise family's `rows × cols` matrices and weights, per element type.
    rows_f32: Option<RowsInputs<f32>>,
    rows_bf16: Option<RowsInputs<Bf16>>,
}

/// A row-wise kernel's inputs on the host and the device (with an output), made once per run.
struct RowsInputs<T: RowElem> {
    host: rows_cases::Inputs<T>,
    device: rows_cases::Device<T>,
}

impl Inputs {
    /// The reductions' (and the read stream's) vector of `T`: n + offset elements, made once
    /// per run.
    fn vector<T: RunElem>(
        &mut self,
        sizes: Sizes,
        seed: u64,
    ) -> Result<&(Vec<T>, DeviceBuffer<T>)> {
        let slot = T::slot(self);
        if slot.is_none() {
            let len = (sizes.n + sizes.offset as u64) as usize;
            *slot = Some(upload(reduce::input::<T>(len, seed))?);
        }
        Ok(slot.as_ref().expect("filled above"))
    }

    /// The `rows × cols` matrix the transposes and the copy kernel read (made once per run),
    /// and an output of the same size.
    fn matrix(
        &mut self,
        sizes: Sizes,
        seed: u64,
    ) -> Result<(&[f32], &DeviceBuffer<f32>, DeviceBuffer<f32>)> {
        if self.matrix.is_none() {
            let n = sizes.rows as usize * sizes.cols as usize;
            self.matrix = Some(upload(transpose::input(n, seed ^ 0x7472_616e))?);
        }
        let (host, input) = self.matrix.as_ref().expect("filled above");
        let output = DeviceBuffer::<f32>::zeroed(host.len())
            .ctx(|| "allocating the output matrix".into())?;
        Ok((host, input, output))
    }
}

impl Inputs {
    /// Fault pair `p`'s inputs at their profiling size, made when the pair changes.
    fn fault_pair(&mut self, lab: &Lab, p: Pair, seed: u64) -> Result<&fault_cases::Inputs> {
        if self.fault_pair.as_ref().is_none_or(|i| i.pair != p) {
            // The previous pair's buffers go first: two pairs may not fit at once.
            self.fault_pair = None;
            self.fault_pair = Some(fault_cases::Inputs::new(lab, p, Scale::Profile, seed)?);
        }
        Ok(self.fault_pair.as_ref().expect("filled above"))
    }
}

/// The element types of the run's vectors, each with its place in [`Inputs`].
trait RunElem: ReduceElem {
    fn slot(inputs: &mut Inputs) -> &mut Option<(Vec<Self>, DeviceBuffer<Self>)>;
}

impl RunElem for f32 {
    fn slot(inputs: &mut Inputs) -> &mut Option<(Vec<f32>, DeviceBuffer<f32>)> {
        &mut inputs.f32s
    }
}

impl RunElem for i32 {
    fn slot(inputs: &mut Inputs) -> &mut Option<(Vec<i32>, DeviceBuffer<i32>)> {
        &mut inputs.i32s
    }
}

fn upload<T: Elem>(host: Vec<T>) -> Result<(Vec<T>, DeviceBuffer<T>)> {
    let dev = DeviceBuffer::from_slice(&host)
        .ctx(|| format!("uploading {} {} inputs", host.len(), T::DTYPE))?;
    Ok((host, dev))
}

/// Runs every planned launch (warm-up, reset, one profiled launch, verify), calling
/// `done` after each. Verification failures are reported in the results, not as errors.
/// The reductions add into `slots`' chosen word.
pub fn run(
    lab: &Lab,
    plan: &Plan,
    seed: u64,
    slots: &ResultSlots,
    mut done: impl FnMut(&Launched),
) -> Result<Vec<Launched>> {
    let mut inputs = Inputs::default();
    let mut out = Vec::new();
    for p in &plan.launches {
        let r = run_one(lab, p, plan.sizes, seed, &mut inputs, slots)?;
        done(&r);
        out.push(r);
    }
    Ok(out)
}

/// Reset, warm-up launch, reset, then exactly one launch inside [`PROFILE_RANGE`].
fn warm_then_profile(lab: &Lab, case: &impl Case) -> Result<()> {
    for profiled in [false, true] {
        case.reset()?;
        // A copy from pageable memory may still be in flight when it returns, and the lab's
        // stream does not wait for the legacy stream: wait for the whole context.
        CurrentContext::synchronize().ctx(|| "waiting for the reset".into())?;
        let _r = nvtx::range(if profiled {
            PROFILE_RANGE
        } else {
            WARMUP_RANGE
        });
        case.launch()?;
        lab.sync()?;
    }
    Ok(())
}

/// A launch's outcome: its configuration (None for the library call), whether the result was
/// right, and what was compared.
type Outcome = (Option<LaunchConfig>, bool, String);

fn outcome(case: &impl Case, v: Verdict) -> Outcome {
    (case.config(), v.is_ok(), v.unwrap_or_else(|e| e))
}

/// Warms `case` up, profiles one launch, then checks it with `verify`.
fn checked<C: Case>(
    lab: &Lab,
    case: C,
    verify: impl FnOnce(&C) -> Result<Verdict>,
) -> Result<Outcome> {
    warm_then_profile(lab, &case)?;
    let v = verify(&case)?;
    Ok(outcome(&case, v))
}

fn run_one(
    lab: &Lab,
    p: &Planned,
    sizes: Sizes,
    seed: u64,
    inputs: &mut Inputs,
    slots: &ResultSlots,
) -> Result<Launched> {
    let k = planned_kernel(p);
    // Only the library call has no backend, and its case does not read this.
    let backend = planned_backend(p).unwrap_or(Backend::Llvm);
    let (config, ok, check) = match k.kernel.family {
        Family::Reduce => match k.dtype {
            Dtype::F32 => reduce_once::<f32>(lab, backend, k, sizes, seed, inputs, slots)?,
            Dtype::I32 => reduce_once::<i32>(lab, backend, k, sizes, seed, inputs, slots)?,
            Dtype::U32 | Dtype::Bf16 => return Err(not_instantiated(k)),
        },
        Family::Rows => match k.dtype {
            Dtype::F32 => rows_once::<f32>(lab, backend, k, sizes, seed, &mut inputs.rows_f32)?,
            Dtype::Bf16 => rows_once::<Bf16>(lab, backend, k, sizes, seed, &mut inputs.rows_bf16)?,
            Dtype::I32 | Dtype::U32 => return Err(not_instantiated(k)),
        },
        Family::Transpose => {
            let (rows, cols) = (sizes.rows, sizes.cols);
            let (host, input, output) = inputs.matrix(sizes, seed)?;
            let dims = (rows, cols);
            let case = Matrix::kernel(
                lab,
                backend,
                k.kernel,
                input.index(..),
                output.index(..),
                dims,
            )?;
            warm_then_profile(lab, &case)?;
            let what = if case.transposes() {
                "the CPU transpose"
            } else {
                "the input"
            };
            let wrong = case.verify(&case.reference(host))?.wrong;
            let check = format!("{rows}×{cols}, {wrong} elements differ from {what}");
            (case.config(), wrong == 0, check)
        }
        Family::Ceiling if catalog::roofs::is_roof(k.kernel.name) => {
            roof_once(lab, backend, k, sizes, slots)?
        }
        Family::Ceiling if k.kernel.name == read_stream().name => {
            let (_, dev) = inputs.vector::<f32>(sizes, seed)?;
            checked(
                lab,
                ReadStream::new(lab, backend, dev.index(..sizes.n as usize))?,
                ReadStream::verify,
            )?
        }
        Family::Ceiling => checked(lab, FmaPeak::new(lab, backend, FMA_ITERS)?, FmaPeak::verify)?,
        Family::Faults => {
            let p = k.kernel.fault.expect("a fault kernel has its record").pair;
            let inputs = inputs.fault_pair(lab, p, seed)?;
            let case = FaultCase::new(lab, backend, k.kernel, inputs)?;
            let (config, ok, check) = checked(lab, case, FaultCase::verify)?;
            (config, ok, format!("{}: {check}", inputs.size_label()))
        }
        Family::LaunchGap => {
            let n = sizes.n as usize;
            let start = crate::cpu::random::f32s(n, seed ^ 0x6275_6d70);
            // The reset makes the check see exactly one launch: data = start + 1.
            let case = Bump::new(lab, backend, start)?;
            warm_then_profile(lab, &case)?;
            let wrong = case.verify(1)?.wrong;
            let check = format!("{wrong} of {n} elements are not start + 1");
            (case.config(), wrong == 0, check)
        }
    };
    Ok(Launched {
        planned: p.clone(),
        config,
        ok,
        check,
    })
}

/// A kernel planned in an element type the kernels are not instantiated for (the plan takes
/// the catalogue's types, so only a hand-made plan gets here).
fn not_instantiated(k: RunKernel) -> HostError {
    HostError::Invalid {
        what: "--kernel",
        detail: format!("{} has no {} instance", k.kernel.name, k.dtype),
    }
}

/// `shared_rw`'s trips per thread in `lab run` (a few microseconds).
const SHARED_TRIPS: u32 = 16;

/// One roof launch sized by `sizes`: `n` same-address `red`s of the kernel's element type (at
/// most 2^24, the most an f32 counts exactly) into `slots`' word, `n` spread `red`s (whole
/// blocks), `n` empty blocks, `n` trees alone, the naive transpose's stores and the tile-order
/// copy for `rows × cols`; the shared-memory roof's fixed waves.
fn roof_once(
    lab: &Lab,
    backend: Backend,
    k: RunKernel,
    sizes: Sizes,
    slots: &ResultSlots,
) -> Result<Outcome> {
    use crate::cases::roofs::{
        self, AtomicSame, AtomicSpread, EmptyBlocks, LoadWait, ScatterStore, SharedRw, TileCopy,
        TreeAlone,
    };
    use catalog::roofs as roof;
    let n = sizes.n;
    Ok(match k.kernel.name {
        roof::ATOMIC_SAME => {
            let reds = n.min(roofs::EXACT_COUNT_MAX);
            let (config, ok, check) = match k.dtype {
                Dtype::F32 => checked(
                    lab,
                    AtomicSame::new(lab, backend, slots.result::<f32>(), reds, 1)?,
                    AtomicSame::verify,
                )?,
                Dtype::I32 => checked(
                    lab,
                    AtomicSame::new(lab, backend, slots.result::<i32>(), reds, 1)?,
                    AtomicSame::verify,
                )?,
                Dtype::U32 | Dtype::Bf16 => return Err(not_instantiated(k)),
            };
            let capped = if reds < n { ", n capped at 2^24" } else { "" };
            (config, ok, format!("{reds} reds{capped}: {check}"))
        }
        roof::ATOMIC_SPREAD => {
            let lines = crate::bench::measure::roofs::SPREAD_LINES;
            checked(
                lab,
                AtomicSpread::new(lab, backend, n, lines)?,
                AtomicSpread::verify,
            )?
        }
        roof::SHARED_RW => checked(
            lab,
            SharedRw::new(lab, backend, SHARED_TRIPS)?,
            SharedRw::verify,
        )?,
        roof::EMPTY_BLOCKS => {
            checked(lab, EmptyBlocks::new(lab, backend, n)?, EmptyBlocks::verify)?
        }
        roof::SCATTER_STORE => checked(
            lab,
            ScatterStore::new(lab, backend, sizes.rows, sizes.cols)?,
            ScatterStore::verify,
        )?,
        name if roof::TREES.contains(&name) => {
            let t = catalog::kernels::Tree::ALL
                .into_iter()
                .find(|t| t.roof() == name)
                .expect("every tree roof is a catalogue tree");
            match k.dtype {
                Dtype::F32 => checked(
                    lab,
                    TreeAlone::<f32>::new(lab, backend, t, n, None)?,
                    TreeAlone::verify,
                )?,
                Dtype::I32 => checked(
                    lab,
                    TreeAlone::<i32>::new(lab, backend, t, n, None)?,
                    TreeAlone::verify,
                )?,
                Dtype::U32 | Dtype::Bf16 => return Err(not_instantiated(k)),
            }
        }
        roof::TILE_COPY => checked(
            lab,
            TileCopy::new(lab, backend, sizes.rows, sizes.cols)?,
            TileCopy::verify,
        )?,
        roof::LOAD_WAIT => checked(
            lab,
            LoadWait::new(
                lab,
                backend,
                n,
                crate::bench::measure::roofs::LOAD_WAIT_RESIDENT,
                true,
            )?,
            LoadWait::verify,
        )?,
        other => {
            return Err(crate::HostError::Invalid {
                what: "lab run",
                detail: format!("'{other}' is a roof lab run does not know how to launch"),
            });
        }
    })
}

/// One reduction (the lab's kernel, or the library call when `k` is one) over the run's
/// vector of `T`, from `sizes.offset` on.
fn reduce_once<T: RunElem>(
    lab: &Lab,
    backend: Backend,
    k: RunKernel,
    sizes: Sizes,
    seed: u64,
    inputs: &mut Inputs,
    slots: &ResultSlots,
) -> Result<Outcome> {
    let (host, dev) = inputs.vector::<T>(sizes, seed)?;
    let off = sizes.offset as usize;
    let case = Reduce::new(
        lab,
        k.kernel,
        backend,
        dev.index(off..),
        slots.result::<T>(),
    )?;
    warm_then_profile(lab, &case)?;
    Ok(outcome(
        &case,
        case.verify(&reduce::reference(&host[off..]), None)?,
    ))
}

/// One row-wise kernel over the run's `rows × cols` matrix of `T` (made once per run), checked
/// against the f64 reference within `T`'s tolerance.
fn rows_once<T: RowElem>(
    lab: &Lab,
    backend: Backend,
    k: RunKernel,
    sizes: Sizes,
    seed: u64,
    inputs: &mut Option<RowsInputs<T>>,
) -> Result<Outcome> {
    let (rows, cols) = (sizes.rows, sizes.cols);
    if inputs.is_none() {
        let host =
            rows_cases::Inputs::<T>::random(rows as usize, cols as usize, seed ^ 0x726f_7773);
        let device = rows_cases::Device::upload(lab, &host)?;
        *inputs = Some(RowsInputs { host, device });
    }
    let i = inputs.as_ref().expect("filled above");
    let (op, _) = op_schedule(k.kernel)?;
    let case = RowCase::new(
        lab,
        backend,
        k.kernel,
        i.device.inputs(),
        i.device.y.index(..),
        rows,
        cols,
    )?;
    warm_then_profile(lab, &case)?;
    let v = case.verify(&i.host.reference(op, cols as usize))?;
    let (config, ok, check) = outcome(&case, v);
    Ok((config, ok, format!("{rows}×{cols} {}: {check}", T::DTYPE)))
}
