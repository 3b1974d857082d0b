//! `cargo xtask sanitize`: every kernel, every backend, under compute-sanitizer's memcheck,
//! racecheck, synccheck and initcheck, at sizes that exercise the edges. One line per
//! kernel × tool: clean, or the first error. Any finding fails the command.
//!
//! First, each tool must flag its canary (`lab canary <tool>`, a kernel that is wrong on
//! purpose), or the command fails before anything else: see [`studies::sanitize`].

use anyhow::{Result, bail};
use profiler::tools::SANITIZER;
use serde::Serialize;
use std::path::PathBuf;
use studies::sanitize::{self, TOOLS};
use studies::util;

#[derive(clap::Args)]
pub struct Args {
    /// Tools to run (default: all four)
    #[arg(long, value_delimiter = ',', default_values_t = TOOLS.map(String::from))]
    tool: Vec<String>,
    /// Output folder for the log and the summary
    #[arg(long, default_value = "results/sanitize")]
    output: PathBuf,
    /// The lab binary (default: beside this executable)
    #[arg(long)]
    lab: Option<PathBuf>,
    /// Output format of the per kernel × tool lines
    #[arg(long, value_enum, default_value_t = catalog::Format::Table)]
    format: catalog::Format,
    /// Run only the canaries (one deliberately wrong kernel per tool, each of which must be
    /// flagged): a quick check of the sanitizer and of this command's reading of it
    #[arg(long)]
    canaries_only: bool,
}

pub fn run(args: &Args) -> Result<()> {
    sanitize::check_tools(&args.tool)?;
    let lab = util::lab_binary(args.lab.as_deref())?;
    let sanitizer = SANITIZER.find()?;
    let root = util::root();
    let out = root.join(&args.output);
    std::fs::create_dir_all(&out)?;

    let canaries = sanitize::canary::run_canaries(&sanitizer, &lab, &args.tool, &out)?;
    let header = sanitize::header(&root);
    if args.canaries_only {
        let summary = header + &sanitize::canary_lines(&canaries);
        let json = serde_json::json!({"schema_version": 1, "canaries": canaries});
        print(args.format, &summary, &json, &canaries)?;
        return Ok(files::write_atomic(
            &out.join("canaries.txt"),
            summary.as_bytes(),
        )?);
    }

    let checked = sanitize::check_kernels(&sanitizer, &lab, &args.tool);
    let summary = sanitize::summary(&header, &canaries, &checked);
    let json = serde_json::json!({"schema_version": 1, "findings": checked.findings, "canaries": canaries, "rows": checked.rows});
    print(args.format, &summary, &json, &checked.rows)?;
    files::write_atomic(&out.join("sanitize.log"), checked.log.as_bytes())?;
    files::write_atomic(&out.join("sanitize.txt"), summary.as_bytes())?;
    if checked.findings > 0 {
        bail!(
            "compute-sanitizer reported {} finding(s): see {}",
            checked.findings,
            out.join("sanitize.log").display()
        );
    }
    Ok(())
}

/// Prints the summary (table), the JSON document, or `rows` as CSV.
fn print(
    format: catalog::Format,
    summary: &str,
    json: &serde_json::Value,
    rows: &[impl Serialize],
) -> Result<()> {
    match format {
        catalog::Format::Table => print!("{summary}"),
        catalog::Format::Json => println!("{}", serde_json::to_string_pretty(json)?),
        catalog::Format::Csv => {
            let mut w = csv::Writer::from_writer(std::io::stdout());
            for r in rows {
                w.serialize(r)?;
            }
            w.flush()?;
        }
    }
    Ok(())
}
