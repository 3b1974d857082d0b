//! `cargo xtask log`: the experiment log (`studies::experiment_log`) as a table, CSV or JSON.

use anyhow::Result;
use studies::experiment_log::{Entry, path, read};
use studies::util;

#[derive(clap::Args)]
pub struct Args {
    /// Output format
    #[arg(long, value_enum, default_value_t = catalog::Format::Table)]
    format: catalog::Format,
    /// Only rows whose kernel contains this text
    #[arg(long)]
    kernel: Option<String>,
}

/// Version of the JSON document `--format json` prints (`docs/json-schema.md`).
pub const SCHEMA_VERSION: u32 = 1;

pub fn run(args: &Args) -> Result<()> {
    let file = path(&util::root());
    let rows: Vec<Entry> = read(&file)?
        .into_iter()
        .filter(|e| {
            args.kernel
                .as_ref()
                .is_none_or(|k| e.kernel.contains(k.as_str()))
        })
        .collect();
    match args.format {
        catalog::Format::Json => {
            let doc = serde_json::json!({ "schema_version": SCHEMA_VERSION, "entries": rows });
            println!("{}", serde_json::to_string_pretty(&doc)?)
        }
        catalog::Format::Csv => {
            let mut w = csv::Writer::from_writer(std::io::stdout());
            for e in &rows {
                w.serialize(e)?;
            }
            w.flush()?;
        }
        catalog::Format::Table => {
            if rows.is_empty() {
                println!(
                    "the experiment log {} is empty: add rows with `--record \"change; hypothesis\"` on bench or profile",
                    file.display()
                );
                return Ok(());
            }
            let mut t = comfy_table::Table::new();
            t.load_style(comfy_table::presets::ASCII_MARKDOWN)
                .set_header([
                    "date",
                    "commit",
                    "kernel",
                    "change",
                    "hypothesis",
                    "result",
                    "metrics",
                    "prediction",
                    "outcome",
                ]);
            for e in &rows {
                t.add_row([
                    &e.date,
                    &e.commit,
                    &e.kernel,
                    &e.change,
                    &e.hypothesis,
                    &e.result,
                    &e.metrics,
                    &e.prediction,
                    &e.outcome,
                ]);
            }
            println!("{t}");
        }
    }
    Ok(())
}
