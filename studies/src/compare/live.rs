//! Live timing: rounds of `lab bench`, A and B each a fresh process (alternating which goes
//! first, so neither always runs on a GPU the other just warmed), until every pair's verdict
//! is the same two rounds in a row or the time limit is reached.

use super::pairs::{Axis, Filter, Pairing, pair};
use super::time::tabulate;
use super::verdict::settled;
use anyhow::{Context, Result, bail};
use catalog::records::Report;
use catalog::{Backend, Dtype};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One side's `lab bench` selection.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// `a` or `b`: the side's name in file and folder names.
    pub name: char,
    pub kernel: String,
    pub backends: Vec<Backend>,
}

/// What every round runs with.
#[derive(Clone, Debug)]
pub struct Options {
    pub dtypes: Vec<Dtype>,
    /// `--size` for lab, as given (lab parses it).
    pub size: Option<String>,
    /// `--transpose` for lab, as given.
    pub transpose: Option<String>,
    pub reps: u32,
    /// Further `lab bench` flags, passed through.
    pub extra: Vec<String>,
    pub max_seconds: f64,
    /// Each run's results file goes into `<out>/round-NN-<side>/`.
    pub out: PathBuf,
}

/// The `lab bench` flags of one side's run, its results written into `dir`.
pub fn bench_args(side: &Side, o: &Options, dir: &Path) -> Vec<String> {
    let list = |v: Vec<&str>| v.join(",");
    let mut a = vec![
        "--kernel".to_string(),
        side.kernel.clone(),
        "--backend".into(),
        list(side.backends.iter().map(|b| b.name()).collect()),
        "--dtype".into(),
        list(o.dtypes.iter().map(|d| d.name()).collect()),
        "--reps".into(),
        o.reps.to_string(),
    ];
    if let Some(s) = &o.size {
        a.extend(["--size".into(), s.clone()]);
    }
    if let Some(t) = &o.transpose {
        a.extend(["--transpose".into(), t.clone()]);
    }
    a.extend(o.extra.iter().cloned());
    a.extend([
        "--format".into(),
        "json".into(),
        "--quiet".into(),
        "--out".into(),
        dir.display().to_string(),
    ]);
    a
}

/// What the rounds measured.
pub struct Live {
    /// Per round: the pairing of that round's A and B rows.
    pub rounds: Vec<Pairing>,
    /// The last round's reports (for the header: commit, device).
    pub last_a: Report,
    pub last_b: Report,
    pub seconds: f64,
    /// `settled` or `time limit`.
    pub stopped: &'static str,
}

/// Runs rounds with `bench` (a side and its flags → the run's report) until every pair has
/// settled or another round would pass `max_seconds`. Progress goes to stderr, a line a round.
pub fn rounds(
    o: &Options,
    a: &Side,
    b: &Side,
    axis: &Axis,
    filter: &Filter,
    bench: &mut dyn FnMut(&Side, &[String]) -> Result<Report>,
) -> Result<Live> {
    let start = Instant::now();
    let mut rounds: Vec<Pairing> = Vec::new();
    loop {
        let round = rounds.len() + 1;
        let t0 = Instant::now();
        let order = if round % 2 == 1 { [a, b] } else { [b, a] };
        let mut got: Vec<(char, Report)> = Vec::new();
        for side in order {
            let dir = o.out.join(format!("round-{round:02}-{}", side.name));
            let report = bench(side, &bench_args(side, o, &dir)).inspect_err(|_| {
                // Nothing measured: leave no empty folders behind (a folder with files stays).
                let _ = std::fs::remove_dir(&dir);
                let _ = std::fs::remove_dir(&o.out);
            })?;
            got.push((side.name, report));
        }
        let report = |n: char| {
            got.iter()
                .find(|(s, _)| *s == n)
                .expect("both ran")
                .1
                .clone()
        };
        let (ra, rb) = (report(a.name), report(b.name));
        let p = pair(axis, filter, &ra.rows, &rb.rows);
        if p.pairs.is_empty() {
            bail!(
                "round {round}: nothing to compare: {}",
                super::nothing_paired(&p, &ra, &rb)
            );
        }
        rounds.push(p);
        let table = tabulate(&rounds, true);
        let verdicts: Vec<String> = table
            .iter()
            .map(|t| {
                let j = t.rounds.last().expect("a round");
                format!("{} {} ({:+.2}%)", t.label, j.verdict.name(), j.delta_pct)
            })
            .collect();
        eprintln!("compare: round {round}: {}", verdicts.join("; "));
        let all_settled = table.iter().all(|t| {
            let v: Vec<_> = t.rounds.iter().map(|j| j.verdict).collect();
            settled(&v) != super::verdict::Verdict::Unsettled
        });
        let elapsed = start.elapsed().as_secs_f64();
        let stopped = if all_settled {
            Some("settled")
        } else if elapsed + t0.elapsed().as_secs_f64() > o.max_seconds {
            Some("time limit")
        } else {
            None
        };
        if let Some(stopped) = stopped {
            return Ok(Live {
                rounds,
                last_a: ra,
                last_b: rb,
                seconds: elapsed,
                stopped,
            });
        }
    }
}

/// Runs `lab bench ARGS` quietly and reads the report it prints (`--format json`); a failure
/// is one line: no GPU, or lab's own error.
pub fn run_lab(lab: &Path, args: &[String]) -> Result<Report> {
    let mut cmd = Command::new(lab);
    cmd.current_dir(crate::util::root()).arg("bench").args(args);
    eprintln!("+ {}", crate::process::show(&cmd));
    let out = cmd
        .output()
        .with_context(|| format!("could not start '{}'", lab.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("{}", refusal(&out.status.to_string(), &stderr));
    }
    crate::plot::results::parse(&String::from_utf8_lossy(&out.stdout))
        .context("reading the report lab bench printed")
}

/// The one line a failed `lab bench` ends compare with.
pub fn refusal(status: &str, stderr: &str) -> String {
    const WITHOUT: &str = "compare runs the kernels on a GPU; without one, compare two results \
                           files (cargo xtask compare A.json B.json) or read rows with --from";
    if stderr.contains("libcuda.so") {
        return format!("no CUDA driver on this machine (lab cannot load libcuda.so.1): {WITHOUT}");
    }
    if stderr.contains("no CUDA device") {
        return format!("no CUDA device found: {WITHOUT}");
    }
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .or_else(|| stderr.lines().rev().find(|l| !l.trim().is_empty()))
        .unwrap_or("")
        .trim_start_matches("error: ")
        .trim();
    format!("lab bench failed ({status}): {line}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::Family;
    use catalog::records::{Row, Status};

    fn opts(max_seconds: f64) -> Options {
        Options {
            dtypes: vec![Dtype::F32],
            size: Some("2^20".into()),
            transpose: None,
            reps: 20,
            extra: vec!["--cache".into(), "cold".into()],
            max_seconds,
            out: PathBuf::from("/tmp/cmp"),
        }
    }

    fn side(name: char, kernel: &str) -> Side {
        Side {
            name,
            kernel: kernel.into(),
            backends: vec![Backend::Llvm],
        }
    }

    #[test]
    fn a_side_runs_its_kernel_with_the_shared_flags() {
        let args = bench_args(&side('a', "reduce_v3"), &opts(60.0), Path::new("/o/r1"));
        assert_eq!(
            args.join(" "),
            "--kernel reduce_v3 --backend llvm --dtype f32 --reps 20 --size 2^20 --cache cold \
             --format json --quiet --out /o/r1"
        );
    }

    /// A report of `kernel` whose 20 samples sit around `median` (±1 %).
    fn report(kernel: &str, median: f64) -> Report {
        let mut r = Row::new(
            Family::Reduce,
            kernel,
            Backend::Llvm,
            Dtype::F32,
            1 << 20,
            "2^20".into(),
            4,
        );
        r.status = Status::Ok;
        r.samples_us = (0..20)
            .map(|i| median * (0.99 + 0.001 * i as f64))
            .collect();
        r.reps = 20;
        (r.median_us, r.min_us, r.max_us) =
            (Some(median), Some(median * 0.99), Some(median * 1.01));
        let mut ceiling = r.clone();
        ceiling.kernel = "read_stream".into();
        serde_json::from_value(serde_json::json!({
            "schema_version": 1, "commit": "abc", "rows": [ceiling, r]
        }))
        .unwrap()
    }

    #[test]
    fn rounds_alternate_and_stop_when_every_verdict_repeats() {
        let (a, b) = (side('a', "reduce_v3"), side('b', "reduce_v5"));
        let axis = Axis::Kernels {
            a: "reduce_v3".into(),
            b: "reduce_v5".into(),
        };
        // B: the same as A in round 1, then clearly faster.
        let mut calls: Vec<String> = Vec::new();
        let mut bench = |s: &Side, args: &[String]| -> Result<Report> {
            let dir = args.last().unwrap().clone();
            calls.push(format!("{}:{dir}", s.name));
            let round = calls.len().div_ceil(2);
            Ok(match (s.name, round) {
                ('a', _) => report(&s.kernel, 100.0),
                (_, 1) => report(&s.kernel, 100.5),
                _ => report(&s.kernel, 60.0),
            })
        };
        let live = rounds(&opts(600.0), &a, &b, &axis, &Filter::default(), &mut bench).unwrap();
        assert_eq!(live.stopped, "settled");
        assert_eq!(live.rounds.len(), 3);
        assert_eq!(
            calls,
            [
                "a:/tmp/cmp/round-01-a",
                "b:/tmp/cmp/round-01-b",
                "b:/tmp/cmp/round-02-b",
                "a:/tmp/cmp/round-02-a",
                "a:/tmp/cmp/round-03-a",
                "b:/tmp/cmp/round-03-b"
            ]
        );
        let t = tabulate(&live.rounds, true);
        assert_eq!(t[0].verdict, crate::compare::verdict::Verdict::Faster);
    }

    #[test]
    fn the_time_limit_ends_the_rounds_unsettled() {
        let (a, b) = (side('a', "reduce_v3"), side('b', "reduce_v5"));
        let axis = Axis::Kernels {
            a: "reduce_v3".into(),
            b: "reduce_v5".into(),
        };
        let mut bench = |s: &Side, _: &[String]| Ok(report(&s.kernel, 100.0));
        let live = rounds(&opts(0.0), &a, &b, &axis, &Filter::default(), &mut bench).unwrap();
        assert_eq!((live.stopped, live.rounds.len()), ("time limit", 1));
        assert_eq!(
            tabulate(&live.rounds, true)[0].verdict,
            crate::compare::verdict::Verdict::Unsettled
        );
        // Rows that never pair: one line saying what each side had.
        let mut other = |s: &Side, _: &[String]| Ok(report(&format!("{}_x", s.kernel), 1.0));
        let e = rounds(&opts(0.0), &a, &b, &axis, &Filter::default(), &mut other)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("round 1: nothing to compare"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn a_failed_lab_is_one_line_that_says_what_to_do() {
        let e = refusal(
            "exit status: 127",
            "target/release/lab: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory\n",
        );
        assert!(e.starts_with("no CUDA driver on this machine"), "{e}");
        assert!(e.contains("A.json B.json"));
        let e = refusal(
            "exit status: 1",
            "error: no CUDA device found (the driver loaded but reports none): run on a machine with an NVIDIA GPU\n",
        );
        assert!(e.starts_with("no CUDA device found: compare runs"), "{e}");
        let e = refusal(
            "exit status: 1",
            "progress\nerror: 1 bench row(s) FAILED (see the table)\n",
        );
        assert_eq!(
            e,
            "lab bench failed (exit status: 1): 1 bench row(s) FAILED (see the table)"
        );
    }
}
