//! `cargo xtask ncu-table` and `cargo xtask ncu-transpose`: the chapter's key metrics for
//! every reduction (and the three transposes), one profiled launch each, with the chapter's
//! predictions beside the measured values and a one-line diagnosis per kernel.
//!
//! Also the options every ncu subcommand shares (`profile` uses them too).

use crate::profiler::capture::{self, Collect, Select, Settings};
use crate::profiler::metrics::{self, Row};
use crate::profiler::predict::{self, Prediction};
use crate::profiler::report::TableReport;
use crate::profiler::tools::{self, NCU};
use crate::util;
use anyhow::{Result, bail};
use catalog::Which;
use std::path::{Path, PathBuf};

/// What to print on stdout (every format is also written to the output folder).
pub use catalog::Format;

/// ncu's `--clock-control`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ClockControl {
    /// Leave the clocks to the GPU, as in the benchmarks
    None,
    /// Lock them to the base clock
    Base,
    /// Lock them to the boost clock (Nsight Compute 2026.1 and later)
    Boost,
}

/// ncu's `--cache-control`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CacheControl {
    /// Flush every cache before each replay pass (every pass starts cold)
    All,
    /// Keep what the previous pass left in the caches
    None,
}

fn value_name<T: clap::ValueEnum>(v: T) -> String {
    v.to_possible_value()
        .expect("no skipped values")
        .get_name()
        .to_string()
}

/// Options every ncu subcommand takes.
#[derive(clap::Args, Clone, Debug)]
pub struct NcuOptions {
    /// Which compiler's kernels
    #[arg(long, value_enum, default_value_t = Which::Both)]
    pub backend: Which,
    /// ncu --clock-control
    #[arg(long, value_enum, default_value_t = ClockControl::None)]
    pub clock_control: ClockControl,
    /// ncu --cache-control
    #[arg(long, value_enum, default_value_t = CacheControl::All)]
    pub cache_control: CacheControl,
    /// How ncu picks the one profiled launch: nvtx = the NVTX range `profile` (one ncu run per
    /// backend); launch-skip = the kernel's name after skipping its warm-up (one run per kernel)
    #[arg(long, value_enum, default_value_t = Select::Nvtx)]
    pub select: Select,
    /// Where `lab run` puts the reductions' result word: fast or slow (the fastest or slowest
    /// of 64 slots for same-address atomics, calibrated outside the profiled range; needs
    /// --select nvtx), or first (slot 0, no calibration) [default: fast with --select nvtx,
    /// first with launch-skip]
    #[arg(long, value_parser = ["fast", "slow", "first"])]
    pub placement: Option<String>,
    /// Folder for reports, raw CSV pages and tables [default: results/profile]
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// What to print on stdout
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The lab binary [default: `lab` beside this xtask binary]
    #[arg(long, value_name = "PATH")]
    pub lab: Option<PathBuf>,
    /// Re-read raw CSV pages captured earlier (`<name>-<backend>.raw.csv`) instead of running
    /// ncu; nothing is written unless --output is given
    #[arg(long = "from", value_name = "CSV", num_args = 1..)]
    pub from: Vec<PathBuf>,
}

impl NcuOptions {
    pub fn out_dir(&self) -> PathBuf {
        self.output
            .clone()
            .unwrap_or_else(|| util::root().join("results/profile"))
    }

    /// Where results go: the output folder, or nowhere when re-reading without --output.
    pub fn write_dir(&self) -> Option<PathBuf> {
        (self.from.is_empty() || self.output.is_some()).then(|| self.out_dir())
    }

    /// Runs `lab run --kernel kernels` under ncu (or reads `--from`), returning the rows and
    /// a line describing how they were measured.
    pub fn collect(
        &self,
        base: &str,
        kernels: &str,
        collect: Collect,
        size_args: Vec<String>,
    ) -> Result<(Vec<Row>, String)> {
        if !self.from.is_empty() {
            let rows = capture::read_capture(&self.from)?;
            let files: Vec<String> = self.from.iter().map(|p| p.display().to_string()).collect();
            return Ok((rows, format!("read back from {}", files.join(", "))));
        }
        let placement = match (self.placement.as_deref(), self.select) {
            (Some(p @ ("fast" | "slow")), Select::LaunchSkip) => anyhow::bail!(
                "--placement {p} calibrates with launches that --select launch-skip would count: use --select nvtx or --placement first"
            ),
            (Some(p), _) => p,
            (None, Select::Nvtx) => "fast",
            (None, Select::LaunchSkip) => "first",
        };
        let mut size_args = size_args;
        size_args.extend(["--placement".to_string(), placement.to_string()]);
        let lab = util::lab_binary(self.lab.as_deref())?;
        let plan = capture::plan(&lab, kernels, self.backend.name(), &size_args)?;
        let ncu = NCU.find()?;
        let version = crate::process::output(std::process::Command::new(&ncu).arg("--version"))
            .ok()
            .and_then(|v| {
                v.lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| "version unknown".into());
        let settings = Settings {
            ncu: ncu.clone(),
            lab,
            clock_control: value_name(self.clock_control),
            cache_control: value_name(self.cache_control),
            select: self.select,
            out_dir: self.out_dir(),
            collect,
            size_args,
        };
        let rows = capture::capture(&settings, base, &plan)?;
        let how = format!(
            "ncu {} ({}), --clock-control {} --cache-control {}, --select {}",
            ncu.display(),
            version.trim(),
            settings.clock_control,
            settings.cache_control,
            value_name(self.select)
        );
        Ok((rows, how))
    }
}

/// Writes `text`, `json` and `csv` as `<dir>/<base>.{txt,json,csv}` and prints the chosen one.
pub fn emit(
    dir: Option<&Path>,
    base: &str,
    format: Format,
    text: &str,
    json: &str,
    csv: &str,
) -> Result<()> {
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir)?;
        for (ext, body) in [("txt", text), ("json", json), ("csv", csv)] {
            tools::write_atomic(&dir.join(format!("{base}.{ext}")), body.as_bytes())?;
        }
        eprintln!("wrote {}/{base}.{{txt,json,csv}}", dir.display());
    }
    print!(
        "{}",
        match format {
            Format::Table => text,
            Format::Json => json,
            Format::Csv => csv,
        }
    );
    Ok(())
}

/// A result wrong under the profiler fails the command after the table is printed.
pub fn fail_if_unverified(rows: &[Row]) -> Result<()> {
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| r.verified == Some(false))
        .map(|r| r.label.as_str())
        .collect();
    if !failed.is_empty() {
        bail!("wrong results under ncu: {}", failed.join(", "));
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct TableArgs {
    #[command(flatten)]
    pub ncu: NcuOptions,
    /// Elements per reduction (profiling size: replays stay short)
    #[arg(long, default_value_t = 1 << 24)]
    pub size: u64,
}

/// `ncu-table`.
pub fn table(args: &TableArgs) -> Result<()> {
    let collect = Collect {
        set: None,
        sections: metrics::TABLE_SECTIONS.to_vec(),
        metrics: metrics::reduction_table(),
    };
    let size_args = vec!["--size".into(), args.size.to_string()];
    let (rows, how) = args
        .ncu
        .collect("ncu-table", "reductions", collect, size_args)?;
    let preds = predict::reductions();
    let title = format!(
        "ncu-table: reductions, n = {} f32, one profiled launch each (after an untimed warm-up)",
        predict::group_thousands(args.size as i64)
    );
    let notes = vec![
        how,
        "per block = ÷ blocks launched (sm__ctas_launched.sum); inst/warp = smsp__inst_executed ÷ smsp__warps_launched".into(),
        "sh-ld req = shared loads with >= 1 lane on (smsp__inst_executed_op_shared_ld_pred_on_any); conflicts and wavefronts: l1tex__data_{bank_conflicts,pipe_lsu_wavefronts}_pipe_lsu_mem_shared_op_ld".into(),
        "barrier, long-sb: warps stalled per issued instruction; occ %: achieved occupancy".into(),
        "ncu µs is time under the profiler (replayed, caches flushed): compare kernels within this table, never read it as a speed".into(),
    ];
    finish(
        "ncu-table",
        &args.ncu,
        &rows,
        title,
        notes,
        &metrics::reduction_columns(),
        &preds,
    )
}

#[derive(clap::Args)]
pub struct TransposeArgs {
    #[command(flatten)]
    pub ncu: NcuOptions,
    /// Input rows
    #[arg(long, default_value_t = 4096)]
    pub rows: u32,
    /// Input columns
    #[arg(long, default_value_t = 4096)]
    pub cols: u32,
}

/// `ncu-transpose`.
pub fn transpose(args: &TransposeArgs) -> Result<()> {
    let collect = Collect {
        set: None,
        sections: metrics::TABLE_SECTIONS.to_vec(),
        metrics: metrics::transpose_table(),
    };
    let size_args = vec![
        "--rows".into(),
        args.rows.to_string(),
        "--cols".into(),
        args.cols.to_string(),
    ];
    let (rows, how) = args
        .ncu
        .collect("ncu-transpose", "transposes", collect, size_args)?;
    let preds = predict::transposes(args.rows as u64, args.cols as u64);
    let title = format!(
        "ncu-transpose: {}×{} f32, one profiled launch each (after an untimed warm-up)",
        args.rows, args.cols
    );
    let notes = vec![
        how,
        "per warp-wide request: sectors/req = l1tex__t_sectors ÷ l1tex__t_requests (global); wavefronts/req = shared wavefronts ÷ shared requests with >= 1 lane on".into(),
        "coalesced 4-byte lanes: 4 sectors/request; conflict-free shared access: 1 wavefront/request".into(),
        "ncu µs is time under the profiler (replayed, caches flushed): compare kernels within this table, never read it as a speed".into(),
    ];
    finish(
        "ncu-transpose",
        &args.ncu,
        &rows,
        title,
        notes,
        &metrics::transpose_columns(),
        &preds,
    )
}

fn finish(
    kind: &str,
    opts: &NcuOptions,
    rows: &[Row],
    title: String,
    notes: Vec<String>,
    columns: &[metrics::Column],
    preds: &[Prediction],
) -> Result<()> {
    if rows.is_empty() {
        bail!("no profiled kernels to tabulate");
    }
    let report = TableReport::build(kind, title, notes, rows, columns, preds);
    emit(
        opts.write_dir().as_deref(),
        kind,
        opts.format,
        &report.text(preds),
        &report.json(),
        &report.csv(),
    )?;
    fail_if_unverified(rows)
}
