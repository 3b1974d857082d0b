//! `cargo xtask compare A B`: the chapter's step 7 — re-measure both, and check that the
//! metric moved for the reason you thought. One report of three parts:
//!
//! - time ([`time`], [`verdict`], [`live`]): both distributions and a verdict by one stated
//!   rule, live over rounds of `lab bench` until the verdict holds twice in a row, or from two
//!   results files;
//! - counters ([`counters`]): the chapter's ncu metrics side by side, and the claims
//!   ([`claims`], `--predict`) recorded with the experiment checked against them, the outcome written back
//!   to the experiment log;
//! - code ([`code`]): the SASS statistics that differ, and the hot-line diff.
//!
//! A and B are two kernels, one kernel from two compilers (`--backend llvm,nvcc`), or two
//! results files ([`pairs::Axis`]). Printed as text, JSON or CSV ([`render`]); the two time
//! distributions as an SVG ([`svg`]).

pub mod capture;
pub mod claims;
pub mod code;
pub mod counters;
pub mod live;
pub mod model;
pub mod pairs;
pub mod plan;
pub mod render;
pub mod svg;
pub mod time;
pub mod verdict;

use crate::experiment_log::{self, Entry};
use crate::profiles::metrics::Profiled as Launch;
use crate::util;
use anyhow::{Context, Result, bail};
use catalog::records::{Report as Results, Row};
use catalog::{Backend, Dtype, Format};
use pairs::{Axis, Filter, Pair, Pairing, pair, some};
use serde::Serialize;
use std::path::{Path, PathBuf};

use capture::hot_lines;
use code::code_diffs;
use counters::profiled_rows;
pub use plan::{LIVE_BACKEND, LIVE_DTYPE, Plan, plan};
use plan::{file_kernels, pairing_notes};

/// Version of the JSON document `--format json` prints (`docs/json-schema.md`).
pub const SCHEMA_VERSION: u32 = 1;

/// What the user asked for (the command line, parsed).
#[derive(Clone, Debug)]
pub struct CompareRequest {
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
    pub checks: Vec<claims::Check>,
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
pub fn run(req: &CompareRequest) -> Result<()> {
    let c = compare(req)?;
    let r = &c.report;
    let text = render::text(r);
    let json = serde_json::to_string_pretty(r)? + "\n";
    let csv = render::csv(r)?;
    crate::profiles::ncu::emit(
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
        files::write_atomic(path, svg.as_bytes())?;
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
pub fn compare(req: &CompareRequest) -> Result<Compared> {
    let flag_clauses = req.predict.as_deref().map(claims::parse).transpose()?;
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
                dtypes: filter.dtypes.clone(),
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
        if let Ok(c) = claims::parse(spec) {
            extra_metrics.extend(claims::raw_metrics(&c));
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
    let mut found: Vec<Option<(&Launch, &Launch)>> = Vec::new();
    for p in &pairs {
        let hit = profiled.as_ref().and_then(|(ra, rb, size)| {
            if size.as_deref().is_some_and(|s| s != p.a.size) {
                return None;
            }
            Some((
                counters::find(ra, &p.a.kernel, p.a.backend, p.a.dtype)?,
                counters::find(rb, &p.b.kernel, p.b.backend, p.b.dtype)?,
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
            _ => match claims::parse(spec) {
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
            .map(|t| claims::TimeSide {
                a_us: t.a.median_us,
                b_us: t.b.median_us,
                verdict: t.verdict,
            });
        let hit = found[*i];
        let lookup = |name: &str| hit.and_then(|(a, b)| counters::value(a, b, &cols, name));
        let c = claims::check(&clauses, time_side, &lookup);
        let summary = claims::summary(&c);
        if let Some(j) = log_index {
            if c.iter().all(|x| x.outcome == claims::Outcome::Unmeasured) {
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

#[cfg(test)]
mod tests;
