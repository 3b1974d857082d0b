//! `cargo xtask bench`: runs `lab bench` (the host binary beside this one) with every flag
//! passed through, and has it write its results file under `results/bench/` (unless `--out DIR`
//! is given). xtask's own flags are taken out before lab sees them:
//! - `--record "change; hypothesis"` appends the measured rows to the experiment log
//!   ([`studies::experiment_log`]); with `--predict "COUNTER down 30%, …"` the prediction goes
//!   with them, for `cargo xtask compare` to check ([`studies::compare::claims`]);
//! - `--plot DIR` draws the run's charts into DIR (as `cargo xtask plot`);
//! - `--peers` (with the row-wise family) runs `gpu/rows/peers.sh --lab` after the bench, the
//!   peers and the bench's Rust kernels timed in one rotation in the same session, and prints
//!   Part II's table (`cargo xtask rows-table`), written beside the results file as
//!   `rows-table-<stem>.{txt,json}`.
//!
//! The results file they read is the one lab says it wrote (its `wrote PATH` lines).

use anyhow::{Context, Result, bail};
use catalog::cli::bench::{Args as BenchArgs, Plan as BenchPlan};
use catalog::records::{Report, Status};
use catalog::{Backend, Family};
use std::path::{Path, PathBuf};
use std::process::Command;
use studies::experiment_log::{self, Entry, parse_record};
use studies::{plot, util};

/// Where results files go, relative to the repository root.
pub const RESULTS_DIR: &str = "results/bench";

/// Runs `lab bench` with `args` (lab's flags and xtask's own); `quiet`: xtask's global
/// `--quiet`, handed on to lab. Every flag, kernel name and size is checked here first, so a
/// mistake ends in one line on any machine, before lab (which needs the CUDA driver to start)
/// runs.
pub fn run(args: &[String], quiet: bool) -> Result<()> {
    let root = util::root();
    let (own, lab_args) = take_own(args)?;
    if lab_args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{}{}", lab_help(), own_flags_help());
        return Ok(());
    }
    check_lab_flags(&lab_args)?;
    if own.predict.is_some() && own.record.is_none() {
        bail!(
            "--predict goes with --record \"change; hypothesis\": the prediction is stored with the experiment"
        );
    }
    let lab = util::lab_binary(None)?;
    let mut cmd = Command::new(&lab);
    cmd.current_dir(&root).arg("bench").args(&lab_args);
    if quiet && !lab_args.iter().any(|a| a == "--quiet") {
        cmd.arg("--quiet");
    }
    if !has_out(&lab_args) {
        cmd.arg("--out").arg(root.join(RESULTS_DIR));
    }
    if own.record.is_none() && own.plot.is_none() && !own.peers {
        return studies::process::run(&mut cmd);
    }
    let stderr = studies::process::run_keeping_stderr(&mut cmd)?;
    let file = results_file(&stderr, &root)?;
    if own.peers {
        peers(&file, &root, own.plot.as_deref())?;
    }
    // With --peers the row-wise charts are drawn from the peers' table; a run of the row-wise
    // family alone has no reduction or transpose to plot.
    if let Some(dir) = own.plot.as_ref().filter(|_| !own.peers) {
        // On stderr: stdout carries the bench's own output (`--format json` included).
        let charts = plot::plot_file(&file, dir)?;
        eprintln!("plotted {} chart(s) into {}", charts.len(), dir.display());
    }
    if let Some((change, hypothesis)) = own.record {
        let log = experiment_log::path(&root);
        let prediction = own.predict.as_deref().unwrap_or_default();
        let entries = log_entries(&file, &change, &hypothesis, prediction)?;
        experiment_log::append(&log, &entries)?;
        eprintln!("recorded {} row(s) in {}", entries.len(), log.display());
    }
    Ok(())
}

/// `lab bench`'s flags as lab reads them ([`catalog::cli::bench`]), for checking here.
#[derive(clap::Parser)]
#[command(
    name = "cargo xtask bench",
    about = "Measure every kernel against CUB and the ceilings measured in the same run, plus \
             the launch-gap demo; verify every result (runs `lab bench`)"
)]
struct LabBench {
    #[command(flatten)]
    args: BenchArgs,
}

/// Checks lab's flags the way lab will read them, and resolves the kernels and sizes they
/// name: a mistake is one line (clap's first, or the plan's), the valid names listed.
pub fn check_lab_flags(lab_args: &[String]) -> Result<()> {
    use clap::Parser;
    let parsed = LabBench::try_parse_from(
        std::iter::once("bench".to_string()).chain(lab_args.iter().cloned()),
    )
    .map_err(|e| anyhow::anyhow!("{}", first_line(&e.to_string())))?;
    BenchPlan::new(&parsed.args, &Backend::ALL).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

/// lab bench's help, as lab prints it.
fn lab_help() -> String {
    use clap::CommandFactory;
    LabBench::command().render_long_help().to_string()
}

/// A clap message's first line, without its `error: ` (main adds it back).
fn first_line(message: &str) -> String {
    message
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(message)
        .trim_start_matches("error: ")
        .trim()
        .to_string()
}

/// `--record`'s (change, hypothesis).
type Record = (String, String);

/// Printed after lab's `--help`: the flags xtask takes out before lab sees them. The
/// `--record` example names the catalogue's newest reduction by its version.
pub fn own_flags_help() -> String {
    let newest = catalog::KERNELS
        .iter()
        .rfind(|k| k.family == Family::Reduce && k.library.is_none())
        .map_or("reduce", |k| k.name);
    let version = newest.strip_prefix("reduce_").unwrap_or(newest);
    format!(
        "
xtask's own flags (cargo xtask bench / dist/xtask bench):
      --record <\"CHANGE; HYPOTHESIS\">
          Append the measured rows to the experiment log (cargo xtask log)
      --predict <\"COUNTER up|down|same [N%], ...\">
          With --record: which counters the change should move, and which way (an ncu metric,
          a column of ncu-table, or time); cargo xtask compare checks it and logs the outcome
      --peers
          With the row-wise family (--kernel rows): time PyTorch eager, torch.compile, Liger
          and Triton, with the bench's Rust kernels in the same rotation, after the bench
          (gpu/rows/peers.sh --lab) and print Part II's table
      --plot <DIR>
          Draw the run's charts into DIR (as cargo xtask plot RESULTS.json --out DIR)

Examples:
  cargo xtask bench --sweep --plot docs/plots
  cargo xtask bench --kernel {version} --record \"unroll x4; more loads in flight\"
"
    )
}

/// xtask's own flags of `cargo xtask bench`, which lab never sees.
#[derive(Debug, Default, PartialEq)]
struct Own {
    /// `--record "change; hypothesis"`: append the rows to the experiment log.
    record: Option<Record>,
    /// `--plot DIR`: draw the run's charts into DIR.
    plot: Option<PathBuf>,
    /// `--predict "COUNTER down 30%, …"`: stored with `--record`'s rows.
    predict: Option<String>,
    /// `--peers`: time the row-wise peers after the bench, and print Part II's table.
    peers: bool,
}

/// Splits xtask's own flags (`--record`, `--plot`, `--predict`; `--flag value` or
/// `--flag=value`) from the flags for lab.
fn take_own(args: &[String]) -> Result<(Own, Vec<String>)> {
    let mut rest = Vec::new();
    let mut own = Own::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (a.as_str(), None),
        };
        if name == "--peers" {
            own.peers = true;
            continue;
        }
        let what = match name {
            "--record" => "\"change; hypothesis\"",
            "--plot" => "a folder for the charts",
            "--predict" => "\"COUNTER up|down|same [N%], ...\"",
            _ => {
                rest.push(a.clone());
                continue;
            }
        };
        let v = match inline {
            Some(v) => v,
            None => it
                .next()
                .with_context(|| format!("{name} needs a value: {what}"))?,
        };
        if name == "--record" {
            own.record = Some(parse_record(v)?);
        } else if name == "--predict" {
            // Checked now: a typo must fail before the bench runs, not when compare reads it.
            studies::compare::claims::parse(v)?;
            own.predict = Some(v.trim().to_string());
        } else {
            own.plot = Some(PathBuf::from(v));
        }
    }
    Ok((own, rest))
}

/// Runs the peers' script (PyTorch eager, torch.compile, Liger, Triton, and the bench's own Rust
/// kernels again; the copy of each matrix in the same rotation) into the results file's folder,
/// then prints Part II's table and writes it beside the results file.
fn peers(file: &Path, root: &Path, plot_dir: Option<&Path>) -> Result<()> {
    let dir = file.parent().context("the results file has no folder")?;
    let stem = file
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".json"))
        .context("the results file is no .json")?;
    let rows = dir.join(format!("rows-{stem}.json"));
    if !rows.exists() {
        bail!(
            "--peers compares the row-wise kernels: {} is missing (add --kernel rows)",
            rows.display()
        );
    }
    // The same Rust kernels in the peers' rotation too (`--lab`): the peer verdict by one
    // method.
    let mut cmd = Command::new("bash");
    cmd.current_dir(root)
        .arg("gpu/rows/peers.sh")
        .arg("--lab")
        .arg(&rows)
        .env("OUT", dir);
    studies::process::run(&mut cmd)?;
    let read =
        |p: &Path| std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()));
    let cases =
        studies::rows_table::build(&read(&rows)?, Some(&read(&dir.join("peers.json"))?), None)?;
    let text = studies::rows_table::render(&cases, catalog::Format::Table)?;
    let json = studies::rows_table::render(&cases, catalog::Format::Json)?;
    for (ext, body) in [("txt", &text), ("json", &json)] {
        files::write_atomic(
            &dir.join(format!("rows-table-{stem}.{ext}")),
            body.as_bytes(),
        )?;
    }
    print!("{text}");
    if let Some(d) = plot_dir {
        let drawn = studies::rows_table::plot(&cases, d)?;
        eprintln!(
            "plotted {} row-wise chart(s) into {}",
            drawn.len(),
            d.display()
        );
    }
    Ok(())
}

/// Whether the user chose the output folder (`--out DIR` or `--out=DIR`).
fn has_out(args: &[String]) -> bool {
    args.iter().any(|a| a == "--out" || a.starts_with("--out="))
}

/// The results JSON the run wrote: the last `.json` of lab's `wrote PATH` lines that is not
/// the row-wise family's record file (`rows-<stem>.json`, written beside it); a relative path
/// is lab's, which runs in `root`.
fn results_file(stderr: &str, root: &Path) -> Result<PathBuf> {
    catalog::records::written(stderr)
        .into_iter()
        .rfind(|p| {
            p.ends_with(".json")
                && !Path::new(p)
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("rows-"))
        })
        .map(|p| root.join(p))
        .context("the bench wrote no results file to record from")
}

/// One log row per measured Rust kernel of a results file (ceilings, CUB and the copy are
/// the references, not experiments).
fn log_entries(
    file: &Path,
    change: &str,
    hypothesis: &str,
    prediction: &str,
) -> Result<Vec<Entry>> {
    let report: Report = plot::results::read(file)?;
    let num = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.3}"));
    Ok(report
        .rows
        .iter()
        .filter(|r| r.section != Family::Ceiling && r.backend.is_rust())
        .map(|r| Entry {
            date: report.date.clone(),
            commit: report.commit.clone(),
            kernel: experiment_log::kernel_label(r),
            change: change.into(),
            hypothesis: hypothesis.into(),
            result: match r.status {
                Status::Ok => format!(
                    "{} GB/s, {}% of ceiling, {}x reference",
                    num(r.gbps),
                    num(r.pct_of_ceiling),
                    num(r.vs_reference)
                ),
                Status::Failed => format!("failed: {}", r.note),
                Status::Skipped => format!("skipped: {}", r.note),
            },
            metrics: format!(
                "median_us={} spread_pct={} us_per_launch={} file={}",
                num(r.median_us),
                num(r.spread_pct),
                num(r.us_per_launch),
                file.file_name().unwrap_or_default().to_string_lossy()
            ),
            prediction: prediction.into(),
            outcome: String::new(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn record_and_plot_are_taken_out_of_the_lab_flags() {
        let (own, rest) = take_own(&s(&[
            "--kernel",
            "v7",
            "--record",
            "unroll; more in flight",
            "--size=2^20",
            "--plot",
            "docs/plots",
        ]))
        .unwrap();
        assert_eq!(own.record, Some(("unroll".into(), "more in flight".into())));
        assert_eq!(own.plot, Some(PathBuf::from("docs/plots")));
        assert_eq!(rest, s(&["--kernel", "v7", "--size=2^20"]));
        let (own, rest) = take_own(&s(&["--plot=out", "--sweep"])).unwrap();
        assert_eq!((own.plot, own.record), (Some(PathBuf::from("out")), None));
        assert_eq!(rest, s(&["--sweep"]));
        assert_eq!(take_own(&[]).unwrap(), (Own::default(), Vec::new()));
        assert!(take_own(&s(&["--record"])).is_err());
        let e = take_own(&s(&["--plot"])).unwrap_err().to_string();
        assert!(e.contains("--plot needs a value"), "{e}");
        assert!(take_own(&s(&["--record=no hypothesis"])).is_err());
        let (own, rest) = take_own(&s(&["--predict", "inst down 30%, time down", "-q"])).unwrap();
        assert_eq!(own.predict.as_deref(), Some("inst down 30%, time down"));
        assert_eq!(rest, s(&["-q"]));
        let e = take_own(&s(&["--predict=inst sideways"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("sideways"), "{e}");
        // A lab flag that only starts like ours stays lab's.
        let (own, rest) = take_own(&s(&["--plotting", "x"])).unwrap();
        assert_eq!((own, rest), (Own::default(), s(&["--plotting", "x"])));
    }

    /// `--record` on a real results file (the H200's v7 follow-up run): one log row per Rust
    /// kernel row, none for the ceilings or CUB, with the measured numbers.
    #[test]
    fn record_rows_come_from_a_real_results_file() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../results/bench/nvidia-h200-custom-20261129T134514Z.json");
        let rows = log_entries(
            &file,
            "drop L2::256B",
            "the hint costs bandwidth",
            "time down",
        )
        .unwrap();
        // v6 and v7 × f32/i32 × llvm/nvvm × 2^20/2^28.
        assert_eq!(rows.len(), 16, "{rows:#?}");
        assert!(
            rows.iter()
                .all(|r| !r.kernel.contains("cub_reduce_sum") && !r.kernel.contains("read_stream"))
        );
        // The file's Rust-only reduction: carried by the Rust compilers, not by nvcc.
        let rust_only = catalog::KERNELS
            .iter()
            .find(|k| {
                k.family == Family::Reduce
                    && k.carried_by(catalog::Backend::Llvm)
                    && !k.carried_by(catalog::Backend::Nvcc)
            })
            .expect("a Rust-only reduction");
        let wanted = format!("{} f32 [llvm] 2^28", rust_only.name);
        let v7 = rows.iter().find(|r| r.kernel == wanted).expect("v7 row");
        assert!(
            v7.result.starts_with("4388.") && v7.result.contains("x reference"),
            "{v7:?}"
        );
        assert_eq!(v7.commit, "e89b38e72de495ffd2158a3ce307d32c4771a96b");
        assert_eq!(
            (v7.prediction.as_str(), v7.outcome.as_str()),
            ("time down", "")
        );
        assert_eq!(
            v7.metrics,
            "median_us=244.672 spread_pct=1.766 us_per_launch=244.672 file=nvidia-h200-custom-20261129T134514Z.json"
        );
    }

    #[test]
    fn results_go_to_results_bench_unless_out_is_given() {
        assert!(!has_out(&s(&["--sweep"])));
        assert!(has_out(&s(&["--sweep", "--out", "x"])));
        assert!(has_out(&s(&["--out=x"])));
        assert!(!has_out(&s(&["--outline"])));
    }

    #[test]
    fn the_results_file_is_the_json_lab_says_it_wrote() {
        let root = Path::new("/repo");
        let err =
            "bench: 3 rows\nwrote results/bench/h-20261129T1Z.txt\nwrote /abs/h-20261129T1Z.json\n";
        assert_eq!(
            results_file(err, root).unwrap(),
            PathBuf::from("/abs/h-20261129T1Z.json")
        );
        let err = "wrote out/placement.csv\nwrote out/h.txt\nwrote out/h.json\n";
        assert_eq!(
            results_file(err, root).unwrap(),
            PathBuf::from("/repo/out/h.json")
        );
        let e = results_file("wrote out/h.txt\n", root).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the bench wrote no results file to record from"
        );
    }
}
