//! Running `lab run` under ncu so that exactly the intended launches are profiled, and
//! reading the result back as [`Profiled`]s.
//!
//! 1. `lab run --plan` resolves the kernel names (a wrong name fails here, with the list of
//!    valid ones) and says which backends the binary carries: the one resolution.
//! 2. One ncu process per backend (`--select nvtx`: `--nvtx --nvtx-include
//!    kernel-lab@profile/`, every kernel of that backend in one report), or one per kernel and
//!    backend (`--select launch-skip`: `--kernel-name <entry> --launch-skip 1 --launch-count 1`,
//!    which skips the warm-up without NVTX). Each runs `lab run --from-plan` on its own part of
//!    the plan (written beside the report for the run, then removed), so it launches exactly
//!    what was planned. Within one report every kernel name is unique, so rows map to
//!    launches by name.
//! 3. The report is exported as `<name>.ncu-rep`, imported as `<name>.raw.csv`
//!    (`--page raw --csv --print-units base`), with `lab run`'s manifest as
//!    `<name>.launches.json` and ncu's console output as `<name>.ncu.log`. With
//!    [`Settings::source`], ncu also imports the source files into the report
//!    (`--import-source yes`) and its Source page is exported as `<name>.source-sass.csv`
//!    (`--print-source sass`) and `<name>.source-cuda-sass.csv` (`cuda,sass`; see
//!    `profiler::source`). Every file is written under a temporary name and renamed into place.

use super::metrics::{Profiled, function_name, kernel_by_kernel};
use super::ncu_csv::{self, Launch};
use anyhow::{Context, Result, bail};
use catalog::{Runner, SlotChoice};
use files::write_atomic;
pub use profiler::gzip::read_text;
use profiler::tools;
use std::path::{Path, PathBuf};
use std::process::Command;

/// NVTX filter matching `lab run`'s profiled launches.
pub use catalog::nvtx::NVTX_FILTER;

/// How ncu finds the profiled launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Select {
    /// NVTX range `profile`: one ncu run per backend.
    Nvtx,
    /// `--kernel-name <entry> --launch-skip 1 --launch-count 1`: one ncu run per kernel.
    LaunchSkip,
}

/// `lab run --plan`'s plan and `lab run --manifest`'s manifest, as `lab` writes them.
pub use catalog::records::{Launched, Manifest, Plan, Planned};

/// What ncu collects, and its clock and cache choices: the profiler crate's, as every ncu
/// run takes them.
pub use profiler::ncu::run::{CacheControl, ClockControl, Collect};

/// Everything a capture needs besides the kernels: the flags resolved (the tools found, the
/// folder and the placement chosen).
#[derive(Clone, Debug)]
pub struct Settings {
    pub ncu: PathBuf,
    pub lab: PathBuf,
    pub clock_control: ClockControl,
    pub cache_control: CacheControl,
    pub select: Select,
    pub out_dir: PathBuf,
    pub collect: Collect,
    /// Where the profiled runs put the reductions' result word.
    pub placement: SlotChoice,
    /// Also collect and export the Source page (`profile --source`).
    pub source: bool,
}

/// One ncu process: the launches it profiles and the name of its files.
#[derive(Clone, Debug)]
pub struct Job {
    /// `ncu-table-llvm`: files are `<name>.ncu-rep`, `<name>.raw.csv`, …
    pub name: String,
    pub backend: Runner,
    pub launches: Vec<Planned>,
}

/// `lab run --plan`: resolves names without touching the GPU.
pub fn plan(lab: &Path, kernels: &str, backend: &str, size_args: &[String]) -> Result<Plan> {
    let mut cmd = Command::new(lab);
    cmd.args(["run", "--kernel", kernels, "--backend", backend, "--plan"])
        .args(size_args);
    let out = cmd
        .output()
        .with_context(|| format!("could not start '{}'", crate::process::show(&cmd)))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err
            .lines()
            .find(|l| l.starts_with("error:"))
            .or(err.lines().rev().find(|l| !l.trim().is_empty()))
            .unwrap_or("")
            .trim_start_matches("error: ")
            .to_string();
        bail!("lab run --plan failed ({}): {line}", out.status);
    }
    let plan: Plan =
        serde_json::from_slice(&out.stdout).context("reading lab run --plan's JSON")?;
    for n in &plan.notes {
        eprintln!("note: {n}");
    }
    Ok(plan)
}

/// The name of the ncu process (and its files) that profiles `kernel` on `backend`:
/// `<base>-<backend>` (nvtx: one per backend) or `<base>-<kernel>-<backend>` (launch-skip).
pub fn job_name(base: &str, select: Select, kernel: &str, backend: Runner) -> String {
    match select {
        Select::Nvtx => format!("{base}-{backend}"),
        Select::LaunchSkip => format!("{base}-{kernel}-{backend}"),
    }
}

/// Splits a plan into ncu processes named by [`job_name`].
pub fn jobs(base: &str, plan: &[Planned], select: Select) -> Vec<Job> {
    let mut jobs: Vec<Job> = Vec::new();
    for p in plan {
        let name = job_name(base, select, &p.kernel, p.backend);
        match jobs.iter_mut().find(|j| j.name == name) {
            Some(j) => j.launches.push(p.clone()),
            None => jobs.push(Job {
                name,
                backend: p.backend,
                launches: vec![p.clone()],
            }),
        }
    }
    jobs
}

/// The plan one job runs: `plan` with only the job's launches.
pub fn job_plan(plan: &Plan, job: &Job) -> Plan {
    Plan {
        launches: job.launches.clone(),
        ..plan.clone()
    }
}

/// The ncu command line of one job, whose launches `lab run` reads from `plan` ([`job_plan`]).
pub fn ncu_command(
    s: &Settings,
    job: &Job,
    report: &Path,
    plan: &Path,
    manifest: &Path,
) -> Command {
    let mut cmd = Command::new(&s.ncu);
    cmd.args(["--clock-control", s.clock_control.name()])
        .args(["--cache-control", s.cache_control.name()]);
    if let Some(set) = s.collect.set {
        cmd.args(["--set", set.name()]);
    }
    for sec in &s.collect.sections {
        cmd.args(["--section", sec]);
    }
    if !s.collect.metrics.is_empty() {
        cmd.args(["--metrics", &s.collect.metrics.join(",")]);
    }
    if s.source {
        // The source files go into the report, so its Source page shows the lines as built.
        cmd.args(["--import-source", "yes"]);
    }
    // CUB launches kernels of its own choosing: only the NVTX range can pick its call.
    match if job.backend == Runner::Cub {
        Select::Nvtx
    } else {
        s.select
    } {
        Select::Nvtx => {
            cmd.args(["--nvtx", "--nvtx-include", NVTX_FILTER]);
        }
        Select::LaunchSkip => {
            cmd.args(["--kernel-name", &job.launches[0].entry]).args([
                "--launch-skip",
                "1",
                "--launch-count",
                "1",
            ]);
        }
    }
    cmd.arg("--export")
        .arg(report)
        .arg("--force-overwrite")
        .arg(&s.lab)
        .args(["run", "--from-plan"])
        .arg(plan)
        .args(["--placement", s.placement.name()])
        .arg("--manifest")
        .arg(manifest);
    cmd
}

/// Runs one job of `plan` under ncu and returns its rows (see the module docs for the files).
pub fn run_job(s: &Settings, plan: &Plan, job: &Job) -> Result<Vec<Profiled>> {
    std::fs::create_dir_all(&s.out_dir)
        .with_context(|| format!("creating {}", s.out_dir.display()))?;
    let file = |ext: &str| s.out_dir.join(format!("{}.{ext}", job.name));
    let (report, manifest) = (file("ncu-rep"), file("launches.json"));
    // ncu appends .ncu-rep to --export: give it a temporary stem in the same folder.
    let report_stem = s
        .out_dir
        .join(format!(".{}.tmp{}", job.name, std::process::id()));
    let report_tmp = PathBuf::from(format!("{}.ncu-rep", report_stem.display()));
    let manifest_tmp = files::temp_path(&manifest);
    let plan_tmp = files::temp_path(&file("plan.json"));
    let _ = std::fs::remove_file(&report_tmp);
    let _ = std::fs::remove_file(&manifest_tmp);
    let json = serde_json::to_string_pretty(&job_plan(plan, job)).expect("a plan serializes");
    std::fs::write(&plan_tmp, json).with_context(|| format!("writing {}", plan_tmp.display()))?;

    let mut cmd = ncu_command(s, job, &report_stem, &plan_tmp, &manifest_tmp);
    let ran = crate::process::run_tee(&mut cmd);
    let _ = std::fs::remove_file(&plan_tmp);
    let (status, console) = ran?;
    let logged = format!("+ {}\n{console}", crate::process::show(&cmd));
    write_atomic(&file("ncu.log"), logged.as_bytes())?;
    if let Some(problem) = tools::known_problem("ncu", &console) {
        bail!("{problem}");
    }
    if tools::profiled_nothing(&console) {
        bail!(
            "ncu profiled no kernel for {}: {}; see {}",
            job.name,
            match s.select {
                Select::Nvtx => format!(
                    "the NVTX filter '{NVTX_FILTER}' matched no launch; retry with --select launch-skip"
                ),
                Select::LaunchSkip => "no launch of that kernel name after the warm-up".into(),
            },
            file("ncu.log").display()
        );
    }
    if !report_tmp.is_file() {
        let why = console
            .lines()
            .find(|l| l.starts_with("==ERROR=="))
            .map_or(String::new(), |l| format!("{}; ", l.trim()));
        bail!(
            "ncu wrote no report ({}, {status}): {why}see {}",
            report_tmp.display(),
            file("ncu.log").display()
        );
    }
    files::commit(&report_tmp, &report)?;
    if manifest_tmp.is_file() {
        files::commit(&manifest_tmp, &manifest)?;
    } else {
        // Never pair this report with an older run's manifest.
        let _ = std::fs::remove_file(&manifest);
    }

    let csv = import_raw(&s.ncu, &report)?;
    write_atomic(&file("raw.csv"), csv.as_bytes())?;
    if s.source {
        for (page, print) in [
            (profiler::source::SASS_PAGE, "sass"),
            (profiler::source::CUDA_PAGE, "cuda,sass"),
        ] {
            let text = import_source(&s.ncu, &report, print)?;
            write_atomic(&file(page), text.as_bytes())?;
        }
    }
    let profiled = ncu_csv::parse_raw(&csv)
        .with_context(|| format!("parsing {}", file("raw.csv").display()))?;
    let launched = read_manifest(&manifest);
    if launched.is_none() {
        eprintln!(
            "warning: lab run wrote no manifest for {} ({}): results are not verified",
            job.name,
            if status.success() {
                "exit 0"
            } else {
                "it failed"
            }
        );
    }
    for l in launched.iter().flatten().filter(|l| !l.ok) {
        eprintln!(
            "warning: {} [{}] FAILED verification under ncu: {}",
            l.planned.entry, job.backend, l.check
        );
    }
    match_rows(job, profiled, launched.as_deref())
}

/// `ncu --import REPORT --page raw --csv`: the table every parser here reads.
pub fn import_raw(ncu: &Path, report: &Path) -> Result<String> {
    crate::process::output(
        Command::new(ncu)
            .arg("--import")
            .arg(report)
            .args(["--page", "raw", "--csv", "--print-units", "base"])
            .args(["--print-kernel-base", "function"]),
    )
}

/// `ncu --import REPORT --page source --csv --print-source WHAT`: `sass` (every instruction
/// with its counters) or `cuda,sass` (the instructions per source line).
pub fn import_source(ncu: &Path, report: &Path, what: &str) -> Result<String> {
    crate::process::output(Command::new(ncu).arg("--import").arg(report).args([
        "--page",
        "source",
        "--csv",
        "--print-source",
        what,
    ]))
}

fn read_manifest(path: &Path) -> Option<Vec<Launched>> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str::<Manifest>(&text)
        .ok()
        .map(|m| m.launches)
}

/// Pairs profiled launches with planned ones by kernel name: each planned kernel as many
/// times as the plan says it launches (once, or twice for a two-pass kernel).
pub fn match_rows(
    job: &Job,
    profiled: Vec<Launch>,
    launched: Option<&[Launched]>,
) -> Result<Vec<Profiled>> {
    let mut missing = Vec::new();
    for p in &job.launches {
        if p.backend == Runner::Cub {
            // CUB's call launches kernels of its own choosing: any of them will do.
            if profiled.is_empty() {
                missing.push(p.entry.clone());
            }
            continue;
        }
        match profiled
            .iter()
            .filter(|r| function_name(&r.kernel) == p.entry)
            .count()
        {
            0 => missing.push(p.entry.clone()),
            n if n == p.launches as usize => {}
            n => bail!(
                "{}: ncu profiled {} {n} times, expected {} (did the filter catch the warm-up?)",
                job.name,
                p.entry,
                p.launches
            ),
        }
    }
    if !missing.is_empty() {
        let got: Vec<&str> = profiled.iter().map(|p| p.kernel.as_str()).collect();
        bail!(
            "{}: ncu's report lacks {} (it holds: {})",
            job.name,
            missing.join(", "),
            if got.is_empty() {
                "nothing".into()
            } else {
                got.join(", ")
            }
        );
    }
    // Anything else in the report was not launched by the plan: say so, leave it out.
    let planned = |p: &Launch| {
        job.backend == Runner::Cub
            || job
                .launches
                .iter()
                .any(|l| l.entry == function_name(&p.kernel))
    };
    let (keep, extra): (Vec<Launch>, Vec<Launch>) = profiled.into_iter().partition(planned);
    for p in &extra {
        eprintln!(
            "warning: {}: ncu also profiled {}, which the plan did not launch; left out",
            job.name, p.kernel
        );
    }
    Ok(keep
        .into_iter()
        .map(|p| attach(Profiled::new(p, job.backend.name()), launched))
        .collect())
}

/// Adds what `lab run` reported about a row's launch: its grid, whether it was right.
fn attach(mut row: Profiled, launched: Option<&[Launched]>) -> Profiled {
    let f = function_name(&row.profiled.kernel).to_string();
    let cub = row.runner() == Some(Runner::Cub);
    if let Some(l) = launched.and_then(|ls| {
        ls.iter()
            .find(|l| l.planned.entry == f || (cub && l.planned.entry.starts_with("cub::")))
    }) {
        row.manifest_blocks = l.config.as_ref().map(|c| c.grid.0 as f64 * c.grid.1 as f64);
        row.verified = Some(l.ok);
    }
    row
}

/// The raw pages `--from` names: files as given, a folder as every `*.raw.csv` (or
/// `*.raw.csv.gz`) in it, by name.
pub fn raw_pages(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push(path.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("reading {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let n = p
                    .file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into());
                n.ends_with(".raw.csv") || n.ends_with(".raw.csv.gz")
            })
            .collect();
        if found.is_empty() {
            bail!(
                "{} holds no raw page (*.raw.csv or *.raw.csv.gz)",
                path.display()
            );
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// Whether every raw page `--from` names was written by a lab capture: its stem ends in a
/// runner's name (`profile-reduce_v3-llvm.raw.csv`); a program's capture is named after the
/// program.
pub fn lab_pages(paths: &[PathBuf]) -> Result<bool> {
    let profiled = |r: Runner| r != Runner::Driver;
    Ok(raw_pages(paths)?
        .iter()
        .all(|p| Runner::from_name(&stem(p).1).is_some_and(profiled)))
}

/// A raw page's stem (`dir/profile-reduce_v3-llvm` for `….raw.csv` or `….raw.csv.gz`, which
/// the files beside it share) and its backend (the stem's last `-` part).
pub fn stem(path: &Path) -> (PathBuf, String) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".raw.csv.gz")
        .or(name.strip_suffix(".raw.csv"))
        .or(name.strip_suffix(".csv"))
        .unwrap_or(&name);
    let backend = stem.rsplit('-').next().unwrap_or("unknown").to_string();
    (path.with_file_name(stem), backend)
}

/// Reads captured raw pages back (`--from`, see [`raw_pages`]): the backend and the manifest
/// (`<stem>.launches.json`) from the name, see [`stem`].
pub fn read_capture(paths: &[PathBuf]) -> Result<Vec<Profiled>> {
    let mut rows = Vec::new();
    for path in raw_pages(paths)? {
        let text = read_text(&path)?;
        let profiled =
            ncu_csv::parse_raw(&text).with_context(|| format!("parsing {}", path.display()))?;
        let (stem, backend) = stem(&path);
        let launched = read_manifest(&profiler::source::file(&stem, "launches.json"));
        for p in profiled {
            rows.push(attach(Profiled::new(p, &backend), launched.as_deref()));
        }
    }
    // Backends side by side.
    kernel_by_kernel(&mut rows, |_| ());
    Ok(rows)
}

/// Runs every job of a plan; results in plan order.
pub fn capture(s: &Settings, base: &str, plan: &Plan) -> Result<Vec<Profiled>> {
    let mut rows = Vec::new();
    for job in jobs(base, &plan.launches, s.select) {
        rows.extend(run_job(s, plan, &job)?);
    }
    // Plan order (kernel by kernel), then anything unplanned (e.g. CUB's kernels).
    let order = |r: &Profiled| {
        plan.launches
            .iter()
            .position(|p| {
                r.runner() == Some(p.backend)
                    && (p.entry == function_name(&r.profiled.kernel) || p.backend == Runner::Cub)
            })
            .unwrap_or(usize::MAX)
    };
    rows.sort_by_key(order);
    Ok(rows)
}
