//! Running ncu for a table or a profile: the options every ncu subcommand takes (`profile`,
//! `ncu-table`, `ncu-transpose`), `lab run` under ncu (or a capture read back) into rows, and the
//! outputs written and printed.

use super::capture::{self, Collect, Select, Settings};
use super::metrics::Profiled;
use crate::util;
use anyhow::{Result, bail};
use catalog::{Backend, Format, SlotChoice, Which};
use profiler::ncu::run::{CacheControl, ClockControl};
use profiler::tools::NCU;
use std::path::{Path, PathBuf};

fn value_name<T: clap::ValueEnum>(v: T) -> String {
    v.to_possible_value()
        .expect("no skipped values")
        .get_name()
        .to_string()
}

/// Options every ncu subcommand takes.
#[derive(clap::Args, Clone, Debug)]
pub struct NcuOptions {
    /// Which compiler's kernels: llvm, nvvm, nvcc, both (llvm,nvvm), all, or a list such as
    /// llvm,nvcc (ncu runs for those alone where the subcommand takes a list, as `profile`
    /// does; else for the smallest set above that holds them)
    #[arg(long, value_parser = parse_which, default_value = "both")]
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
    #[arg(long, value_parser = parse_placement())]
    pub placement: Option<SlotChoice>,
    /// Folder for reports, raw CSV pages and tables [default: results/profile]
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// What to print on stdout
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The lab binary [default: `lab` beside this xtask binary]
    #[arg(long, value_name = "PATH")]
    pub lab: Option<PathBuf>,
    /// Re-read raw CSV pages captured earlier (`<name>-<backend>.raw.csv`, or `.raw.csv.gz`;
    /// a folder: every raw page in it) instead of running ncu; nothing is written unless
    /// --output is given
    #[arg(long = "from", value_name = "CSV", num_args = 1..)]
    pub from: Vec<PathBuf>,
}

/// `--backend`: a name, or a comma-separated list, read as the smallest set that holds it
/// (`llvm,nvcc` → all); the list itself is [`crate::asm::parse_backends`]'s.
pub fn parse_which(s: &str) -> Result<Which, String> {
    let list = crate::asm::parse_backends(s)?;
    let has = |b: Backend| list.contains(&b);
    let which = match (has(Backend::Llvm), has(Backend::Nvvm), has(Backend::Nvcc)) {
        (true, false, false) => Which::Llvm,
        (false, true, false) => Which::Nvvm,
        (false, false, true) => Which::Nvcc,
        (_, _, false) => Which::Both,
        _ => Which::All,
    };
    Ok(which)
}

/// `--placement`'s values, in the order its help lists them.
const PLACEMENTS: [SlotChoice; 3] = [SlotChoice::Fast, SlotChoice::Slow, SlotChoice::First];

/// `--placement`: one of [`PLACEMENTS`], by name.
fn parse_placement() -> impl clap::builder::TypedValueParser<Value = SlotChoice> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(PLACEMENTS.map(SlotChoice::name))
        .map(|s| SlotChoice::from_name(&s).expect("one of the listed values"))
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
    ) -> Result<(Vec<Profiled>, String)> {
        self.collect_with(base, kernels, collect, size_args, false, &[])
    }

    /// [`NcuOptions::collect`], plus the Source page when `source` (see
    /// [`capture::Settings::source`]), for `backends` alone when not empty.
    pub fn collect_with(
        &self,
        base: &str,
        kernels: &str,
        collect: Collect,
        size_args: Vec<String>,
        source: bool,
        backends: &[Backend],
    ) -> Result<(Vec<Profiled>, String)> {
        if !self.from.is_empty() {
            let rows = capture::read_capture(&self.from)?;
            let files: Vec<String> = self.from.iter().map(|p| p.display().to_string()).collect();
            return Ok((rows, format!("read back from {}", files.join(", "))));
        }
        let placement = match (self.placement, self.select) {
            (Some(p), Select::LaunchSkip) if p.calibrates() => anyhow::bail!(
                "--placement {p} calibrates with launches that --select launch-skip would count: use --select nvtx or --placement first"
            ),
            (Some(p), _) => p,
            (None, Select::Nvtx) => SlotChoice::Fast,
            (None, Select::LaunchSkip) => SlotChoice::First,
        };
        // The names first, on any machine: a wrong one lists the valid ones.
        catalog::select(kernels).map_err(|e| anyhow::anyhow!("--kernel: {e}"))?;
        let lab = util::lab_binary(self.lab.as_deref())?;
        let mut plan = capture::plan(&lab, kernels, self.backend.name(), &size_args)?;
        if !backends.is_empty() {
            plan.launches
                .retain(|p| p.backend.backend().is_none_or(|b| backends.contains(&b)));
        }
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
            clock_control: self.clock_control,
            cache_control: self.cache_control,
            select: self.select,
            out_dir: self.out_dir(),
            collect,
            placement,
            source,
        };
        let rows = capture::capture(&settings, base, &plan)?;
        let how = format!(
            "ncu {} ({}), --clock-control {} --cache-control {}, --select {}",
            ncu.display(),
            version.trim(),
            settings.clock_control.name(),
            settings.cache_control.name(),
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
            files::write_atomic(&dir.join(format!("{base}.{ext}")), body.as_bytes())?;
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
pub fn fail_if_unverified(rows: &[Profiled]) -> Result<()> {
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
