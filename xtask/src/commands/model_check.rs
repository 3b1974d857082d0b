//! `cargo xtask model-check FILE...`: the model (`catalog::model`) held to bench results files:
//! every reduction at 2^24, 2^26, 2^28 and 2^30 and every transpose at 4096², 8192² and
//! 16384², on every backend, predicted against measured, each row within 10 % or a miss, and
//! the share that held. The roofs come from each file (its roofs record, else its ceiling
//! rows); `--assume FILE` fills the ones a file did not measure, each value with its source,
//! and the output says which values were assumed.

use anyhow::{Context, Result, bail};
use catalog::model::RULE;
use catalog::model::check::{self, Assumed, Checked, Tally};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use studies::plot::results;

#[derive(clap::Args)]
pub struct Args {
    /// Bench results files (`lab bench --out`)
    #[arg(required = true)]
    results: Vec<PathBuf>,
    /// JSON of roof values a file did not measure, each `{"value": …, "source": "…"}` under
    /// the roofs record's field name (atomic_same_ns, launch_s, shared_wavefronts_per_s,
    /// scattered_store_sectors_per_s, blocks_per_s); printed as assumed, never as measured
    #[arg(long, value_name = "FILE")]
    assume: Option<PathBuf>,
    /// Fail (exit 1) when fewer than this percentage of all rows held
    #[arg(long, value_name = "PCT")]
    min_share: Option<f64>,
}

pub fn run(args: &Args) -> Result<()> {
    let assumed = match &args.assume {
        Some(p) => read_assumed(p)?,
        None => Assumed::default(),
    };
    let mut all: Vec<Checked> = Vec::new();
    for path in &args.results {
        let (text, checked) = file(path, &assumed)?;
        print!("{text}");
        all.extend(checked);
    }
    let t = Tally::of(&all);
    if args.results.len() > 1 {
        println!(
            "\nall files: {} of {} rows within 10% ({:.1}%)",
            t.held,
            t.rows,
            t.pct()
        );
    }
    if let Some(min) = args.min_share
        && t.pct() < min
    {
        bail!(
            "{:.1}% of the rows held, below --min-share {min}%: the misses are listed above",
            t.pct()
        );
    }
    Ok(())
}

fn read_assumed(path: &Path) -> Result<Assumed> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "parsing {}: expected {{\"atomic_same_ns\": {{\"value\": 1.81, \"source\": \"…\"}}, …}}",
            path.display()
        )
    })
}

/// One file's check: the header (file, GPU, commit, the roofs and where each came from, the
/// rule), then the table; and the rows.
pub fn file(path: &Path, assumed: &Assumed) -> Result<(String, Vec<Checked>)> {
    let report = results::read(path)?;
    let Some(mut roofs) = check::roofs_of(&report) else {
        bail!(
            "{} has no read stream and D2D copy rows and no roofs record: the model has no rates \
             to divide by",
            path.display()
        );
    };
    assumed.apply(&mut roofs).map_err(anyhow::Error::msg)?;
    let checked = check::check(&report, &roofs.roofs);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "== {} ({}, {} SMs; commit {}, {})",
        path.display(),
        report.device.name,
        report.device.sm_count,
        report.commit.get(..12).unwrap_or(&report.commit),
        report.date
    );
    let _ = writeln!(s, "roofs:");
    s += &check::sources_table(&roofs);
    let _ = writeln!(s, "rule: {RULE}");
    let _ = writeln!(
        s,
        "rows: every reduction at 2^24, 2^26, 2^28, 2^30 and every transpose at 4096², 8192², \
         16384² in the file; error = (predicted - measured) / measured\n"
    );
    if checked.is_empty() {
        let _ = writeln!(s, "(no row of the file is at those sizes)");
    } else {
        s += &check::table(&checked);
    }
    Ok((s, checked))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(p: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(p)
    }

    /// The committed H200 sweep, with the same-address red and the launch cost the docs give:
    /// the f32 chain-bound and stream-bound rows hold, the table names each row's bound.
    #[test]
    fn the_committed_sweep_checks_with_the_documented_red() {
        let assumed: Assumed = serde_json::from_str(
            r#"{"atomic_same_ns": {"value": 1.81, "source": "docs/result-word.md"}}"#,
        )
        .unwrap();
        let (text, checked) = file(
            &repo("results/bench/nvidia-h200-sweep-20261130T084720Z.json.gz"),
            &assumed,
        )
        .unwrap();
        // 23 reductions per size and type (4 sizes, f32 and i32), 14 transposes per shape
        // (4096², 8192²).
        assert_eq!(checked.len(), 23 * 4 * 2 + 14 * 2, "{text}");
        let row = |label: &str| checked.iter().find(|c| c.label == label).unwrap();
        let v1 = row("reduce_v1 [llvm] f32 2^28");
        assert_eq!(v1.prediction.as_ref().unwrap().bound.name(), "atomic");
        assert!(v1.held(), "{text}");
        let v7 = row("reduce_v7 [nvvm] f32 2^30");
        assert_eq!(v7.prediction.as_ref().unwrap().bound.name(), "read");
        assert!(v7.held(), "{text}");
        assert!(
            text.contains("assumed, not measured: docs/result-word.md"),
            "{text}"
        );
        assert!(
            text.contains("launch") && text.contains("read_stream"),
            "{text}"
        );
        let t = Tally::of(&checked);
        assert!(t.held > 0 && t.held < t.rows, "{text}");
    }

    #[test]
    fn an_unknown_assumed_roof_is_refused() {
        let bad: Assumed =
            serde_json::from_str(r#"{"dram_latency_s": {"value": 1e-6, "source": "x"}}"#).unwrap();
        let e = file(
            &repo("results/bench/nvidia-h200-sweep-20261130T084720Z.json.gz"),
            &bad,
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("valid: atomic_same_ns"), "{e:#}");
    }
}
