//! `cargo xtask accuracy`: the diagnosis held to stated truths, as a list, a tally and a
//! confusion table per corpus ([`profiler::accuracy`]):
//!
//! - the lab's catalogue (default): each fault named by its headline, each fixed twin clean,
//!   the chapter's kernels as the catalogue states (profiled now, or read back with `--from`);
//! - `--corpus cuda,triton,torch`: kernels written outside the catalogue (`gpu/corpus/`),
//!   from their raw pages: each H200 capture twice, by plain `ncu --set full` and with the
//!   lab's metrics (the committed captures, or `--pages DIR` with new ones);
//! - `--truth FILE --document FILE…`: any truth file against what `profile --format json`
//!   printed, whichever way it profiled (`-- PROGRAM`, `--report`, `--from`).

use anyhow::{Context, Result, bail};
use profiler::accuracy::{self as grade, Judged};
use std::path::{Path, PathBuf};
use studies::profiles::accuracy;
use studies::profiles::capture::{self, Collect};
use studies::profiles::metrics;
use studies::profiles::ncu::{NcuOptions, emit};

/// The corpora written outside the catalogue, each with its truth file in `gpu/corpus/`.
const CORPORA: [&str; 3] = ["cuda", "triton", "torch"];
/// The two captures of each corpus: plain `ncu --set full`, and with the lab's metrics.
const CAPTURES: [&str; 2] = ["plain", "metrics"];

#[derive(clap::Args)]
pub struct Args {
    /// The kernels to profile (with --from: to keep): NAME[,NAME...], a family, or all
    #[arg(long, default_value = "faults,reduce,transpose")]
    kernel: String,
    /// Elements per reduction
    #[arg(long, default_value_t = 1 << 24)]
    size: u64,
    /// Transpose rows and columns
    #[arg(long, default_value_t = 8192)]
    edge: u32,
    /// Grade corpora written outside the catalogue instead: cuda, triton, torch, or all (their
    /// truths in gpu/corpus/, their captures' raw pages in --pages)
    #[arg(long, value_delimiter = ',', conflicts_with = "truth")]
    corpus: Vec<String>,
    /// With --corpus: the folder of <corpus>-{plain,metrics}.raw.csv[.gz] pages (gpu/corpus.sh
    /// writes them) [default: the H200 captures, profiler/tests/fixtures/h200/corpus]
    #[arg(long, value_name = "DIR", requires = "corpus")]
    pages: Option<PathBuf>,
    /// Grade `profile --format json` documents against this truth file (CSV: kernel, expected,
    /// twin, mechanism)
    #[arg(long, value_name = "CSV", requires = "document")]
    truth: Option<PathBuf>,
    /// With --truth: the documents `profile --format json` printed
    #[arg(long, value_name = "JSON", num_args = 1.., requires = "truth")]
    document: Vec<PathBuf>,
    #[command(flatten)]
    ncu: NcuOptions,
}

pub fn run(args: &Args) -> Result<()> {
    // Grading pages or documents already made writes files only where --output says.
    let reread = args.ncu.output.clone();
    if !args.corpus.is_empty() {
        return graded(&corpora(args)?, reread.as_deref(), args);
    }
    if let Some(truth) = &args.truth {
        let truths = read_truths(truth)?;
        let mut sets = Vec::new();
        for doc in &args.document {
            let text = std::fs::read_to_string(doc)
                .with_context(|| format!("reading {}", doc.display()))?;
            let kernels = profiler::document::read(&text)
                .with_context(|| format!("reading {}", doc.display()))?;
            let judged = grade::judge_document(&kernels, &truths)
                .with_context(|| format!("{} against {}", doc.display(), truth.display()))?;
            sets.push((doc.display().to_string(), judged));
        }
        return graded(&sets, reread.as_deref(), args);
    }
    let collect = Collect {
        set: Some(profiler::ncu::run::Set::Full),
        sections: Vec::new(),
        metrics: metrics::diagnosis(),
    };
    let size_args = vec![
        "--size".into(),
        args.size.to_string(),
        "--rows".into(),
        args.edge.to_string(),
        "--cols".into(),
        args.edge.to_string(),
    ];
    let (rows, how) = args
        .ncu
        .collect("accuracy", &args.kernel, collect, size_args)?;
    let judged = accuracy::judge(&rows);
    if judged.is_empty() {
        bail!(
            "no profiled kernel has a verdict the catalogue states (--kernel faults,reduce,transpose)"
        );
    }
    graded(&[(how, judged)], args.ncu.write_dir().as_deref(), args)
}

/// Each requested corpus's captures, judged against its truths.
fn corpora(args: &Args) -> Result<Vec<(String, Vec<Judged>)>> {
    let root = studies::util::root();
    let pages = args
        .pages
        .clone()
        .unwrap_or_else(|| root.join("profiler/tests/fixtures/h200/corpus"));
    let names: Vec<&str> = if args.corpus.iter().any(|c| c == "all") {
        CORPORA.to_vec()
    } else {
        args.corpus.iter().map(String::as_str).collect()
    };
    let mut sets = Vec::new();
    for name in names {
        if !CORPORA.contains(&name) {
            bail!("no corpus '{name}': cuda, triton, torch or all");
        }
        let truths = read_truths(&root.join(format!("gpu/corpus/{name}_corpus.truth.csv")))?;
        for capture in CAPTURES {
            let stem = pages.join(format!("{name}-{capture}.raw.csv"));
            let page = [stem.with_extension("csv.gz"), stem.clone()]
                .into_iter()
                .find(|p| p.exists())
                .with_context(|| {
                    format!(
                        "no raw page {}[.gz]: capture it with `OUT=DIR bash gpu/corpus.sh {name}` \
                         on a GPU machine and pass --pages DIR",
                        stem.display()
                    )
                })?;
            let launches = profiler::ncu::parse_raw(&capture::read_text(&page)?)
                .with_context(|| format!("reading {}", page.display()))?;
            let kernels = profiler::program::diagnose_all(launches);
            let judged = grade::judge(&kernels, &truths)
                .with_context(|| format!("{} against its truths", page.display()))?;
            sets.push((
                format!("{name} corpus, {capture} capture ({})", page.display()),
                judged,
            ));
        }
    }
    Ok(sets)
}

fn read_truths(path: &Path) -> Result<Vec<grade::Truth>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    grade::read_truths(&text).with_context(|| format!("reading {}", path.display()))
}

/// Prints (and writes) each set's table and the tallies; fails when any kernel is missed, so a
/// script can hold the diagnosis to its corpora.
fn graded(sets: &[(String, Vec<Judged>)], dir: Option<&Path>, args: &Args) -> Result<()> {
    let mut text = String::new();
    let mut all = Vec::new();
    for (how, judged) in sets {
        text += &grade::text(judged, how);
        text += "\n";
        all.extend(judged.iter().cloned());
    }
    let total = grade::tally(&all);
    if sets.len() > 1 {
        text += &format!("All together: {}\n", grade::tally_line(&total));
    }
    let json = serde_json::to_string_pretty(&serde_json::json!({
        "tally": total,
        "sets": sets.iter().map(|(how, judged)| serde_json::json!({
            "how": how,
            "tally": grade::tally(judged),
            "kernels": judged,
        })).collect::<Vec<_>>(),
    }))?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["set", "label", "expected", "got", "right", "headline"])?;
    for (how, judged) in sets {
        for j in judged {
            let right = j.right.to_string();
            w.write_record([how, &j.label, &j.expected, &j.got, &right, &j.headline])?;
        }
    }
    let csv = String::from_utf8(w.into_inner()?)?;
    emit(dir, "accuracy", args.ncu.format, &text, &json, &csv)?;
    if !total.all_right() {
        bail!(
            "the diagnosis missed {} of {} kernels (the MISS rows above)",
            all.iter().filter(|j| !j.right).count(),
            all.len()
        );
    }
    Ok(())
}
