//! ncu on any program: the options, the command line, the run, and the report exported as
//! the pages the readers take.
//!
//! A capture named `NAME` in folder `DIR` leaves `DIR/NAME.ncu-rep` (the report, for the GUI),
//! `NAME.raw.csv` (`--page raw --csv --print-units base`, what the diagnosis reads),
//! `NAME.ncu.log` (the command line and ncu's console) and, when the source is imported,
//! `NAME.source-sass.csv` and `NAME.source-cuda-sass.csv` (the Source page). Every file is
//! written under a temporary name and renamed into place, so a failure leaves none half-done.

use super::raw::{self, Launch};
use crate::tools::{self, NCU};
use anyhow::{Context, Result, bail};
use files::write_atomic;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// ncu's section sets (`--set`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Set {
    /// Every section: what the diagnosis wants
    Full,
    /// The Speed of Light, the memory and compute workloads, the launch and occupancy
    Detailed,
    /// Speed of Light, launch, occupancy, workload distribution: enough to classify
    Basic,
    /// The roofline charts
    Roofline,
}

impl Set {
    pub const ALL: [Set; 4] = [Set::Full, Set::Detailed, Set::Basic, Set::Roofline];

    pub fn name(self) -> &'static str {
        match self {
            Set::Full => "full",
            Set::Detailed => "detailed",
            Set::Basic => "basic",
            Set::Roofline => "roofline",
        }
    }
}

impl std::str::FromStr for Set {
    type Err = String;
    fn from_str(s: &str) -> Result<Set, String> {
        Set::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| format!("--set '{s}' is not one of full, detailed, basic, roofline"))
    }
}

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

impl ClockControl {
    pub fn name(self) -> &'static str {
        match self {
            ClockControl::None => "none",
            ClockControl::Base => "base",
            ClockControl::Boost => "boost",
        }
    }
}

/// ncu's `--cache-control`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CacheControl {
    /// Flush every cache before each replay pass (every pass starts cold)
    All,
    /// Keep what the previous pass left in the caches
    None,
}

impl CacheControl {
    pub fn name(self) -> &'static str {
        match self {
            CacheControl::All => "all",
            CacheControl::None => "none",
        }
    }
}

/// How ncu names kernels on its pages (`--print-kernel-base`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelBase {
    /// The bare function name (`reduce_v3_f32`, `DeviceReduceKernel`).
    Function,
    /// The demangled signature, templates and parameters included.
    Demangled,
}

/// What ncu collects.
#[derive(Clone, Debug, Default)]
pub struct Collect {
    pub set: Option<Set>,
    /// `--section`s.
    pub sections: Vec<String>,
    /// `--metrics`, added to the set.
    pub metrics: Vec<String>,
}

/// Which of a program's launches ncu profiles. Unset fields leave ncu's defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// `--kernel-name regex:…`: kernels whose demangled name matches.
    pub kernel_regex: Option<String>,
    /// `--launch-skip N`: launches (of matching kernels) to let pass first.
    pub launch_skip: Option<u64>,
    /// `--launch-count N`: launches to profile at most.
    pub launch_count: Option<u64>,
    /// `--nvtx --nvtx-include …`: only launches inside these NVTX ranges (ncu's syntax:
    /// `domain@range/` for push/pop ranges).
    pub nvtx_include: Vec<String>,
    /// `--profile-from-start off`: only launches between cudaProfilerStart and
    /// cudaProfilerStop (`torch.cuda.cudart().cudaProfilerStart()`).
    pub profiler_api_range: bool,
}

impl Filter {
    /// The filter as ncu's flags.
    pub fn args(&self) -> Vec<String> {
        let mut a = Vec::new();
        if let Some(k) = &self.kernel_regex {
            a.extend(["--kernel-name-base".into(), "demangled".into()]);
            a.extend(["--kernel-name".into(), format!("regex:{k}")]);
        }
        if let Some(n) = self.launch_skip {
            a.extend(["--launch-skip".into(), n.to_string()]);
        }
        if let Some(n) = self.launch_count {
            a.extend(["--launch-count".into(), n.to_string()]);
        }
        if !self.nvtx_include.is_empty() {
            a.push("--nvtx".into());
            for r in &self.nvtx_include {
                a.extend(["--nvtx-include".into(), r.clone()]);
            }
        }
        if self.profiler_api_range {
            a.extend(["--profile-from-start".into(), "off".into()]);
        }
        a
    }
}

/// Everything an ncu run needs besides the program.
#[derive(Clone, Debug)]
pub struct Settings {
    pub ncu: PathBuf,
    pub clock_control: ClockControl,
    pub cache_control: CacheControl,
    pub collect: Collect,
    pub filter: Filter,
    /// Import the program's source files into the report (`--import-source yes`), so its
    /// Source page shows the lines as built; the pages are exported too.
    pub source: bool,
}

impl Settings {
    /// ncu found where [`NCU`] looks, the clocks left alone, every cache flushed before each
    /// pass, `--set full`, nothing filtered.
    pub fn new() -> Result<Settings> {
        Ok(Settings {
            ncu: NCU.find()?,
            clock_control: ClockControl::None,
            cache_control: CacheControl::All,
            collect: Collect {
                set: Some(Set::Full),
                sections: Vec::new(),
                metrics: super::metrics::DIAGNOSIS.map(String::from).to_vec(),
            },
            filter: Filter::default(),
            source: false,
        })
    }

    /// The ncu command line up to the program: clocks, caches, what to collect, which
    /// launches, and the report to write (`--export STEM`, ncu adds `.ncu-rep`).
    pub fn command(&self, report_stem: &Path) -> Command {
        let mut cmd = Command::new(&self.ncu);
        cmd.args(["--clock-control", self.clock_control.name()])
            .args(["--cache-control", self.cache_control.name()])
            // A Python program, or a launcher script, starts the process that launches.
            .args(["--target-processes", "all"]);
        if let Some(set) = self.collect.set {
            cmd.args(["--set", set.name()]);
        }
        for sec in &self.collect.sections {
            cmd.args(["--section", sec]);
        }
        if !self.collect.metrics.is_empty() {
            cmd.args(["--metrics", &self.collect.metrics.join(",")]);
        }
        if self.source {
            cmd.args(["--import-source", "yes"]);
        }
        cmd.args(self.filter.args());
        cmd.arg("--export")
            .arg(report_stem)
            .arg("--force-overwrite");
        cmd
    }
}

/// What a capture left: its files, and what ncu profiled.
#[derive(Debug)]
pub struct Captured {
    pub report: PathBuf,
    pub raw: PathBuf,
    pub log: PathBuf,
    /// The program's exit status under ncu.
    pub status: ExitStatus,
    pub launches: Vec<Launch>,
}

/// `<dir>/<name>.<ext>`.
pub fn file(dir: &Path, name: &str, ext: &str) -> PathBuf {
    dir.join(format!("{name}.{ext}"))
}

/// Runs `program args` under ncu with `s` and exports the report (see the module docs for the
/// files). `base` names the kernels on the exported pages.
pub fn capture(
    s: &Settings,
    dir: &Path,
    name: &str,
    program: &OsStr,
    args: &[OsString],
    base: KernelBase,
) -> Result<Captured> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let report = file(dir, name, "ncu-rep");
    let log = file(dir, name, "ncu.log");
    // ncu appends .ncu-rep to --export: give it a temporary stem in the same folder.
    let stem_tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let report_tmp = PathBuf::from(format!("{}.ncu-rep", stem_tmp.display()));
    let _ = std::fs::remove_file(&report_tmp);
    let mut cmd = s.command(&stem_tmp);
    cmd.arg(program).args(args);
    let (status, console) = crate::process::run_tee(&mut cmd)?;
    write_atomic(
        &log,
        format!("+ {}\n{console}", crate::process::show(&cmd)).as_bytes(),
    )?;
    check_console(&console, &report_tmp, status, &log)?;
    files::commit(&report_tmp, &report)?;
    let text = import_raw(&s.ncu, &report, base)?;
    let raw = file(dir, name, "raw.csv");
    write_atomic(&raw, text.as_bytes())?;
    if s.source {
        for (page, print) in [(SASS_PAGE, "sass"), (CUDA_PAGE, "cuda,sass")] {
            let text = import_source(&s.ncu, &report, print)?;
            write_atomic(&file(dir, name, page), text.as_bytes())?;
        }
    }
    let launches = raw::parse_raw(&text).with_context(|| format!("parsing {}", raw.display()))?;
    Ok(Captured {
        report,
        raw,
        log,
        status,
        launches,
    })
}

/// The `sass` Source page: every instruction with its counters.
pub const SASS_PAGE: &str = "source-sass.csv";
/// The `cuda,sass` Source page: the lines ncu charges instructions to, with their text.
pub const CUDA_PAGE: &str = "source-cuda-sass.csv";

/// A known failure, nothing profiled, or no report: one line that says what to do.
pub fn check_console(
    console: &str,
    report_tmp: &Path,
    status: ExitStatus,
    log: &Path,
) -> Result<()> {
    if let Some(problem) = tools::known_problem("ncu", console) {
        bail!("{problem}");
    }
    if tools::profiled_nothing(console) {
        bail!(
            "ncu profiled no kernel: no launch passed the filters (kernel name, launch skip and \
             count, NVTX range, cudaProfilerStart); see {}",
            log.display()
        );
    }
    if !report_tmp.is_file() {
        let why = console
            .lines()
            .find(|l| l.starts_with("==ERROR=="))
            .map_or(String::new(), |l| format!("{}; ", l.trim()));
        bail!("ncu wrote no report ({status}): {why}see {}", log.display());
    }
    Ok(())
}

/// `ncu --import REPORT --page raw --csv --print-units base`: the page every reader here
/// starts from.
pub fn import_raw(ncu: &Path, report: &Path, base: KernelBase) -> Result<String> {
    let base = match base {
        KernelBase::Function => "function",
        KernelBase::Demangled => "demangled",
    };
    output(
        Command::new(ncu)
            .arg("--import")
            .arg(report)
            .args(["--page", "raw", "--csv", "--print-units", "base"])
            .args(["--print-kernel-base", base]),
    )
}

/// `ncu --import REPORT --page source --csv --print-source WHAT`: `sass` (every instruction
/// with its counters) or `cuda,sass` (the instructions per source line).
pub fn import_source(ncu: &Path, report: &Path, what: &str) -> Result<String> {
    output(Command::new(ncu).arg("--import").arg(report).args([
        "--page",
        "source",
        "--csv",
        "--print-source",
        what,
    ]))
}

/// Runs `cmd` quietly and returns its stdout; on failure, an error with its last line.
fn output(cmd: &mut Command) -> Result<String> {
    let o = cmd
        .output()
        .with_context(|| format!("could not start '{}'", crate::process::show(cmd)))?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        bail!(
            "'{}' failed ({}): {}",
            crate::process::show(cmd),
            o.status,
            last.trim()
        );
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(cmd: &Command) -> Vec<String> {
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn the_command_states_every_choice_and_the_filters() {
        let s = Settings {
            ncu: "/opt/ncu".into(),
            clock_control: ClockControl::None,
            cache_control: CacheControl::All,
            collect: Collect {
                set: Some(Set::Full),
                sections: Vec::new(),
                metrics: vec!["a.sum".into(), "b.sum".into()],
            },
            filter: Filter {
                kernel_regex: Some("gemm|softmax".into()),
                launch_skip: Some(2),
                launch_count: Some(3),
                nvtx_include: vec!["profiled step/".into()],
                profiler_api_range: true,
            },
            source: true,
        };
        let a = args(&s.command(Path::new("/tmp/r"))).join(" ");
        assert_eq!(
            a,
            "--clock-control none --cache-control all --target-processes all --set full \
             --metrics a.sum,b.sum --import-source yes --kernel-name-base demangled \
             --kernel-name regex:gemm|softmax --launch-skip 2 --launch-count 3 --nvtx \
             --nvtx-include profiled step/ --profile-from-start off --export /tmp/r \
             --force-overwrite"
        );
        let plain = Settings {
            filter: Filter::default(),
            source: false,
            ..s
        };
        assert!(
            !args(&plain.command(Path::new("r")))
                .iter()
                .any(|a| a.starts_with("--kernel"))
        );
    }

    #[test]
    fn sets_parse_and_refuse_with_the_list() {
        assert_eq!("full".parse::<Set>(), Ok(Set::Full));
        assert_eq!(
            "fast".parse::<Set>().unwrap_err(),
            "--set 'fast' is not one of full, detailed, basic, roofline"
        );
    }
}
