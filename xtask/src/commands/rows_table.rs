//! `cargo xtask rows-table`: Part II's table from a `lab bench --kernel rows` record file and
//! the peers' `peers.json` (see [`studies::rows_table`]), as text, JSON or CSV, and with
//! `--plot DIR` one chart per op and dtype.

use anyhow::{Context, Result};
use catalog::Format;
use catalog::rows::Schedule;
use std::path::PathBuf;
use studies::rows_table;

#[derive(clap::Args)]
pub struct Args {
    /// The lab's record file: `rows-<stem>.json`, written beside the results file by
    /// `lab bench --kernel rows --out DIR`
    rows: PathBuf,
    /// The peers' file: `peers.json` from `gpu/rows/peers.py` (`bench --peers` runs it)
    #[arg(long, value_name = "JSON")]
    peers: Option<PathBuf>,
    /// Draw one chart per op and dtype into DIR (`rows-<op>-<dtype>.svg`)
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// The Rust kernels of this schedule (`streamed`, `cluster`, …: the end of their names)
    /// wherever the bench ran it, instead of the schedule the catalogue chooses
    #[arg(long, value_name = "NAME", value_parser = schedule_name)]
    schedule: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// A schedule's name as the kernels' names end with it (`catalog::rows::Schedule::name`).
fn schedule_name(name: &str) -> Result<String, String> {
    let names: Vec<&str> = Schedule::ALL.iter().map(|s| s.name()).collect();
    if names.contains(&name) {
        Ok(name.to_string())
    } else {
        Err(format!("not a schedule: use one of {}", names.join(", ")))
    }
}

pub fn run(args: &Args) -> Result<()> {
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))
    };
    let lab = read(&args.rows)?;
    let peers = args.peers.as_ref().map(read).transpose()?;
    let cases = rows_table::build(&lab, peers.as_deref(), args.schedule.as_deref())?;
    print!("{}", rows_table::render(&cases, args.format)?);
    if let Some(dir) = &args.plot {
        let drawn = rows_table::plot(&cases, dir)?;
        eprintln!("plotted {} chart(s) into {}", drawn.len(), dir.display());
    }
    Ok(())
}
