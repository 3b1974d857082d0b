//! `cargo xtask bench`: the chapter's `make bench`. Runs `lab bench` (the host binary beside
//! this one) with every flag passed through, and has it write its results file under
//! `results/bench/` (unless `--out DIR` is given). Works from `dist/` on a GPU machine
//! without cargo: `dist/xtask bench --sweep`.
//!
//! `cargo xtask bench --help` shows `lab bench --help`: the flags are lab's, except xtask's
//! own, taken out before lab sees them:
//! - `--record "change; hypothesis"` appends the measured rows to the experiment log
//!   (`cargo xtask log`);
//! - `--plot DIR` draws the run's charts into DIR (`cargo xtask plot`).

use crate::commands::{log, plot};
use crate::util;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::process::Command;

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// `lab bench` flags, passed through (`cargo xtask bench --help` lists them)
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "LAB BENCH FLAGS"
    )]
    args: Vec<String>,
}

/// Where results files go, relative to the repository root.
pub const RESULTS_DIR: &str = "results/bench";

/// `quiet`: xtask's global `--quiet`, which clap takes before the pass-through flags; it is
/// handed on to lab.
pub fn run(args: &Args, quiet: bool) -> Result<()> {
    let root = util::root();
    let (own, lab_args) = take_own(&args.args)?;
    let lab = util::lab_binary(None)?;
    let mut cmd = Command::new(&lab);
    cmd.current_dir(&root).arg("bench").args(&lab_args);
    if quiet && !lab_args.iter().any(|a| a == "--quiet") {
        cmd.arg("--quiet");
    }
    let help = lab_args.iter().any(|a| a == "--help" || a == "-h");
    let out = out_dir(&lab_args)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(RESULTS_DIR));
    if !help && !has_out(&lab_args) {
        cmd.arg("--out").arg(&out);
    }
    let started = std::time::SystemTime::now();
    crate::process::run(&mut cmd)?;
    if help {
        print!("{}", own_flags_help());
        return Ok(());
    }
    if own.record.is_none() && own.plot.is_none() {
        return Ok(());
    }
    let file = newest_json(&out, started)?;
    if let Some(dir) = &own.plot {
        // On stderr: stdout carries the bench's own output (`--format json` included).
        let charts = plot::plot(&file, dir)?;
        eprintln!("plotted {} chart(s) into {}", charts.len(), dir.display());
    }
    if let Some((change, hypothesis)) = own.record {
        let entries = log_entries(&file, &change, &hypothesis)?;
        log::append(&log::path(&root), &entries)?;
        eprintln!(
            "recorded {} row(s) in {}",
            entries.len(),
            log::path(&root).display()
        );
    }
    Ok(())
}

/// `--record`'s (change, hypothesis).
type Record = (String, String);

/// Printed after lab's `--help`: the flags xtask takes out before lab sees them. The
/// `--record` example names the catalogue's newest reduction by its version (`v7`).
fn own_flags_help() -> String {
    let newest = catalog::KERNELS
        .iter()
        .rfind(|k| k.family == catalog::Family::Reduce && k.library.is_none())
        .map_or("reduce", |k| k.name);
    let version = newest.strip_prefix("reduce_").unwrap_or(newest);
    format!(
        "
xtask's own flags (cargo xtask bench / dist/xtask bench):
      --record <\"CHANGE; HYPOTHESIS\">
          Append the measured rows to the experiment log (cargo xtask log)
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
}

/// Splits xtask's own flags (`--record`, `--plot`; `--flag value` or `--flag=value`) from the
/// flags for lab.
fn take_own(args: &[String]) -> Result<(Own, Vec<String>)> {
    let mut rest = Vec::new();
    let mut own = Own::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (a.as_str(), None),
        };
        let what = match name {
            "--record" => "\"change; hypothesis\"",
            "--plot" => "a folder for the charts",
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
            own.record = Some(log::parse_record(v)?);
        } else {
            own.plot = Some(PathBuf::from(v));
        }
    }
    Ok((own, rest))
}

/// The `--out DIR` the user gave, if any.
fn out_dir(args: &[String]) -> Option<String> {
    let i = args.iter().position(|a| a == "--out")?;
    args.get(i + 1).cloned()
}

/// The results JSON this run wrote: the newest one in `dir` modified after `since`.
fn newest_json(dir: &std::path::Path, since: std::time::SystemTime) -> Result<PathBuf> {
    std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .filter(|(t, _)| *t >= since)
        .max()
        .map(|(_, p)| p)
        .context("the bench wrote no results file to record from")
}

/// One log row per measured Rust kernel of a results file (ceilings, CUB and the copy are
/// the references, not experiments).
fn log_entries(file: &std::path::Path, change: &str, hypothesis: &str) -> Result<Vec<log::Entry>> {
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file)?)
        .with_context(|| format!("parsing {}", file.display()))?;
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let num = |v: &serde_json::Value| v.as_f64().map_or("-".to_string(), |x| format!("{x:.3}"));
    let rows = report["rows"]
        .as_array()
        .context("results file has no rows")?;
    Ok(rows
        .iter()
        .filter(|r| {
            r["section"] != "ceiling" && matches!(r["backend"].as_str(), Some("llvm" | "nvvm"))
        })
        .map(|r| log::Entry {
            date: text(&report["date"]),
            commit: text(&report["commit"]),
            kernel: format!(
                "{} {} [{}] {}",
                text(&r["kernel"]),
                text(&r["dtype"]),
                text(&r["backend"]),
                text(&r["size"])
            ),
            change: change.into(),
            hypothesis: hypothesis.into(),
            result: match r["status"].as_str() {
                Some("ok") => format!(
                    "{} GB/s, {}% of ceiling, {}x reference",
                    num(&r["gbps"]),
                    num(&r["pct_of_ceiling"]),
                    num(&r["vs_reference"])
                ),
                _ => format!("{}: {}", text(&r["status"]), text(&r["note"])),
            },
            metrics: format!(
                "median_us={} spread_pct={} us_per_launch={} file={}",
                num(&r["median_us"]),
                num(&r["spread_pct"]),
                num(&r["us_per_launch"]),
                file.file_name().unwrap_or_default().to_string_lossy()
            ),
        })
        .collect())
}

/// Whether the user chose the output folder (`--out DIR` or `--out=DIR`).
fn has_out(args: &[String]) -> bool {
    args.iter().any(|a| a == "--out" || a.starts_with("--out="))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parse(argv: &[&str]) -> Vec<String> {
        Cli::try_parse_from(std::iter::once("bench").chain(argv.iter().copied()))
            .unwrap()
            .args
            .args
    }

    #[test]
    fn record_and_plot_are_taken_out_of_the_lab_flags() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
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
        // A lab flag that only starts like ours stays lab's.
        let (own, rest) = take_own(&s(&["--plotting", "x"])).unwrap();
        assert_eq!((own, rest), (Own::default(), s(&["--plotting", "x"])));
    }

    /// `--record` on a real results file (the H200's v7 follow-up run): one log row per Rust
    /// kernel row, none for the ceilings or CUB, with the measured numbers.
    #[test]
    fn record_rows_come_from_a_real_results_file() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../results/bench/nvidia-h200-custom-20261129T134514Z.json");
        let rows = log_entries(&file, "drop L2::256B", "the hint costs bandwidth").unwrap();
        // v6 and v7 × f32/i32 × llvm/nvvm × 2^20/2^28.
        assert_eq!(rows.len(), 16, "{rows:#?}");
        assert!(
            rows.iter()
                .all(|r| !r.kernel.contains("cub") && !r.kernel.contains("read_stream"))
        );
        // The file's Rust-only reduction: carried by the Rust compilers, not by nvcc.
        let rust_only = catalog::KERNELS
            .iter()
            .find(|k| {
                k.family == catalog::Family::Reduce
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
    }

    #[test]
    fn every_flag_passes_through_unchanged() {
        let argv = [
            "--size",
            "2^20,2^24",
            "--kernel",
            "v6",
            "--format",
            "json",
            "-q",
        ];
        assert_eq!(parse(&argv), argv);
        assert_eq!(parse(&["--help"]), ["--help"]);
        assert!(parse(&[]).is_empty());
    }

    #[test]
    fn results_go_to_results_bench_unless_out_is_given() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(!has_out(&s(&["--sweep"])));
        assert!(has_out(&s(&["--sweep", "--out", "x"])));
        assert!(has_out(&s(&["--out=x"])));
        assert!(!has_out(&s(&["--outline"])));
    }
}
