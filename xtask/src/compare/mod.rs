//! `cargo xtask compare A B`: the chapter's step 7 — re-measure both, and check that the
//! metric moved for the reason you thought. One report of three parts:
//!
//! - time ([`time`], [`verdict`], [`live`]): both distributions and a verdict by one stated
//!   rule, live over rounds of `lab bench` until the verdict holds twice in a row, or from two
//!   results files;
//! - counters ([`counters`]): the chapter's ncu metrics side by side, and the predictions
//!   ([`predict`]) recorded with the experiment checked against them, the outcome written back
//!   to the experiment log;
//! - code ([`code`]): the SASS statistics that differ, and the hot-line diff.
//!
//! A and B are two kernels, one kernel from two compilers (`--backend llvm,nvcc`), or two
//! results files ([`pairs::Axis`]). Printed as text, JSON or CSV ([`render`]); the two time
//! distributions as an SVG ([`svg`]).

pub mod code;
pub mod counters;
pub mod live;
pub mod model;
pub mod pairs;
pub mod predict;
pub mod render;
pub mod svg;
pub mod time;
pub mod verdict;

use crate::experiment_log::{self, Entry};
use crate::profiler::metrics::Row as Profiled;
use crate::util;
use anyhow::{Context, Result, bail};
use catalog::records::{Report as Results, Row};
use catalog::{Backend, Dtype, Format};
use pairs::{Axis, Filter, Pair, Pairing, pair, some};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Version of the JSON document `--format json` prints (`docs/json-schema.md`).
pub const SCHEMA_VERSION: u32 = 1;

/// Live runs without `--backend` / `--dtype`: one compiler, one type (a round is two lab
/// processes; keep them short).
pub const LIVE_BACKEND: Backend = Backend::Llvm;
pub const LIVE_DTYPE: Dtype = Dtype::F32;

/// What the user asked for (the command line, parsed).
#[derive(Clone, Debug)]
pub struct Request {
    pub a: String,
    pub b: Option<String>,
    pub backends: Vec<Backend>,
    pub dtypes: Vec<Dtype>,
    /// Only these kernels (results files).
    pub kernels: Vec<String>,
    /// Read the kernels' rows from these results files instead of running them.
    pub from: Vec<PathBuf>,
    pub size: Option<String>,
    pub transpose: Option<String>,
    pub reps: u32,
    pub max_seconds: f64,
    pub no_ncu: bool,
    pub ncu_from: Vec<PathBuf>,
    pub predict: Option<String>,
    pub format: Format,
    pub svg: Option<PathBuf>,
    pub output: Option<PathBuf>,
    pub lab: Option<PathBuf>,
    pub log: Option<PathBuf>,
    /// Further `lab bench` flags.
    pub lab_args: Vec<String>,
}

/// Where the rows come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// Run `lab bench` for each side.
    Live {
        axis: Axis,
        filter: Filter,
        a: live::Side,
        b: live::Side,
    },
    /// Read results files: A's rows from `a`, B's from `b` (the same file for two kernels).
    Files {
        axis: Axis,
        filter: Filter,
        a: PathBuf,
        b: PathBuf,
    },
}

/// One results file, as the header names it.
#[derive(Clone, Debug, Serialize)]
pub struct FileInfo {
    pub path: String,
    pub commit: String,
    pub date: String,
    pub device: String,
    pub command_line: String,
}

impl FileInfo {
    fn of(path: &Path, r: &Results) -> FileInfo {
        let full = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let shown = full.strip_prefix(util::root()).unwrap_or(&full);
        FileInfo {
            path: shown.display().to_string(),
            commit: r.commit.clone(),
            date: r.date.clone(),
            device: device(r),
            command_line: r.command_line.clone(),
        }
    }
}

fn device(r: &Results) -> String {
    match &r.device.driver_version {
        Some(d) => format!("{}, driver {d}", r.device.name),
        None => r.device.name.clone(),
    }
}

/// How the times were measured.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    Live {
        rounds: usize,
        seconds: f64,
        max_seconds: f64,
        /// `settled` or `time limit`.
        stopped: String,
        /// Every run's results file is under it.
        folder: String,
        commit: String,
        device: String,
    },
    Files {
        a: FileInfo,
        b: FileInfo,
    },
}

/// A prediction checked on one pair.
#[derive(Clone, Debug, Serialize)]
pub struct PredictionCheck {
    pub pair: String,
    /// `--predict`, or the log entry it came from (`log: date commit, change`).
    pub source: String,
    pub prediction: String,
    pub checks: Vec<predict::Check>,
    pub summary: String,
}

/// One pair's hot lines.
#[derive(Clone, Debug, Serialize)]
pub struct HotLines {
    pub pair: String,
    pub lines: Vec<code::HotLine>,
}

/// Everything compare prints.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub command: String,
    pub date: String,
    /// What A and B are.
    pub a: String,
    pub b: String,
    pub axis: Axis,
    pub source: Source,
    pub rule: &'static str,
    pub time: Vec<time::TimeRow>,
    /// How the counters were measured, when they were.
    pub counters_how: Option<String>,
    pub counters: Vec<counters::CounterPair>,
    pub predictions: Vec<PredictionCheck>,
    pub code: Vec<code::CodeDiff>,
    pub hot_lines: Vec<HotLines>,
    /// What was left out and why, one line each.
    pub notes: Vec<String>,
}

/// `true` when `s` names a results file rather than a kernel.
fn is_file(s: &str) -> bool {
    s.ends_with(".json") || Path::new(s).is_file()
}

/// A side's kernel: exactly one catalogue kernel, without an element type.
fn kernel(name: &str) -> Result<&'static catalog::Kernel> {
    let sel = catalog::select(name).map_err(|e| anyhow::anyhow!("{e}"))?;
    match sel[..] {
        [s] if s.dtype.is_none() => Ok(s.kernel),
        [s] => bail!(
            "'{name}' names an element type: name the kernel ({}) and pick the type with --dtype",
            s.kernel.name
        ),
        _ => bail!(
            "'{name}' names {} kernels ({}): name one",
            sel.len(),
            sel.iter()
                .map(|s| s.kernel.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What to run or read, from the request; every refusal is one line.
pub fn plan(req: &Request) -> Result<Plan> {
    let names = |v: &[Backend]| v.iter().map(|b| b.name().to_string()).collect::<Vec<_>>();
    let dtypes: Vec<String> = req.dtypes.iter().map(|d| d.name().to_string()).collect();
    if is_file(&req.a) {
        let Some(b) = req.b.as_deref().filter(|b| is_file(b)) else {
            bail!(
                "compare {} needs a second results file to compare with (or two kernels)",
                req.a
            );
        };
        if !req.from.is_empty() {
            bail!("--from reads the rows of two kernels; A and B are results files already");
        }
        // Resolved once the files are read: they may hold kernels the catalogue no longer has.
        return Ok(Plan::Files {
            axis: Axis::Runs,
            filter: Filter {
                kernels: req.kernels.clone(),
                backends: names(&req.backends),
                dtypes,
            },
            a: PathBuf::from(&req.a),
            b: PathBuf::from(b),
        });
    }
    if req.b.as_deref().is_some_and(is_file) {
        bail!("give two kernels or two results files, not one of each");
    }
    if !req.kernels.is_empty() {
        bail!("--kernel filters two results files; with kernels, name them as A and B");
    }
    let ka = kernel(&req.a)?;
    let live = req.from.is_empty();
    let (axis, backends_a, backends_b) = match req.b.as_deref() {
        Some(b) => {
            let kb = kernel(b)?;
            let backends = match (&req.backends[..], live) {
                ([], true) => vec![LIVE_BACKEND],
                (list, _) => list.to_vec(),
            };
            let axis = Axis::Kernels {
                a: ka.name.into(),
                b: kb.name.into(),
            };
            (axis, backends.clone(), backends)
        }
        None => {
            let [x, y] = req.backends[..] else {
                bail!(
                    "compare {} with one kernel compares two compilers: add --backend llvm,nvcc (or name two kernels)",
                    req.a
                );
            };
            let axis = Axis::Backends {
                kernel: ka.name.into(),
                a: x.name().into(),
                b: y.name().into(),
            };
            (axis, vec![x], vec![y])
        }
    };
    let kb = match &axis {
        Axis::Kernels { b, .. } => kernel(b)?,
        _ => ka,
    };
    let filter = Filter {
        kernels: Vec::new(),
        backends: match axis {
            Axis::Kernels { .. } => names(&backends_a),
            _ => Vec::new(),
        },
        dtypes,
    };
    if !live {
        let (a, b) = match &req.from[..] {
            [f] => (f.clone(), f.clone()),
            [f, g] => (f.clone(), g.clone()),
            _ => bail!("--from takes one results file (both kernels' rows) or two (A's, then B's)"),
        };
        return Ok(Plan::Files { axis, filter, a, b });
    }
    for (k, backends) in [(ka, &backends_a), (kb, &backends_b)] {
        if let Some(b) = backends.iter().find(|b| !k.carried_by(**b)) {
            bail!(
                "{} is not compiled by {b} (it is by {}): pick another --backend",
                k.name,
                names(
                    &Backend::ALL
                        .into_iter()
                        .filter(|x| k.carried_by(*x))
                        .collect::<Vec<_>>()
                )
                .join(", ")
            );
        }
    }
    Ok(Plan::Live {
        axis,
        filter: Filter {
            dtypes: if req.dtypes.is_empty() {
                vec![LIVE_DTYPE.name().into()]
            } else {
                filter.dtypes
            },
            ..filter
        },
        a: live::Side {
            name: 'a',
            kernel: ka.name.into(),
            backends: backends_a,
        },
        b: live::Side {
            name: 'b',
            kernel: kb.name.into(),
            backends: backends_b,
        },
    })
}

/// `--kernel` names against two results files: a kernel either file has by that name, else the
/// catalogue's kernel the name selects (`v6`).
fn file_kernels(names: &[String], a: &Results, b: &Results) -> Result<Vec<String>> {
    let mut held: Vec<&str> = a
        .rows
        .iter()
        .chain(&b.rows)
        .map(|r| r.kernel.as_str())
        .collect();
    held.dedup();
    names
        .iter()
        .map(|n| {
            if held.contains(&n.as_str()) {
                return Ok(n.clone());
            }
            match kernel(n) {
                Ok(k) if held.contains(&k.name) => Ok(k.name.to_string()),
                _ => {
                    let mut all = held.clone();
                    all.sort_unstable();
                    all.dedup();
                    bail!(
                        "'{n}' names no kernel of these files (they hold {})",
                        all.join(", ")
                    )
                }
            }
        })
        .collect()
}

/// Why nothing paired, in one line.
pub(crate) fn nothing_paired(p: &Pairing, a: &Results, b: &Results) -> String {
    if !p.not_ok.is_empty() {
        return format!("no pair verified on both sides ({})", some(&p.not_ok, 3));
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            some(v, 3)
        }
    };
    if !p.only_a.is_empty() || !p.only_b.is_empty() {
        return format!(
            "no row of A has a partner in B (A: {}; B: {})",
            list(&p.only_a),
            list(&p.only_b)
        );
    }
    let labels = |r: &Results| r.rows.iter().map(Row::label).collect::<Vec<_>>();
    format!(
        "neither side has a row to compare (A has {}; B has {})",
        list(&labels(a)),
        list(&labels(b))
    )
}

/// The notes a pairing leaves: rows without a partner, pairs that did not verify.
fn pairing_notes(p: &Pairing) -> Vec<String> {
    let mut n = Vec::new();
    if !p.only_a.is_empty() {
        n.push(format!("only in A, not compared: {}", some(&p.only_a, 4)));
    }
    if !p.only_b.is_empty() {
        n.push(format!("only in B, not compared: {}", some(&p.only_b, 4)));
    }
    for x in &p.not_ok {
        n.push(format!("not compared: {x}"));
    }
    n
}

/// A comparison made, before anything is printed or written.
pub struct Compared {
    pub report: Report,
    /// Where the report files go (live runs' folder, or `--output`).
    pub out_dir: Option<PathBuf>,
    pub log_file: PathBuf,
    /// The experiment log as read, and the outcomes to write into it (entry index, outcome).
    pub log: Vec<Entry>,
    pub outcomes: Vec<(usize, String)>,
}

/// Runs the comparison and prints it; writes the outputs, the SVG, and the predictions'
/// outcomes to the experiment log.
pub fn run(req: &Request) -> Result<()> {
    let c = compare(req)?;
    let r = &c.report;
    let text = render::text(r);
    let json = serde_json::to_string_pretty(r)? + "\n";
    let csv = render::csv(r)?;
    crate::profiler::ncu::emit(
        c.out_dir.as_deref(),
        "compare",
        req.format,
        &text,
        &json,
        &csv,
    )?;
    if let Some(path) = &req.svg {
        let svg = svg::draw(r)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        crate::profiler::tools::write_atomic(path, svg.as_bytes())?;
        eprintln!("wrote {}", path.display());
    }
    if !c.outcomes.is_empty() {
        let mut entries = c.log;
        for (j, outcome) in &c.outcomes {
            entries[*j].outcome = outcome.clone();
        }
        experiment_log::write_all(&c.log_file, &entries)?;
        eprintln!(
            "wrote the outcome of {} prediction(s) into {}",
            c.outcomes.len(),
            c.log_file.display()
        );
    }
    Ok(())
}

/// Measures (or reads) both sides and builds the report.
pub fn compare(req: &Request) -> Result<Compared> {
    let flag_clauses = req.predict.as_deref().map(predict::parse).transpose()?;
    let plan = plan(req)?;
    let log_file = req
        .log
        .clone()
        .unwrap_or_else(|| experiment_log::path(&util::root()));
    let date = util::now_utc();
    let mut notes = Vec::new();

    // Time.
    let (axis, rounds, source, out_dir, lab, b_file, sides) = match &plan {
        Plan::Files { axis, filter, a, b } => {
            let (ra, rb) = (read(a)?, read(b)?);
            let filter = Filter {
                kernels: file_kernels(&filter.kernels, &ra, &rb)?,
                ..filter.clone()
            };
            let p = pair(axis, &filter, &ra.rows, &rb.rows);
            if p.pairs.is_empty() {
                bail!("nothing to compare: {}", nothing_paired(&p, &ra, &rb));
            }
            notes.extend(pairing_notes(&p));
            let source = Source::Files {
                a: FileInfo::of(a, &ra),
                b: FileInfo::of(b, &rb),
            };
            let b_name = b.file_name().map(|n| n.to_string_lossy().into_owned());
            (
                axis.clone(),
                vec![p],
                source,
                req.output.clone(),
                None,
                b_name,
                (ra, rb),
            )
        }
        Plan::Live { axis, filter, a, b } => {
            let lab = util::lab_binary(req.lab.as_deref())?;
            let dir = req
                .output
                .clone()
                .unwrap_or_else(|| default_folder(axis, &date));
            let opts = live::Options {
                dtypes: filter
                    .dtypes
                    .iter()
                    .filter_map(|d| Dtype::from_name(d))
                    .collect(),
                size: req.size.clone(),
                transpose: req.transpose.clone(),
                reps: req.reps,
                extra: req.lab_args.clone(),
                max_seconds: req.max_seconds,
                out: dir.clone(),
            };
            let mut bench = |_: &live::Side, args: &[String]| live::run_lab(&lab, args);
            let l = live::rounds(&opts, a, b, axis, filter, &mut bench)?;
            if let Some(last) = l.rounds.last() {
                notes.extend(pairing_notes(last));
            }
            let source = Source::Live {
                rounds: l.rounds.len(),
                seconds: l.seconds,
                max_seconds: req.max_seconds,
                stopped: l.stopped.into(),
                folder: dir
                    .strip_prefix(util::root())
                    .unwrap_or(&dir)
                    .display()
                    .to_string(),
                commit: l.last_a.commit.clone(),
                device: device(&l.last_a),
            };
            (
                axis.clone(),
                l.rounds,
                source,
                Some(dir),
                Some(lab),
                None,
                (l.last_a, l.last_b),
            )
        }
    };
    let live = matches!(plan, Plan::Live { .. });
    let mut times = time::tabulate(&rounds, live);
    let pairs: Vec<Pair> = rounds.last().map(|r| r.pairs.clone()).unwrap_or_default();
    notes.extend(model::fill(&mut times, &pairs, &sides.0, &sides.1));

    // The predictions: --predict for every pair, and each pair's pending log entry.
    let log_entries = experiment_log::read(&log_file).unwrap_or_else(|e| {
        notes.push(format!("experiment log not read: {e:#}"));
        Vec::new()
    });
    let mut wanted: Vec<(usize, String, String, Option<usize>)> = Vec::new(); // (pair, source, spec, log index)
    for (i, p) in pairs.iter().enumerate() {
        if let Some(spec) = &req.predict {
            wanted.push((i, "--predict".into(), spec.clone(), None));
        }
        if let Some(j) = pending(&log_entries, &p.b, b_file.as_deref()) {
            let e = &log_entries[j];
            let short: String = e.commit.chars().take(7).collect();
            let source = format!("log: {} {short}, {}", e.date, e.change);
            wanted.push((i, source, e.prediction.clone(), Some(j)));
        }
    }
    let mut extra_metrics: Vec<String> = Vec::new();
    for (_, _, spec, _) in &wanted {
        // A log entry's prediction was checked when it was recorded; one that no longer parses
        // is reported on its pair below.
        if let Ok(c) = predict::parse(spec) {
            extra_metrics.extend(predict::raw_metrics(&c));
        }
    }
    let mut seen = Vec::new();
    extra_metrics.retain(|m| {
        let new = !seen.contains(m);
        seen.push(m.clone());
        new
    });

    // Counters.
    let (profiled, counters_how) = profiled_rows(
        req,
        &plan,
        &pairs,
        out_dir.as_deref(),
        lab.as_deref(),
        &extra_metrics,
        &mut notes,
    );
    let family = pairs.first().map(|p| p.a.section);
    let cols = family.and_then(counters::columns).unwrap_or_default();
    let mut counter_pairs = Vec::new();
    let mut found: Vec<Option<(&Profiled, &Profiled)>> = Vec::new();
    for p in &pairs {
        let hit = profiled.as_ref().and_then(|(ra, rb, size)| {
            if size.as_deref().is_some_and(|s| s != p.a.size) {
                return None;
            }
            Some((
                counters::find(ra, &p.a.kernel, &p.a.backend, &p.a.dtype)?,
                counters::find(rb, &p.b.kernel, &p.b.backend, &p.b.dtype)?,
            ))
        });
        if let Some((a, b)) = hit {
            counter_pairs.push(counters::side_by_side(
                &p.label,
                a,
                b,
                &cols,
                &extra_metrics,
            ));
        } else if profiled.is_some() {
            notes.push(format!(
                "counters: {} has no profiled launch on both sides",
                p.label
            ));
        }
        found.push(hit);
    }

    let mut checks = Vec::new();
    let mut outcomes: Vec<(usize, String)> = Vec::new();
    for (i, source, spec, log_index) in &wanted {
        let p = &pairs[*i];
        let clauses = match (&flag_clauses, log_index) {
            (Some(c), None) => c.clone(),
            _ => match predict::parse(spec) {
                Ok(c) => c,
                Err(e) => {
                    notes.push(format!(
                        "{}: the logged prediction '{spec}' does not parse: {e}",
                        p.label
                    ));
                    continue;
                }
            },
        };
        let time_side = times
            .iter()
            .find(|t| t.label == p.label)
            .map(|t| predict::TimeSide {
                a_us: t.a.median_us,
                b_us: t.b.median_us,
                verdict: t.verdict,
            });
        let hit = found[*i];
        let lookup = |name: &str| hit.and_then(|(a, b)| counters::value(a, b, &cols, name));
        let c = predict::check(&clauses, time_side, &lookup);
        let summary = predict::summary(&c);
        if let Some(j) = log_index {
            if c.iter().all(|x| x.outcome == predict::Outcome::Unmeasured) {
                notes.push(format!(
                    "{}: the logged prediction stays unchecked: nothing it names was measured",
                    p.label
                ));
            } else {
                outcomes.push((*j, format!("{summary} (cargo xtask compare, {date})")));
            }
        }
        checks.push(PredictionCheck {
            pair: p.label.clone(),
            source: source.clone(),
            prediction: spec.clone(),
            checks: c,
            summary,
        });
    }

    // Code.
    let code = code_diffs(&axis, &pairs, &source, &mut notes);
    let hot_lines = hot_lines(req, &plan, &pairs, out_dir.as_deref(), &mut notes);
    if hot_lines.is_empty() && !notes.iter().any(|n| n.starts_with("hot lines")) {
        notes.push(
            "hot lines: not collected (no Source page: a live capture exports one; --ncu-from reads <stem>.source-sass.csv beside each raw page)"
                .into(),
        );
    }

    let (a_name, b_name) = axis.side_names();
    let report = Report {
        schema_version: SCHEMA_VERSION,
        command: format!(
            "cargo xtask {}",
            std::env::args().skip(1).collect::<Vec<_>>().join(" ")
        ),
        date: date.clone(),
        a: a_name,
        b: b_name,
        axis,
        source,
        rule: verdict::RULE,
        time: times,
        counters_how,
        counters: counter_pairs,
        predictions: checks,
        code,
        hot_lines,
        notes,
    };
    Ok(Compared {
        report,
        out_dir,
        log_file,
        log: log_entries,
        outcomes,
    })
}

/// Lines the hot-line diff keeps per pair.
pub const HOT_LINES: usize = 10;

fn read(path: &Path) -> Result<Results> {
    crate::plot::results::read(path)
}

/// `results/compare/reduce_v3-vs-reduce_v5-20261130T120000Z`.
fn default_folder(axis: &Axis, date: &str) -> PathBuf {
    let stamp: String = date.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let what = match axis {
        Axis::Kernels { a, b } => format!("{a}-vs-{b}"),
        Axis::Backends { kernel, a, b } => format!("{kernel}-{a}-vs-{b}"),
        Axis::Runs => "runs".into(),
    };
    util::root()
        .join("results/compare")
        .join(format!("{what}-{stamp}"))
}

/// The newest log entry for `b`'s row with a prediction not yet checked (from results file
/// `file`, when B is one).
fn pending(entries: &[Entry], b: &Row, file: Option<&str>) -> Option<usize> {
    let label = experiment_log::kernel_label(b);
    entries.iter().rposition(|e| {
        e.kernel == label
            && !e.prediction.trim().is_empty()
            && e.outcome.trim().is_empty()
            && file.is_none_or(|f| {
                e.metrics
                    .split_whitespace()
                    .any(|m| m == format!("file={f}"))
            })
    })
}

/// A's and B's profiled launches (and the size they were profiled at, when known), or a note
/// saying why there are none.
type ProfiledSides = Option<(Vec<Profiled>, Vec<Profiled>, Option<String>)>;

fn profiled_rows(
    req: &Request,
    plan: &Plan,
    pairs: &[Pair],
    out_dir: Option<&Path>,
    lab: Option<&Path>,
    extra: &[String],
    notes: &mut Vec<String>,
) -> (ProfiledSides, Option<String>) {
    if !req.ncu_from.is_empty() {
        return match crate::profiler::capture::read_capture(&req.ncu_from) {
            Ok(rows) => {
                let files: Vec<String> = req
                    .ncu_from
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                let how = format!(
                    "read back from {} (captured on its own: its size may differ from the timed rows')",
                    files.join(", ")
                );
                (Some((rows.clone(), rows, None)), Some(how))
            }
            Err(e) => {
                notes.push(format!("counters: not read: {e:#}"));
                (None, None)
            }
        };
    }
    let (Plan::Live { a, b, .. }, Some(dir), Some(first)) = (plan, out_dir, pairs.first()) else {
        if !req.no_ncu {
            notes.push(
                "counters: not measured (results files hold times only; --ncu-from RAW.csv … adds captured counters)"
                    .into(),
            );
        }
        return (None, None);
    };
    if req.no_ncu {
        notes.push("counters: not measured (--no-ncu)".into());
        return (None, None);
    }
    let Some(family) = Some(first.a.section).filter(|f| counters::columns(*f).is_some()) else {
        notes.push(format!(
            "counters: no chapter metrics for {} kernels",
            first.a.section.name()
        ));
        return (None, None);
    };
    if let Err(e) = crate::profiler::tools::NCU.find() {
        notes.push(format!("counters: not measured: {e}"));
        return (None, None);
    }
    let dtypes: Vec<&str> = {
        let mut d: Vec<&str> = pairs.iter().map(|p| p.a.dtype.as_str()).collect();
        d.dedup();
        d
    };
    let size_args = counters::size_args(&first.a);
    let capture_side = |side: &live::Side| -> Result<(Vec<Profiled>, String)> {
        let mut rows = Vec::new();
        let mut how = String::new();
        for backend in &side.backends {
            let base = format!("ncu-{}", side.name);
            let (r, h) = counters::capture(
                dir,
                lab,
                &base,
                &side.kernel,
                *backend,
                &dtypes,
                counters::collect_for(family, extra),
                size_args.clone(),
            )?;
            rows.extend(r);
            how = h;
        }
        Ok((rows, how))
    };
    match (capture_side(a), capture_side(b)) {
        (Ok((ra, how)), Ok((rb, _))) => {
            if pairs.iter().any(|p| p.a.size != first.a.size) {
                notes.push(format!("counters: profiled at {} only", first.a.size));
            }
            let how = format!("{how}; {} {}", first.a.size, dtypes.join(","));
            (Some((ra, rb, Some(first.a.size.clone()))), Some(how))
        }
        (Err(e), _) | (_, Err(e)) => {
            notes.push(format!("counters: not measured: {e:#}"));
            (None, None)
        }
    }
}

/// The captures whose Source pages hold A's and B's kernels: the raw pages' stems (`--ncu-from`,
/// both sides), or a live capture's `ncu-a-*` and `ncu-b-*` in `out_dir`; and whether the line
/// map is saved with them (made at capture time, from the PTX the kernels ran).
fn capture_stems(
    req: &Request,
    plan: &Plan,
    out_dir: Option<&Path>,
) -> Option<(Vec<PathBuf>, Vec<PathBuf>, bool)> {
    use crate::profiler::capture::{raw_pages, stem};
    if !req.ncu_from.is_empty() {
        let stems: Vec<PathBuf> = raw_pages(&req.ncu_from)
            .ok()?
            .iter()
            .map(|p| stem(p).0)
            .collect();
        return Some((stems.clone(), stems, false));
    }
    let (Plan::Live { .. }, Some(dir), false) = (plan, out_dir, req.no_ncu) else {
        return None;
    };
    let stems: Vec<PathBuf> = raw_pages(&[dir.to_path_buf()])
        .ok()?
        .iter()
        .map(|p| stem(p).0)
        .collect();
    let side = |prefix: &str| -> Vec<PathBuf> {
        stems
            .iter()
            .filter(|s| {
                s.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            })
            .cloned()
            .collect()
    };
    Some((side("ncu-a-"), side("ncu-b-"), true))
}

/// The capture among `stems` whose Source page holds `row`'s kernel from its backend, and that
/// kernel's function name.
fn source_stem(stems: &[PathBuf], row: &Row) -> Option<(PathBuf, String)> {
    use crate::profiler::{capture, source};
    let function = catalog::kernels::find(&row.kernel)?.entry(Dtype::from_name(&row.dtype)?);
    let stem = stems.iter().find(|s| {
        capture::stem(&source::file(s, "raw.csv")).1 == row.backend
            && std::fs::read_to_string(source::file(s, source::SASS_PAGE))
                .is_ok_and(|t| t.contains(&format!("\"Kernel Name\",\"{function}\"")))
    })?;
    Some((stem.clone(), function))
}

/// Each pair's hot-line diff, from the Source pages of its capture; a note for each pair
/// without one.
fn hot_lines(
    req: &Request,
    plan: &Plan,
    pairs: &[Pair],
    out_dir: Option<&Path>,
    notes: &mut Vec<String>,
) -> Vec<HotLines> {
    let Some((stems_a, stems_b, save)) = capture_stems(req, plan, out_dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in pairs {
        let side = |stems: &[PathBuf], row: &Row| -> Result<code::KernelLines, String> {
            let (stem, function) = source_stem(stems, row).ok_or_else(|| {
                format!(
                    "no Source page beside the capture holds {} [{}]",
                    row.kernel, row.backend
                )
            })?;
            code::kernel_lines(&stem, &row.backend, &function, save).map_err(|e| format!("{e:#}"))
        };
        match (side(&stems_a, &p.a), side(&stems_b, &p.b)) {
            (Ok(a), Ok(b)) => out.push(HotLines {
                pair: p.label.clone(),
                lines: code::hot_lines(&a, &b, HOT_LINES),
            }),
            (Err(e), _) | (_, Err(e)) => notes.push(format!("hot lines: {}: {e}", p.label)),
        }
    }
    out
}

/// The SASS diffs of the pairs' kernels (none for two runs of the same kernels).
fn code_diffs(
    axis: &Axis,
    pairs: &[Pair],
    source: &Source,
    notes: &mut Vec<String>,
) -> Vec<code::CodeDiff> {
    if *axis == Axis::Runs {
        notes.push("code: the same kernels on both sides; not compared".into());
        return Vec::new();
    }
    let side = |r: &Row| -> Option<(String, Backend)> {
        let k = catalog::kernels::find(&r.kernel)?;
        Some((
            k.entry(Dtype::from_name(&r.dtype)?),
            Backend::from_name(&r.backend)?,
        ))
    };
    let mut wanted = Vec::new();
    for p in pairs {
        if let (Some(a), Some(b)) = (side(&p.a), side(&p.b))
            && !wanted.contains(&(a.clone(), b.clone()))
        {
            wanted.push((a, b));
        }
    }
    if wanted.is_empty() {
        return Vec::new();
    }
    match code::sass_diffs(&wanted) {
        Ok(d) => {
            let tree = util::git_commit(&util::root());
            let measured = match source {
                Source::Live { commit, .. } => commit.clone(),
                Source::Files { a, .. } => a.commit.clone(),
            };
            let short: String = measured.chars().take(7).collect();
            if !tree.starts_with(&short) || short.is_empty() {
                notes.push(format!(
                    "code: SASS of this tree's PTX (commit {tree}); the times are from commit {}",
                    if short.is_empty() { "unknown" } else { &short }
                ));
            }
            d
        }
        Err(e) => {
            notes.push(format!("code: not compared: {e:#}"));
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests;
