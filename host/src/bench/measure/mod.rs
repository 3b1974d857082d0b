//! The measurements, in the order they run: the compute ceiling (FP32 FMA peak, once), then
//! for each size the bandwidth ceilings (read stream, D2D copy), then the reductions and CUB;
//! the transposes after their own copy; the launch gap last. Every phase sits in an NVTX
//! range named after its row (`reduce_v6 [llvm] f32 2^28: warm-up` / `: timed` / `: verify`).
//!
//! Each row, once per cache the plan measures (`--cache`: hot, cold, or hot then cold):
//! warm-up launches, then timed launches (one event pair each), every launch preceded, when
//! cold, by the L2 flush ([`flush`]) and a wait for it, and by the output's reset, all outside
//! the events; then
//! the last launch's output is verified (and an f32 sum's on an exact-sum input, one more
//! launch). A wrong result or a driver error fails that row and the run goes on. What a row
//! launches and checks is its family's case (`crate::cases`), the same `lab run` drives.
//!
//! One module per phase: [`ceilings`], [`reduce`], [`roofs`], [`transpose`], [`launch_gap`],
//! [`faults`] and [`rows`] (each only when `--kernel` names them).

mod ceilings;
mod faults;
pub mod flush;
mod launch_gap;
mod reduce;
pub mod roofs;
mod rows;
mod transpose;

pub use ceilings::FMA_ITERS;
pub use flush::L2Flush;
pub use launch_gap::{BUMP_N, LAUNCHES};

use super::args::Plan;
use super::progress::{self, Progress};
use super::report::{Passed, Row, Status};
use crate::cases::{Case, Verdict};
use crate::error::Result;
use crate::lab::Lab;
use crate::launchers;
use crate::nvtx::range;
use crate::placement::{Placement, ResultSlots};
use crate::timing::{Samples, time_launches};
use catalog::records::Cache;

/// Where the rows go while the run goes on.
pub struct Bench<'a> {
    lab: &'a Lab,
    plan: &'a Plan,
    progress: Progress,
    pub rows: Vec<Row>,
    /// Where the reductions' result word was (set when a reduction ran).
    pub placement: Option<Placement>,
    /// The flush before every launch of a cold row (None when the plan measures hot only).
    flush: Option<L2Flush<'a>>,
    /// The reductions' candidate result words, kept for the same-address roof.
    slots: Option<ResultSlots>,
    /// Where the same-address roof's word was (set when the roofs ran).
    pub atomic_slot: Option<String>,
}

impl<'a> Bench<'a> {
    /// `quiet`: no progress bar and no per-row lines on stderr. Sets up the L2 flush when the
    /// plan measures cold (its read-back on the plan's first backend).
    pub fn new(lab: &'a Lab, plan: &'a Plan, quiet: bool) -> Result<Bench<'a>> {
        let flush = if plan.cache.caches().contains(&Cache::Cold) {
            Some(L2Flush::new(lab, plan.backends[0])?)
        } else {
            None
        };
        let mut bench = Bench {
            lab,
            plan,
            progress: Progress::new(0, 0, true),
            rows: Vec::new(),
            placement: None,
            flush,
            slots: None,
            atomic_slot: None,
        };
        let (rows, work) = bench.planned();
        bench.progress = Progress::new(rows, work, quiet);
        Ok(bench)
    }

    /// Bytes one L2 flush writes (None when the plan measures hot only).
    pub fn flush_bytes(&self) -> Option<u64> {
        self.flush.as_ref().map(|f| f.bytes)
    }

    /// The rows, once every phase has run (the progress bar is cleared).
    pub fn finish(self) -> Vec<Row> {
        self.progress.finish();
        self.rows
    }

    pub(super) fn record(&mut self, row: Row) {
        let what = match (row.status, row.gbps, row.gflops, row.median_us) {
            (Status::Failed, ..) => format!("FAILED: {}", row.note),
            (Status::Skipped, ..) => format!("skipped: {}", row.note),
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

    /// Records `row`, not measured by [`Bench::measure`] (a failure to set up, a skip, a
    /// host-clock time), once for each cache, as a measured row is.
    pub(super) fn record_each(&mut self, row: Row) {
        for &cache in self.plan.cache.caches() {
            self.record(row.clone().with_cache(cache));
        }
    }

    /// The rows the phases will record and their total weight (see [`progress::weight`]),
    /// for the progress bar. Mirrors the phases' own choices of what to run, once per cache.
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
            let summed = p.dtypes.iter().filter(|d| d.summed().is_some()).count() as u64;
            for &n in &p.sizes {
                add(nb, 4 * n, 0, 1);
                add(1, 8 * n, 0, 1);
                if wants_reduce {
                    add(summed * (pairs + 1), 4 * n, n, 1);
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
        if self.wants_roofs() {
            // Six rows per Rust backend, each ~2 ms per launch (weighed as that many FLOPs).
            let rust = p
                .backends
                .iter()
                .filter(|&&b| launchers::roofs::atomic_same().carried_by(b))
                .count() as u64;
            add(6 * rust, 0, 100_000_000_000, 1);
        }
        if p.wants("bump") {
            add(3 * nb, 0, 0, LAUNCHES);
            add(nb, 0, 0, 1);
        }
        for step in self.planned_rows() {
            add(1 + step.runs.len() as u64, step.matrix_bytes(), 0, 1);
        }
        for k in self.planned_faults() {
            // About a millisecond per launch, weighed as that many FLOPs.
            let carried = p.backends.iter().filter(|&&b| k.carried_by(b)).count();
            add(carried as u64, 0, 100_000_000_000, 1);
        }
        let caches = p.cache.caches().len() as u64;
        (rows * caches, work * caches)
    }

    /// Warm-up, then the timed launches, each in its NVTX range. Before every launch: when
    /// `cache` is cold the L2 flush, waited for; then `reset`. Neither is inside the timing
    /// events, and both caches start their timed launch from the same state of the stream.
    fn time(
        &self,
        label: &str,
        cache: Cache,
        mut reset: impl FnMut() -> Result<()>,
        mut launch: impl FnMut() -> Result<()>,
    ) -> Result<Samples> {
        let flush = match cache {
            Cache::Hot => None,
            Cache::Cold => Some(
                self.flush
                    .as_ref()
                    .expect("a plan with cold rows has a flush"),
            ),
        };
        // Cold: flush, wait for it, then reset as hot does. Without the wait the flush's
        // ~0.1 ms of queued work hides the launch latency that a hot row pays, and cold rows
        // read faster than hot ones at every size.
        let mut before = || {
            if let Some(f) = flush {
                f.queue()?;
                self.lab.sync()?;
            }
            reset()
        };
        {
            let _r = range(&format!("{label}: warm-up"));
            for _ in 0..self.plan.warmup {
                before()?;
                launch()?;
            }
            self.lab.sync()?;
        }
        let _r = range(&format!("{label}: timed"));
        time_launches(
            &self.lab.stream,
            0,
            self.plan.reps as usize,
            &mut before,
            &mut launch,
        )
    }

    /// For each cache the plan measures: times `launch`, verifies its last output and records
    /// the row.
    fn measure(
        &mut self,
        row: Row,
        mut reset: impl FnMut() -> Result<()>,
        mut launch: impl FnMut() -> Result<()>,
        mut verify: impl FnMut() -> Result<Verdict>,
    ) {
        for &cache in self.plan.cache.caches() {
            let row = row.clone().with_cache(cache);
            let label = row.label();
            self.progress.working_on(&label);
            let outcome = self
                .time(&label, cache, &mut reset, &mut launch)
                .and_then(|s| {
                    let _r = range(&format!("{label}: verify"));
                    Ok((s, verify()?))
                });
            self.record(match outcome {
                Ok((s, Ok(note))) => row.passed(&s, note),
                Ok((_, Err(wrong))) => row.failed(wrong),
                Err(e) => row.failed(e.to_string()),
            });
        }
    }

    /// [`Bench::measure`] of a case: its reset and launch, then `verify`.
    fn measure_case(
        &mut self,
        row: Row,
        case: &impl Case,
        verify: impl FnMut() -> Result<Verdict>,
    ) {
        self.measure(row, || case.reset(), || case.launch(), verify);
    }

    /// Fails early, with the numbers, when the GPU lacks the memory a phase needs.
    fn check_memory(&self, bytes: u64) -> Result<()> {
        self.lab.check_fits(bytes)
    }

    fn wants_reduce(&self) -> bool {
        launchers::reductions().any(|v| self.plan.wants(v.name))
            || self.plan.wants(launchers::library_reduction().name)
    }

    /// Whether the row-wise family runs (only when `--kernel` names its kernels).
    fn wants_rows(&self) -> bool {
        launchers::rows::row_kernels().any(|k| self.plan.names(k.name))
    }

    /// The read stream and the copy run whenever a reduction does (they are its ceilings), and
    /// with the row-wise family (the model's roofs need them).
    fn wants_bandwidth_ceilings(&self) -> bool {
        self.wants_reduce()
            || self.wants_rows()
            || self.plan.wants(launchers::stream::read_stream().name)
    }

    /// The FMA peak runs whenever a reduction or the row-wise family does (the roofline's
    /// compute roof, and one the model needs).
    fn wants_fma_peak(&self) -> bool {
        self.wants_reduce()
            || self.wants_rows()
            || self.plan.wants(launchers::stream::fma_peak().name)
    }
}
