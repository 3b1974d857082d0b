//! The fault catalogue's cases: one pair's inputs ([`Inputs`], made once for both twins and
//! every backend: random, seeded, never zeros), and each kernel's launch on them
//! ([`FaultCase`]: its outputs, poisoned before every launch, and the check against the CPU
//! references of `crate::cpu::faults`).
//!
//! Checks: integer results exactly; the memory-bound and undersized pairs' f32 results bit for
//! bit (`fma.rn` is what `f32::mul_add` computes); the tail pair's sums exactly (with `a = 1`
//! and an integer `b` every value is an integer below 2^24); the GEMMs against an f64 reference within
//! the recursive-summation bound (k · 2^-24 · Σ|a·b|); the sines within 5·10⁻⁴ (32 terms of
//! `sin.approx`'s 2^-20.5, or of the recurrence's error, which grows with k², plus the
//! rounding of the sum). At [`Scale::Profile`] the outputs too costly to reference whole (the
//! GEMM, the occupancy chase, the two paths, the spill pair's words, the sines) are checked on
//! an even sample of 4096 (whole warps for the chase), stated in the check's note; at
//! [`Scale::Test`] every element.

mod inputs;

pub use inputs::{Inputs, Scale};

use super::verify::Verdict;
use super::{Case, POISON_BITS, fill};
use crate::cpu::faults as reference;
use crate::error::{Ctx, Result};
use crate::lab::Lab;
use crate::launchers::LaunchConfig;
use crate::launchers::faults::fault_of;
use catalog::kernels::{Fault, Pair};
use catalog::launch::faults::{
    BLOCK, L2_EXCEEDS_LOG2, L2_FITS_LOG2, LINE_WORDS, SEGMENT, UNIT_CHAINS, UNIT_STEPS,
};
use catalog::{Backend, Kernel};
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy};
use inputs::Data;

/// Output elements a check references at most, where referencing all of them costs too much.
const SAMPLE: usize = 4096;
/// The tail pair's `a` in `x = x · a + b`: 1, so that with an integer `b` every chain stays an
/// exact integer (the kernel cannot tell: `a` is a run-time argument).
const UNIT_A: f32 = 1.0;

/// The sines' bound (see the module doc).
pub const SINE_TOLERANCE: f64 = 5e-4;

/// A fault kernel's outputs: typed as its launcher takes them.
enum Outputs {
    F32(DeviceBuffer<f32>),
    U32(DeviceBuffer<u32>),
    I32(DeviceBuffer<i32>),
    /// The two-pass control: the intermediate `t`, then `y`.
    Passes(DeviceBuffer<f32>, DeviceBuffer<f32>),
}

fn buffer<T: DeviceCopy>(n: usize) -> Result<DeviceBuffer<T>> {
    // SAFETY: every output is poisoned (reset) before each launch, and read only after one.
    unsafe { DeviceBuffer::uninitialized(n) }.ctx(|| format!("allocating {n} outputs"))
}

/// One fault kernel on one backend, on a pair's [`Inputs`], ready to launch.
pub struct FaultCase<'a> {
    lab: &'a Lab,
    pub kernel: &'static Kernel,
    pub backend: Backend,
    fault: Fault,
    config: LaunchConfig,
    inputs: &'a Inputs,
    out: Outputs,
    /// The tail pair's units (from the fault's 1.15-wave grid on this backend).
    units: u32,
}

impl<'a> FaultCase<'a> {
    /// `kernel` (of `inputs`' pair) on `backend`.
    pub fn new(
        lab: &'a Lab,
        backend: Backend,
        kernel: &'static Kernel,
        inputs: &'a Inputs,
    ) -> Result<Self> {
        let fault = fault_of(kernel, inputs.pair)?;
        let mut units = 0;
        let (config, out) = match &inputs.data {
            Data::Gemm {
                dims: (m, n, _), ..
            } => (
                lab.gemm_config(kernel, *m, *n)?,
                Outputs::F32(buffer(*m as usize * *n as usize)?),
            ),
            Data::Strided { n, .. } => (
                lab.fault_config(backend, kernel, *n as u64)?,
                Outputs::F32(buffer(*n)?),
            ),
            Data::Lines { threads, .. } => (
                lab.fault_config(backend, kernel, *threads as u64)?,
                Outputs::U32(buffer(*threads)?),
            ),
            Data::Tiles { x, .. } => (
                lab.fault_config(backend, kernel, x.len() as u64)?,
                Outputs::U32(buffer(x.len() / 32)?),
            ),
            Data::Units { .. } => {
                units = lab.tail_units(backend)?;
                (
                    lab.fault_config(backend, kernel, 0)?,
                    Outputs::F32(buffer(units as usize * BLOCK as usize)?),
                )
            }
            Data::Vector { x, steps, .. } => {
                let cfg = lab.fault_config(backend, kernel, x.len() as u64)?;
                let out = if steps.len() == 2 && !fault.fixed {
                    Outputs::Passes(buffer(x.len())?, buffer(x.len())?)
                } else {
                    Outputs::F32(buffer(x.len())?)
                };
                (cfg, out)
            }
            Data::Seeds { seeds, .. } => (
                lab.fault_config(backend, kernel, seeds.len() as u64)?,
                Outputs::U32(buffer(seeds.len())?),
            ),
            Data::Words { x, .. } => (
                lab.fault_config(backend, kernel, x.len() as u64)?,
                Outputs::U32(buffer(x.len() / 64)?),
            ),
            Data::Stream { x, .. } => {
                let cfg = lab.fault_config(backend, kernel, x.len() as u64)?;
                let threads = cfg.grid.0 as usize * cfg.block.0 as usize;
                (cfg, Outputs::U32(buffer(threads)?))
            }
            Data::Ints { x, .. } => (
                lab.fault_config(backend, kernel, x.len() as u64)?,
                Outputs::I32(buffer(x.len() / SEGMENT as usize)?),
            ),
        };
        Ok(FaultCase {
            lab,
            kernel,
            backend,
            fault,
            config,
            inputs,
            out,
            units,
        })
    }

    /// The bytes a launch must move at least, the same for both twins of a pair (the
    /// operation's inputs read once and outputs written once; the memory-bound control's
    /// `x → y`, whichever way it is done), and the floating-point operations of the GEMM and
    /// the tail pair's chains.
    pub fn work(&self) -> (u64, u64) {
        let bytes = match (&self.inputs.data, &self.out) {
            (
                Data::Gemm {
                    dims: (m, n, k), ..
                },
                _,
            ) => {
                let (m, n, k) = (*m as u64, *n as u64, *k as u64);
                return (4 * (m * k + n * k + m * n), 2 * m * n * k);
            }
            (Data::Strided { n, .. }, _) => 8 * *n as u64,
            (Data::Lines { threads, steps, .. }, _) => 32 * *threads as u64 * *steps as u64,
            (Data::Stream { reads, .. }, _) if *reads > 0 => 16 * reads,
            (Data::Vector { x, .. }, _) => 8 * x.len() as u64,
            (Data::Tiles { x, .. }, _)
            | (Data::Words { x, .. }, _)
            | (Data::Stream { x, .. }, _) => 4 * x.len() as u64,
            (Data::Units { .. }, _) => {
                let threads = self.units as u64 * BLOCK as u64;
                return (4 * threads, 2 * threads * (UNIT_CHAINS * UNIT_STEPS) as u64);
            }
            (Data::Seeds { seeds, .. }, _) => 8 * seeds.len() as u64,
            (Data::Ints { x, .. }, _) => 4 * x.len() as u64 + 4 * x.len() as u64 / SEGMENT as u64,
        };
        (bytes, 0)
    }

    /// Checks the last launch's output against the CPU reference. The stream must be idle.
    pub fn verify(&self) -> Result<Verdict> {
        let all = self.inputs.scale == Scale::Test;
        let sample = |n: usize| reference::sample(n, if all { n } else { SAMPLE });
        Ok(match (&self.inputs.data, &self.out) {
            (
                Data::Gemm {
                    dims: (_, n, k),
                    a,
                    b,
                    ..
                },
                Outputs::F32(c),
            ) => {
                let got = read(c)?;
                let (n, k) = (*n as usize, *k as usize);
                let mut worst = 0f64;
                let mut checked = 0;
                for e in sample(got.len()) {
                    let (want, abs) = reference::gemm_element(a, b, k, e / n, e % n);
                    let tol = k as f64 * f32::EPSILON as f64 / 2.0 * abs;
                    let err = (got[e] as f64 - want).abs();
                    if err.is_nan() || err > tol {
                        return Ok(Err(format!(
                            "C[{}][{}] = {} but the f64 reference is {want} (|error| {err:.3e} > {tol:.3e})",
                            e / n,
                            e % n,
                            got[e]
                        )));
                    }
                    worst = worst.max(err / abs.max(f64::MIN_POSITIVE));
                    checked += 1;
                }
                Ok(format!(
                    "{checked} of {} elements within k·2^-24·Σ|ab|, worst {worst:.1e} of Σ|ab|",
                    got.len()
                ))
            }
            (Data::Strided { x, n, .. }, Outputs::F32(out)) => {
                let stride = if self.fault.fixed {
                    1
                } else {
                    catalog::launch::faults::STRIDE
                };
                let mask = x.len() - 1;
                let want: Vec<f32> = (0..*n).map(|i| x[(i * stride as usize) & mask]).collect();
                bits_equal(&read(out)?, &want, |v| v.to_bits())
            }
            (
                Data::Lines {
                    table,
                    threads,
                    steps,
                    ..
                },
                Outputs::U32(out),
            ) => {
                let live = if self.fault.fixed {
                    catalog::launch::faults::LIVE_FIXED
                } else {
                    catalog::launch::faults::LIVE_FAULT
                };
                let mask = (table.len() / LINE_WORDS as usize - 1) as u32;
                let got = read(out)?;
                // Whole warps: as many as make the sample's elements, every lane of each.
                let warps = *threads / 32;
                let mut checked = 0;
                for w in reference::sample(warps, if all { warps } else { SAMPLE / 32 }) {
                    let want = reference::chase_live(table, mask, *steps, live as usize, w as u64);
                    if let Err(e) = bits_equal(&got[32 * w..32 * w + 32], &want, |v| v) {
                        return Ok(Err(format!("warp {w}: {e}")));
                    }
                    checked += 32;
                }
                Ok(format!(
                    "{checked} of {} elements (whole warps) exact",
                    got.len()
                ))
            }
            (Data::Tiles { x, reps, .. }, Outputs::U32(out)) => {
                let got = read(out)?;
                exact_at(&got, 0..got.len(), |t| {
                    reference::column_reads(x, *reps, t as u64)
                })
            }
            (Data::Units { seed, b: step }, Outputs::F32(out)) => {
                let b = BLOCK as usize;
                let want: Vec<f32> = (0..self.units as usize * b)
                    .map(|i| reference::fma_unit(*seed, *step, (i / b) as u32, (i % b) as u32))
                    .collect();
                bits_equal(&read(out)?, &want, |v| v.to_bits())
            }
            (Data::Vector { x, steps, .. }, out) if !steps.is_empty() => {
                let y = match out {
                    Outputs::F32(y) | Outputs::Passes(_, y) => read(y)?,
                    _ => unreachable!("the f32 pairs' outputs are f32"),
                };
                let want: Vec<f32> = x
                    .iter()
                    .map(|&v| steps.iter().fold(v, |t, &(a, b)| t.mul_add(a, b)))
                    .collect();
                bits_equal(&y, &want, |v| v.to_bits())
            }
            (Data::Vector { x, .. }, Outputs::F32(out)) => {
                let got = read(out)?;
                let mut worst = 0f64;
                let mut checked = 0;
                for i in sample(got.len()) {
                    let want = reference::sines(x[i]);
                    let err = (got[i] as f64 - want).abs();
                    if err.is_nan() || err > SINE_TOLERANCE {
                        return Ok(Err(format!(
                            "out[{i}] = {} but the f64 reference is {want} (|error| {err:.2e} > {SINE_TOLERANCE:.0e})",
                            got[i]
                        )));
                    }
                    worst = worst.max(err);
                    checked += 1;
                }
                Ok(format!(
                    "{checked} of {} elements within {SINE_TOLERANCE:.0e}, worst {worst:.1e}",
                    got.len()
                ))
            }
            (Data::Seeds { seeds, steps, .. }, Outputs::U32(out)) => {
                let got = read(out)?;
                let per_warp = self.fault.fixed;
                exact_at(&got, sample(got.len()), |t| {
                    let tid = (t % BLOCK as usize) as u64;
                    let pick = if per_warp { tid / 32 } else { tid };
                    reference::two_paths(seeds[t], *steps, pick)
                })
            }
            (Data::Words { x, shift, .. }, Outputs::U32(out)) => {
                let got = read(out)?;
                let shift = if self.fault.fixed { 0 } else { *shift };
                let threads = got.len() as u64;
                exact_at(&got, sample(got.len()), |t| {
                    reference::words_array(x, threads, shift, t as u64)
                })
            }
            (Data::Stream { x, reads: 0, .. }, Outputs::U32(out)) => {
                let grid = self.config.grid.0;
                let want: Vec<u32> = (0..grid)
                    .flat_map(|b| reference::staged_block(x, grid, b))
                    .collect();
                bits_equal(&read(out)?, &want, |v| v)
            }
            (Data::Stream { groups, reads, .. }, Outputs::U32(out)) => {
                let got = read(out)?;
                let set = if self.fault.fixed {
                    L2_EXCEEDS_LOG2
                } else {
                    L2_FITS_LOG2
                };
                let want = reference::reread(groups, (1 << set) - 1, *reads, got.len() as u64);
                bits_equal(&got, &want, |v| v)
            }
            (Data::Ints { x, .. }, Outputs::I32(out)) => {
                bits_equal(&read(out)?, &reference::segment_sums(x), |v| v as u32)
            }
            _ => unreachable!("every pair's case makes its own outputs"),
        })
    }
}

/// Copies a device buffer back.
fn read<T: DeviceCopy + Default + Clone>(buf: &DeviceBuffer<T>) -> Result<Vec<T>> {
    let mut v = vec![T::default(); buf.len()];
    buf.copy_to(&mut v[..])
        .ctx(|| "reading the output back".into())?;
    Ok(v)
}

/// Every element bit for bit.
fn bits_equal<T: Copy + std::fmt::Debug>(
    got: &[T],
    want: &[T],
    bits: impl Fn(T) -> u32,
) -> Verdict {
    if got.len() != want.len() {
        return Err(format!("{} outputs, {} expected", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(&g, &w)| bits(g) != bits(w)) {
        None => Ok(format!("all {} elements exact", got.len())),
        Some(i) => Err(format!(
            "element {i} of {} is {:?}, expected {:?}",
            got.len(),
            got[i],
            want[i]
        )),
    }
}

/// The elements at `at`, each exactly `want(index)`.
fn exact_at(got: &[u32], at: impl Iterator<Item = usize>, want: impl Fn(usize) -> u32) -> Verdict {
    let mut checked = 0;
    for i in at {
        let w = want(i);
        if got[i] != w {
            return Err(format!(
                "element {i} of {} is {:#010x}, expected {w:#010x}",
                got.len(),
                got[i]
            ));
        }
        checked += 1;
    }
    Ok(if checked == got.len() {
        format!("all {checked} elements exact")
    } else {
        format!("{checked} of {} elements (an even sample) exact", got.len())
    })
}

impl Case for FaultCase<'_> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        let lab = self.lab;
        match &self.out {
            Outputs::F32(b) => fill(lab, &**b, POISON_BITS, "the output"),
            Outputs::U32(b) => fill(lab, &**b, POISON_BITS, "the output"),
            Outputs::I32(b) => fill(lab, &**b, POISON_BITS, "the output"),
            Outputs::Passes(t, y) => {
                fill(lab, &**t, POISON_BITS, "the intermediate")?;
                fill(lab, &**y, POISON_BITS, "the output")
            }
        }
    }

    fn launch(&self) -> Result<()> {
        let (lab, b, k, s) = (self.lab, self.backend, self.kernel, &self.lab.stream);
        match (&self.inputs.data, &self.out) {
            (
                Data::Gemm {
                    dims,
                    a32,
                    b32,
                    a16,
                    b16,
                    ..
                },
                Outputs::F32(c),
            ) => {
                if self.fault.fixed {
                    lab.launch_gemm(b, k, a16, b16, c, *dims, s)
                } else {
                    lab.launch_gemm(b, k, a32, b32, c, *dims, s)
                }
            }
            (Data::Strided { dev, .. }, Outputs::F32(out)) => {
                lab.launch_strided_copy(b, k, dev, out, s)
            }
            (Data::Lines { dev, steps, .. }, Outputs::U32(out)) => {
                lab.launch_chase_live(b, k, dev, *steps, out, s)
            }
            (Data::Tiles { dev, reps, .. }, Outputs::U32(out)) => {
                lab.launch_column_reads(b, k, dev, *reps, out, s)
            }
            (Data::Units { seed, b: step }, Outputs::F32(out)) => {
                lab.launch_fma_units(b, k, *seed, (UNIT_A, *step), self.units, out, s)
            }
            (Data::Vector { dev, steps, .. }, Outputs::Passes(t, y)) => {
                lab.launch_fma_passes(b, k, dev, t, &steps[..1], s)?;
                lab.launch_fma_passes(b, k, t, y, &steps[1..], s)
            }
            (Data::Vector { dev, steps, .. }, Outputs::F32(out)) => match self.inputs.pair {
                Pair::MemoryBound => lab.launch_fma_passes(b, k, dev, out, steps, s),
                Pair::UndersizedGrid => lab.launch_fma_grid_stride(b, k, dev, out, steps[0], s),
                _ => lab.launch_sines(b, k, dev, out, s),
            },
            (Data::Seeds { dev, steps, .. }, Outputs::U32(out)) => {
                lab.launch_two_paths(b, k, dev, *steps, out, s)
            }
            (Data::Words { dev, shift, .. }, Outputs::U32(out)) => {
                let shift = (!self.fault.fixed).then_some(*shift);
                lab.launch_words_array(b, k, dev, shift, out, s)
            }
            (Data::Stream { dev, reads: 0, .. }, Outputs::U32(out)) => {
                lab.launch_staged_sum(b, k, dev, out, s)
            }
            (Data::Stream { dev, reads, .. }, Outputs::U32(out)) => {
                lab.launch_reread(b, k, dev, *reads, out, s)
            }
            (Data::Ints { dev, .. }, Outputs::I32(out)) => {
                lab.launch_segment_sums(b, k, dev, out, s)
            }
            _ => unreachable!("every pair's case makes its own outputs"),
        }
    }
}
