//! `lab bench`: every kernel against CUB and the ceilings measured in the same run, plus the
//! launch-gap demo, in one process; the fault catalogue only when `--kernel` names it.
//!
//! - `args`: the flags and the plan they resolve to (`catalog::cli::bench`, which xtask reads
//!   too).
//! - `measure`: the measurements (ceilings, reductions + CUB, transposes + copy, launch gap,
//!   the fault catalogue and the row-wise family when named),
//!   each phase in an NVTX range, each result verified after timing; what each row launches
//!   and checks is its family's case (`crate::cases`), the same `lab run` drives.
//! - `progress`: the progress bar on stderr (current row, ETA), off with `--quiet` or when
//!   stderr is not a terminal.
//! - `report`: rows, ratios, the headline, and one printer per format (table, JSON, CSV).
//! - `env`: driver version and clocks (NVML), commit, command line.
//! - `size`: `2^28` in and out.
//!
//! `--cache` picks what the L2 holds before each launch: hot (repeated launches on the same
//! data), cold (flushed first), or both; every row is compared only with rows of its cache.
//!
//! Bandwidth is the bytes that must move (reads + writes) over the median time. Every row
//! shows its percentage of the matching ceiling (reductions: the read stream; transposes: the
//! copy of the same bytes) and its ratio to the reference (CUB; the copy).

pub mod env;
pub mod measure;
pub mod progress;
pub mod report;

pub use catalog::cli::{bench as args, size};

pub use args::{Args, Dtype, Format, Plan};
pub use report::{Report, Row, Status};

use crate::error::{HostError, Result};
use crate::files;
use crate::lab::Lab;
use crate::nvtx::range;
use std::path::PathBuf;

/// What a finished run left behind.
#[derive(Debug)]
pub struct Outcome {
    /// Rows whose result was wrong or whose launch failed (the command should fail).
    pub failed: usize,
    /// The results file (`--out`), if written.
    pub results_file: Option<PathBuf>,
}

/// Runs the whole bench on device 0, prints the report in `args.format` on stdout, and writes
/// the results file when `args.out` is set.
pub fn run(args: &Args) -> Result<Outcome> {
    // Before the GPU is touched: a run must not measure for minutes, then fail to write.
    if let Some(dir) = &args.out {
        files::check_writable_dir(dir).map_err(|e| HostError::Invalid {
            what: "--out",
            detail: format!(
                "cannot write into '{}' ({e}): pick a folder you can write to",
                dir.display()
            ),
        })?;
    }
    // Before the GPU too: a wrong kernel name or size is refused on any machine.
    let plan = Plan::new(args, &Lab::BACKENDS).map_err(|detail| HostError::Invalid {
        what: "lab bench flags",
        detail,
    })?;
    let date = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let lab = {
        let _r = range("setup: CUDA context and modules");
        Lab::new()?
    };
    let monitor = env::Monitor::new(&lab);
    let clocks_before = monitor.clocks();

    let mut bench = measure::Bench::new(&lab, &plan, args.quiet)?;
    bench.compute_ceiling()?;
    bench.reductions()?;
    bench.roofs()?;
    bench.transposes()?;
    bench.launch_gap()?;
    bench.faults()?;
    bench.rows()?;
    let placement = bench.placement.clone();
    let l2_flush_bytes = bench.flush_bytes();
    let atomic_slot = bench.atomic_slot.clone();
    let rows = bench.finish();

    let clocks_after = monitor.clocks();
    let device = device(&lab, &monitor);
    let roofs = measure::roofs::measured(
        &rows,
        plan.cache.caches(),
        measure::roofs::sm_clock_hz(&clocks_after, device.sm_clock_max_mhz),
        atomic_slot,
    );
    let mut report = Report {
        schema_version: report::SCHEMA_VERSION,
        tool: "lab bench".into(),
        date,
        command_line: env::command_line(),
        commit: env::commit(),
        device,
        clocks_before,
        clocks_after,
        config: report::Config {
            placement,
            l2_flush_bytes,
            ..config(&plan)
        },
        rows,
        headline: Vec::new(),
        failed: 0,
        roofs,
    };
    report::finish(&mut report);

    match args.format {
        Format::Table => print!(
            "{}",
            report::table(
                &report,
                if args.roof_rows {
                    report::RoofRows::All
                } else {
                    report::RoofRows::Summary
                }
            )
        ),
        Format::Json => println!("{}", report::json(&report)),
        Format::Csv => print!("{}", report::csv(&report)),
    }
    let results_file = match &args.out {
        Some(dir) => {
            let path = report::write_results(dir, &report).map_err(|e| HostError::Invalid {
                what: "results file",
                detail: format!("writing into '{}': {e}", dir.display()),
            })?;
            report::rows::write(dir, &report).map_err(|e| HostError::Invalid {
                what: "row-wise records",
                detail: format!("writing into '{}': {e}", dir.display()),
            })?;
            Some(path)
        }
        None => None,
    };
    Ok(Outcome {
        failed: report.failed,
        results_file,
    })
}

fn device(lab: &Lab, monitor: &env::Monitor) -> report::Device {
    let i = &lab.info;
    report::Device {
        name: i.name.clone(),
        compute_capability: format!("{}.{}", i.compute_capability.0, i.compute_capability.1),
        sm_count: i.sm_count,
        l2_bytes: i.l2_bytes,
        memory_bytes: i.memory_bytes,
        driver_version: monitor.driver_version(),
        driver_cuda: i.driver_cuda.clone(),
        cub_runtime: crate::cases::cub::runtime_version(),
        sm_clock_max_mhz: (i.sm_clock_khz / 1000) as u32,
        memory_clock_max_mhz: (i.memory_clock_khz / 1000) as u32,
        memory_bus_bits: i.memory_bus_bits as u32,
    }
}

fn config(p: &Plan) -> report::Config {
    report::Config {
        mode: p.mode().into(),
        cache: p.cache,
        sizes: p.sizes.clone(),
        transpose: p.transpose.clone(),
        backends: p.backends.clone(),
        dtypes: p.dtypes.clone(),
        kernel_filter: p.kernel_filter.clone(),
        reps: p.reps,
        warmup: p.warmup,
        seed: p.seed,
        l2_flush_bytes: None,
        placement: None,
    }
}
