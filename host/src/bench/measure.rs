//! The measurements, in the order they run: the compute ceiling (FP32 FMA peak, once), then
//! for each size the bandwidth ceilings (read stream, D2D copy), then the reductions and CUB;
//! the transposes after their own copy; the launch gap last. Every phase sits in an NVTX range named after its row
//! (`reduce_v6 [llvm] f32 2^28: warm-up` / `: timed` / `: verify`).
//!
//! Each row: reset (outside the timed region) → warm-up → timed launches (one event pair
//! each) → verify the last launch's output (and an f32 sum's on an exact-sum input, one more
//! launch). A wrong result or a driver error fails that row and the run goes on.

use super::args::{Dtype, Plan, Section};
use super::cub::{self, CubElem, CubSum};
use super::progress::{self, Progress};
use super::report::{Row, target};
use super::size;
use super::verify::{self, Checked};
use crate::cpu;
use crate::error::{Ctx, Result};
use crate::ffi::Graph;
use crate::lab::Lab;
use crate::launchers::{self, Elem, addition_depth};
use crate::nvtx::range;
use crate::placement::{Placement, ResultSlots};
use crate::timing::{Samples, time_launches};
use catalog::{Backend, Kernel};
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceSlice};
use std::time::Instant;

/// The launch-gap demo: this many `bump` launches of `BUMP_N` floats per sample.
pub const LAUNCHES: u32 = 1000;
pub const BUMP_N: usize = 4096;
/// Passed to `read_stream_f32`: the inputs are floats in [0, 1), whose sign bits are all
/// clear, so no XOR of them has the sign bit set and the kernel never stores.
const STREAM_SENTINEL: u32 = 0xffff_ffff;
/// Written over outputs before each launch: a NaN, never a transposed or copied input.
const POISON_BITS: u32 = 0xffff_ffff;
/// Outer-loop trips per thread of `fma_peak_f32`: 2048 × 16 steps × 8 chains = 2^18 FMAs per
/// thread, a few ms per launch on an H200 (long enough for events to time well).
pub const FMA_ITERS: u32 = 2048;

/// Where the rows go while the run goes on.
pub struct Bench<'a> {
    lab: &'a Lab,
    plan: &'a Plan,
    progress: Progress,
    pub rows: Vec<Row>,
    /// Where the reductions' result word was (set when a reduction ran).
    pub placement: Option<Placement>,
}

/// A verification verdict: a note for the table, or the error that fails the row.
type Verdict = std::result::Result<String, String>;

impl<'a> Bench<'a> {
    /// `quiet`: no progress bar and no per-row lines on stderr.
    pub fn new(lab: &'a Lab, plan: &'a Plan, quiet: bool) -> Bench<'a> {
        let mut bench = Bench {
            lab,
            plan,
            progress: Progress::new(0, 0, true),
            rows: Vec::new(),
            placement: None,
        };
        let (rows, work) = bench.planned();
        bench.progress = Progress::new(rows, work, quiet);
        bench
    }

    /// The rows, once every phase has run (the progress bar is cleared).
    pub fn finish(self) -> Vec<Row> {
        self.progress.finish();
        self.rows
    }

    fn record(&mut self, row: Row) {
        let what = match (row.status, row.gbps, row.gflops, row.median_us) {
            (super::report::Status::Failed, ..) => format!("FAILED: {}", row.note),
            (super::report::Status::Skipped, ..) => format!("skipped: {}", row.note),
            (_, Some(g), _, Some(us)) => format!("{g:.0} GB/s ({us:.1} us)"),
            (_, None, Some(f), Some(us)) => format!("{f:.0} GFLOP/s ({us:.1} us)"),
            (_, None, None, Some(us)) => format!("{us:.1} us"),
            _ => String::new(),
        };
        let samples = self.plan.warmup + self.plan.reps;
        let w = progress::weight(row.bytes, row.flops, row.launches, samples);
        self.progress
            .row_done(&format!("bench: {:<44} {what}", row.label()), w);
        self.rows.push(row);
    }

    /// The rows the phases will record and their total weight (see [`progress::weight`]),
    /// for the progress bar. Mirrors the phases' own choices of what to run.
    fn planned(&self) -> (u64, u64) {
        let p = self.plan;
        let samples = p.warmup + p.reps;
        let nb = p.backends.len() as u64;
        let (mut rows, mut work) = (0u64, 0u64);
        let mut add = |count: u64, bytes: u64, flops: u64, launches: u32| {
            rows += count;
            work += count * progress::weight(bytes, flops, launches, samples);
        };
        if self.wants_fma_peak() {
            for &b in &p.backends {
                add(1, 0, self.lab.fma_peak_flops(b, FMA_ITERS).unwrap_or(0), 1);
            }
        }
        let wants_reduce = self.wants_reduce();
        if self.wants_bandwidth_ceilings() {
            let pairs = launchers::reductions()
                .filter(|v| p.wants(v.name))
                .map(|v| p.backends.iter().filter(|&&b| v.carried_by(b)).count())
                .sum::<usize>() as u64;
            for &n in &p.sizes {
                add(nb, 4 * n, 0, 1);
                add(1, 8 * n, 0, 1);
                if wants_reduce {
                    add(p.dtypes.len() as u64 * (pairs + 1), 4 * n, n, 1);
                }
            }
        }
        let pairs = launchers::transposes()
            .filter(|v| p.wants(v.name))
            .map(|v| p.backends.iter().filter(|&&b| v.carried_by(b)).count())
            .sum::<usize>() as u64;
        if pairs > 0 {
            for &edge in &p.transpose {
                add(1 + nb + pairs, 8 * edge * edge, 0, 1);
            }
        }
        if p.wants("bump") {
            add(3 * nb, 0, 0, LAUNCHES);
            add(nb, 0, 0, 1);
        }
        (rows, work)
    }

    /// Warm-up, then the timed launches, each in its NVTX range.
    fn time(
        &self,
        label: &str,
        mut reset: impl FnMut() -> Result<()>,
        mut launch: impl FnMut() -> Result<()>,
    ) -> Result<Samples> {
        {
            let _r = range(&format!("{label}: warm-up"));
            for _ in 0..self.plan.warmup {
                reset()?;
                launch()?;
            }
            self.lab.sync()?;
        }
        let _r = range(&format!("{label}: timed"));
        time_launches(
            &self.lab.stream,
            0,
            self.plan.reps as usize,
            &mut reset,
            &mut launch,
        )
    }

    /// Times `launch`, verifies its last output and records the row.
    fn measure(
        &mut self,
        row: Row,
        reset: impl FnMut() -> Result<()>,
        launch: impl FnMut() -> Result<()>,
        verify: impl FnOnce() -> Result<Verdict>,
    ) {
        let label = row.label();
        self.progress.working_on(&label);
        let outcome = self.time(&label, reset, launch).and_then(|s| {
            let _r = range(&format!("{label}: verify"));
            Ok((s, verify()?))
        });
        self.record(match outcome {
            Ok((s, Ok(note))) => row.passed(&s, note),
            Ok((_, Err(wrong))) => row.failed(wrong),
            Err(e) => row.failed(e.to_string()),
        });
    }

    fn wants_reduce(&self) -> bool {
        launchers::reductions().any(|v| self.plan.wants(v.name))
            || self.plan.wants(launchers::library_reduction().name)
    }

    /// The read stream and the copy run whenever a reduction does (they are its ceilings).
    fn wants_bandwidth_ceilings(&self) -> bool {
        self.wants_reduce() || self.plan.wants(launchers::stream::read_stream().name)
    }

    /// The FMA peak runs whenever a reduction does (the roofline's compute roof).
    fn wants_fma_peak(&self) -> bool {
        self.wants_reduce() || self.plan.wants(launchers::stream::fma_peak().name)
    }

    // -----------------------------------------------------------------------------------------

    /// The compute ceiling: `fma_peak_f32` on each backend (independent FMA chains, no memory
    /// traffic), as GFLOP/s. The roofline's compute roof; the best backend's row counts.
    pub fn compute_ceiling(&mut self) -> Result<()> {
        let (lab, plan) = (self.lab, self.plan);
        if !self.wants_fma_peak() {
            return Ok(());
        }
        let out = DeviceBuffer::<f32>::zeroed(1).ctx(|| "allocating the FMA output".into())?;
        for &b in &plan.backends {
            let shape = lab
                .fma_peak_config(b)
                .and_then(|cfg| Ok((cfg, lab.fma_peak_flops(b, FMA_ITERS)?)));
            let (cfg, flops) = match shape {
                Ok(s) => s,
                Err(e) => {
                    let row = Row::new(
                        Section::Ceiling,
                        "fma_peak",
                        b.name(),
                        "f32",
                        0,
                        "-".into(),
                        0,
                    );
                    self.record(row.failed(e.to_string()));
                    continue;
                }
            };
            let threads = cfg.grid.0 as u64 * cfg.block.0 as u64;
            let row = Row::new(
                Section::Ceiling,
                "fma_peak",
                b.name(),
                "f32",
                threads,
                format!("{}x{}", cfg.grid.0, cfg.block.0),
                0,
            )
            .with_flops(flops)
            .with_note(&format!(
                "{} x {} x {FMA_ITERS} fma.rn.f32 per thread",
                catalog::launch::stream::FMA_CHAINS,
                catalog::launch::stream::FMA_UNROLL
            ));
            self.measure(
                row,
                || {
                    // SAFETY: a stream-ordered memset of a live buffer that outlives the queue.
                    unsafe { out.index(..).set_32_async(0, &lab.stream) }
                        .ctx(|| "zeroing the FMA output".into())
                },
                || lab.launch_fma_peak(b, FMA_ITERS, &out, &lab.stream),
                || {
                    let mut got = [1f32];
                    out.copy_to(&mut got[..])
                        .ctx(|| "reading the FMA output".into())?;
                    Ok(if got[0] == 0.0 {
                        Ok("no store".into())
                    } else {
                        Err(format!(
                            "the kernel stored {}: a chain sum matched the sentinel",
                            got[0]
                        ))
                    })
                },
            );
        }
        Ok(())
    }

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
        let floats = f32::random(max, p.seed);
        let f32_dev = self.lab.upload(&floats)?;
        let ints_host = if ints {
            i32::random(max, p.seed + 1)
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
                self.reduce::<f32>(&f32_dev.index(..n), &floats[..n], Some(exact), &slots);
            }
            if let Some(dev) = &i32_dev {
                self.reduce::<i32>(&dev.index(..n), &ints_host[..n], None, &slots);
            }
        }
        Ok(())
    }

    /// The read ceiling (per backend: the best counts) and the D2D copy of `n` floats.
    fn ceilings(
        &mut self,
        n: usize,
        f32_dev: &DeviceSlice<f32>,
        host: &[f32],
        dst: &DeviceSlice<f32>,
    ) -> Result<()> {
        let (lab, plan) = (self.lab, self.plan);
        let size = size::label(n as u64);
        let input = f32_dev.index(..n);
        let flag = DeviceBuffer::<u32>::zeroed(1).ctx(|| "allocating a flag".into())?;
        for &b in &plan.backends {
            let row = Row::new(
                Section::Ceiling,
                "read_stream",
                b.name(),
                "f32",
                n as u64,
                size.clone(),
                n as u64 * 4,
            );
            self.measure(
                row,
                || {
                    // SAFETY: a stream-ordered memset of a live buffer that outlives the queue.
                    unsafe { flag.index(..).set_32_async(0, &lab.stream) }
                        .ctx(|| "zeroing the flag".into())
                },
                || lab.launch_read_stream(b, &input, STREAM_SENTINEL, &flag, &lab.stream),
                || {
                    let mut got = [1u32];
                    flag.copy_to(&mut got[..])
                        .ctx(|| "reading the flag".into())?;
                    Ok(if got[0] == 0 {
                        Ok("read only (no store)".into())
                    } else {
                        Err("the kernel stored: a thread's fold matched the sentinel".into())
                    })
                },
            );
        }

        let row = Row::new(
            Section::Ceiling,
            "d2d_copy",
            "driver",
            "f32",
            n as u64,
            size,
            n as u64 * 8,
        );
        self.copy_row(row, &input, &dst.index(..n), &host[..n], None);
        Ok(())
    }

    /// A `cuMemcpyDtoDAsync` of `src` into `dst` (the same length), verified against `host`.
    /// A copy of `src` into `dst`: the driver's D2D copy (`via` None) or the lab's
    /// `copy_stream_f32` kernel compiled by `via`.
    fn copy_row(
        &mut self,
        row: Row,
        src: &DeviceSlice<f32>,
        dst: &DeviceSlice<f32>,
        host: &[f32],
        via: Option<Backend>,
    ) {
        let lab = self.lab;
        self.measure(
            row,
            || {
                // SAFETY: a stream-ordered memset of a live buffer that outlives the queue.
                unsafe { dst.index(..).set_32_async(POISON_BITS, &lab.stream) }
                    .ctx(|| "poisoning the copy destination".into())
            },
            || match via {
                Some(b) => lab.launch_copy_stream(b, src, dst, &lab.stream),
                // SAFETY: both are live device allocations of the same length (the caller's
                // slices), on the lab's stream; `measure` synchronizes before they are dropped.
                None => unsafe { dst.index(..).async_copy_from(src, &lab.stream) }
                    .ctx(|| "cuMemcpyDtoDAsync".into()),
            },
            || {
                let mut got = vec![0f32; dst.len()];
                dst.copy_to(&mut got[..])
                    .ctx(|| "reading the copy back".into())?;
                Ok(verify::check_equal(&got, host, "copy"))
            },
        );
    }

    /// Every version on every backend, then CUB, on `input` (its CPU copy `host`); each row
    /// checked on `exact` too when given.
    fn reduce<T: Elem + Checked + CubElem>(
        &mut self,
        input: &DeviceSlice<T>,
        host: &[T],
        exact: Option<ExactInput<'_, T>>,
        slots: &ResultSlots,
    ) {
        let (lab, plan) = (self.lab, self.plan);
        let n = input.len() as u64;
        let size = size::label(n);
        let reference = {
            let what = format!("setup: CPU reference, {} {size}", T::NAME);
            self.progress.working_on(&what);
            let _r = range(&what);
            T::reference(host)
        };
        let ceiling = Some(target("read_stream", "f32", &size));
        let cub = launchers::library_reduction().name;
        let cub_target = Some(target(cub, T::NAME, &size));
        let bytes = n * std::mem::size_of::<T>() as u64;
        // n − 1 additions; only float adds count as FLOPs (the roofline's y axis).
        let flops = if T::NAME == "f32" {
            n.saturating_sub(1)
        } else {
            0
        };
        let out = slots.result::<T>();
        let versions: Vec<&Kernel> = launchers::reductions()
            .filter(|v| plan.wants(v.name))
            .collect();
        for v in versions {
            for &b in plan.backends.iter().filter(|&&b| v.carried_by(b)) {
                let row = Row::new(
                    Section::Reduce,
                    v.name,
                    b.name(),
                    T::NAME,
                    n,
                    size.clone(),
                    bytes,
                )
                .with_flops(flops)
                .compared_with(ceiling.clone(), cub_target.clone());
                let depth = match lab.reduce_config::<T>(b, v, n) {
                    Ok(cfg) => addition_depth(v, n, cfg.grid.0 as u64),
                    Err(e) => {
                        self.record(row.failed(e.to_string()));
                        continue;
                    }
                };
                self.measure(
                    row,
                    || set_one(&out, T::default(), lab),
                    || lab.launch_reduce(b, v, input, &out, &lab.stream),
                    || {
                        let timed = T::check(read_one(&out)?, &reference, depth);
                        let on_exact = |x: &DeviceSlice<T>| {
                            set_one(&out, T::default(), lab)?;
                            lab.launch_reduce(b, v, x, &out, &lab.stream)
                        };
                        also_exact(timed, exact.as_ref(), lab, &out, on_exact)
                    },
                );
            }
        }
        // CUB: always, when any reduction ran (it is their reference).
        let row = Row::new(Section::Reduce, cub, "cub", T::NAME, n, size, bytes)
            .with_flops(flops)
            .compared_with(ceiling, None);
        if let Some(why) = cub::unavailable() {
            return self.record(row.skipped(why));
        }
        let sum = match CubSum::<T>::new(n) {
            Ok(s) => s,
            Err(e) => return self.record(row.failed(e.to_string())),
        };
        let depth = verify::cub_depth(n, lab.info.sm_count);
        self.measure(
            row,
            || set_one(&out, T::poison(), lab),
            || sum.launch(input, &out, &lab.stream),
            || {
                let timed = T::check(read_one(&out)?, &reference, depth);
                let on_exact = |x: &DeviceSlice<T>| {
                    set_one(&out, T::poison(), lab)?;
                    sum.launch(x, &out, &lab.stream)
                };
                also_exact(timed, exact.as_ref(), lab, &out, on_exact)
            },
        );
    }

    // -----------------------------------------------------------------------------------------

    /// Naive, tiled and padded at each edge, after a D2D copy of the same bytes (their ceiling).
    pub fn transposes(&mut self) -> Result<()> {
        let (lab, plan) = (self.lab, self.plan);
        let variants: Vec<&Kernel> = launchers::transposes()
            .filter(|v| plan.wants(v.name))
            .collect();
        if variants.is_empty() {
            return Ok(());
        }
        for &edge in &plan.transpose {
            let e = (edge * edge) as usize;
            let shape = size::shape_label(edge, edge);
            self.check_memory(2 * e as u64 * 4)?;
            let what = format!("setup: transpose {shape}");
            self.progress.working_on(&what);
            let setup = range(&what);
            let host = f32::random(e, plan.seed ^ edge);
            let want = crate::cpu::transpose(&host, edge as usize, edge as usize);
            let input = lab.upload(&host)?;
            let output = DeviceBuffer::<f32>::zeroed(e).ctx(|| "allocating the output".into())?;
            drop(setup);

            let copy = target("d2d_copy", "f32", &shape);
            let row = Row::new(
                Section::Transpose,
                "d2d_copy",
                "driver",
                "f32",
                e as u64,
                shape.clone(),
                8 * e as u64,
            );
            self.copy_row(row, &input, &output, &host, None);
            // A row of this shape: `e` elements read and written, compared with the copy.
            let row = |kernel: &str, b: Backend| {
                Row::new(
                    Section::Transpose,
                    kernel,
                    b.name(),
                    "f32",
                    e as u64,
                    shape.clone(),
                    8 * e as u64,
                )
                .compared_with(Some(copy.clone()), Some(copy.clone()))
            };
            // The same traffic through a kernel of each compiler: what ncu can see of a copy.
            for &b in &plan.backends {
                self.copy_row(row("copy_stream", b), &input, &output, &host, Some(b));
            }

            for &v in &variants {
                for &b in plan.backends.iter().filter(|&&b| v.carried_by(b)) {
                    let dim = edge as u32;
                    self.measure(
                        row(v.name, b),
                        || {
                            // SAFETY: a stream-ordered memset of a live buffer that
                            // outlives the queue.
                            unsafe { output.index(..).set_32_async(POISON_BITS, &lab.stream) }
                                .ctx(|| "poisoning the output".into())
                        },
                        || lab.launch_transpose(b, v, &input, &output, dim, dim, &lab.stream),
                        || {
                            let mut got = vec![0f32; e];
                            output
                                .copy_to(&mut got[..])
                                .ctx(|| "reading the output back".into())?;
                            Ok(verify::check_equal(&got, &want, "transpose"))
                        },
                    );
                }
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------

    /// 1000 `bump` launches three ways: A sync after each, B back-to-back, C one CUDA graph
    /// (captured and instantiated once, timed separately, then replayed).
    pub fn launch_gap(&mut self) -> Result<()> {
        let (lab, plan) = (self.lab, self.plan);
        if !plan.wants("bump") {
            return Ok(());
        }
        let size = format!("{LAUNCHES}x{BUMP_N}");
        for &b in &plan.backends {
            let row = |kernel: &str| {
                let mut r = Row::new(
                    Section::LaunchGap,
                    kernel,
                    b.name(),
                    "f32",
                    BUMP_N as u64,
                    size.clone(),
                    0,
                );
                r.launches = LAUNCHES;
                r
            };
            let f = match lab.function(b, "bump") {
                Ok(f) => f,
                Err(e) => {
                    self.record(row("bump_sync_each").failed(e.to_string()));
                    continue;
                }
            };
            let data = DeviceBuffer::<f32>::zeroed(BUMP_N).ctx(|| "allocating bump data".into())?;
            let bump = || lab.launch_bump(b, &f, &data, &lab.stream);
            let check = || -> Result<Verdict> {
                let mut got = vec![0f32; BUMP_N];
                data.copy_to(&mut got[..])
                    .ctx(|| "reading bump data".into())?;
                Ok(match got.iter().position(|&x| x != LAUNCHES as f32) {
                    None => Ok(format!("every element bumped {LAUNCHES} times")),
                    Some(i) => Err(format!("element {i} is {} after {LAUNCHES} bumps", got[i])),
                })
            };
            let mut zero = || {
                // SAFETY: a stream-ordered memset of a live buffer that outlives the queue.
                unsafe { data.index(..).set_32_async(0, &lab.stream) }
                    .ctx(|| "zeroing bump data".into())
            };

            {
                let _r = range(&format!("launch gap A: sync after each [{b}]"));
                self.measure(
                    row("bump_sync_each").with_note("A: synchronize after each launch"),
                    &mut zero,
                    || {
                        for _ in 0..LAUNCHES {
                            bump()?;
                            lab.sync()?;
                        }
                        Ok(())
                    },
                    check,
                );
            }
            {
                let _r = range(&format!("launch gap B: back-to-back [{b}]"));
                self.measure(
                    row("bump_back_to_back").with_note("B: one stream, one synchronize"),
                    &mut zero,
                    || (0..LAUNCHES).try_for_each(|_| bump()),
                    check,
                );
            }
            {
                let _r = range(&format!("launch gap C: CUDA graph [{b}]"));
                let t0 = Instant::now();
                let graph = {
                    let _r = range(&format!("launch gap C: capture + instantiate [{b}]"));
                    Graph::capture(&lab.stream, || (0..LAUNCHES).try_for_each(|_| bump()))
                };
                let capture_ms = t0.elapsed().as_secs_f64() * 1e3;
                let mut cap = row("bump_graph_capture");
                cap.launches = 1;
                let graph = match graph {
                    Ok(g) => {
                        let note = format!(
                            "C: capture + instantiate {LAUNCHES} launches, once (host clock)"
                        );
                        self.record(cap.passed(&Samples::new(vec![capture_ms]), note));
                        g
                    }
                    Err(e) => {
                        self.record(cap.failed(e.to_string()));
                        continue;
                    }
                };
                self.measure(
                    row("bump_graph").with_note("C: one graph launch replays all"),
                    &mut zero,
                    || graph.launch(&lab.stream),
                    check,
                );
            }
        }
        Ok(())
    }

    /// Fails early, with the numbers, when the GPU lacks the memory a phase needs.
    fn check_memory(&self, bytes: u64) -> Result<()> {
        self.lab.check_fits(bytes)
    }
}

/// A second input a reduction row is verified on, once, after its timed launches: integers
/// that every correct addition order sums exactly (`cpu::random::exact_sum_f32s`), so that a
/// lost or doubled element or block fails the row, which the timed input's rounding bound
/// lets pass at large n. `check` judges the sum of `input`.
struct ExactInput<'a, T: Elem> {
    input: DeviceSlice<T>,
    check: &'a dyn Fn(T) -> Verdict,
}

/// The row's verdict: `timed` (the timed output's check) and, given an exact-sum input, one
/// more result: `launch` queues the reset and the reduction of that input into `out`.
fn also_exact<T: Elem>(
    timed: Verdict,
    exact: Option<&ExactInput<'_, T>>,
    lab: &Lab,
    out: &DeviceSlice<T>,
    launch: impl FnOnce(&DeviceSlice<T>) -> Result<()>,
) -> Result<Verdict> {
    let Some(e) = exact else {
        return Ok(timed);
    };
    launch(&e.input)?;
    lab.sync()?;
    Ok(match (timed, (e.check)(read_one(out)?)) {
        (Ok(a), Ok(b)) => Ok(format!("{a}; {b}")),
        (Err(a), Err(b)) => Err(format!("{a}; {b}")),
        (Err(a), Ok(_)) | (Ok(_), Err(a)) => Err(a),
    })
}

/// Queues `slot[0] = v` on the lab's stream (a pageable 4-byte copy: staged at once).
fn set_one<T: Elem>(slot: &DeviceSlice<T>, v: T, lab: &Lab) -> Result<()> {
    let src = [v];
    // SAFETY: `slot` is a live one-element device allocation that outlives the queue; `src`
    // is pageable, which the driver copies into staging before this call returns.
    unsafe { slot.index(..1).async_copy_from(&src, &lab.stream) }
        .ctx(|| "resetting the result".into())
}

fn read_one<T: Elem>(slot: &DeviceSlice<T>) -> Result<T> {
    let mut r = [T::default()];
    slot.index(..1)
        .copy_to(&mut r[..])
        .ctx(|| "reading the result back".into())?;
    Ok(r[0])
}
