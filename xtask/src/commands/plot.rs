//! `cargo xtask plot RESULTS.json`: SVG charts of a bench results file (see `studies::plot`):
//! bandwidth bars per reduction size and for the transposes, the size sweep (from a `--sweep`
//! file), the roofline. `cargo xtask bench --plot DIR` draws them right after the run.
//!
//! Needs no GPU: only the results file.

use anyhow::Result;
use catalog::Format;
use std::path::{Path, PathBuf};
use studies::plot::{self, Chart};
use studies::util;

#[derive(clap::Args)]
pub struct Args {
    /// A bench results file (results/bench/*.json, written by `cargo xtask bench`)
    #[arg(value_name = "RESULTS.json")]
    results: PathBuf,
    /// Folder for the SVG files [default: results/plots/<the results file's name>]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// How to list the charts written (json: with every chart's series)
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// Version of `--format json`'s document.
pub const SCHEMA_VERSION: u32 = 1;

pub fn run(args: &Args) -> Result<()> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&util::root(), &args.results));
    let charts = plot::plot_file(&args.results, &out)?;
    print!("{}", listing(&charts, &args.results, &out, args.format)?);
    Ok(())
}

/// `results/plots/<stem>`: one folder per results file.
pub fn default_out(root: &Path, results: &Path) -> PathBuf {
    let stem = results.file_stem().unwrap_or_default();
    root.join("results/plots").join(stem)
}

/// The charts written, in `format`.
fn listing(charts: &[Chart], results: &Path, out: &Path, format: Format) -> Result<String> {
    Ok(match format {
        Format::Json => {
            let doc = serde_json::json!({
                "schema_version": SCHEMA_VERSION,
                "results": results,
                "out": out,
                "charts": charts,
            });
            serde_json::to_string_pretty(&doc)? + "\n"
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record(["file", "kind", "title", "series"])?;
            for c in charts {
                w.write_record([
                    c.file.to_string_lossy().as_ref(),
                    c.kind,
                    &c.title,
                    &c.series.join("; "),
                ])?;
            }
            String::from_utf8(w.into_inner()?)?
        }
        Format::Table => {
            let mut t = comfy_table::Table::new();
            t.load_style(comfy_table::presets::ASCII_MARKDOWN)
                .set_header(["file", "chart", "series", "title"]);
            for c in charts {
                t.add_row([
                    c.file.to_string_lossy().into_owned(),
                    c.kind.to_string(),
                    c.series.len().to_string(),
                    c.title.clone(),
                ]);
            }
            format!(
                "{} chart(s) of {} in {}\n{t}\n",
                charts.len(),
                results.display(),
                out.display()
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> Chart {
        Chart {
            file: "out/roofline.svg".into(),
            kind: "roofline",
            title: "Roofline".into(),
            series: vec!["bandwidth roof".into(), "reduce_v6 [llvm]".into()],
        }
    }

    #[test]
    fn the_default_folder_is_named_after_the_results_file() {
        let out = default_out(
            Path::new("/repo"),
            Path::new("results/bench/h200-default-2026.json"),
        );
        assert_eq!(out, Path::new("/repo/results/plots/h200-default-2026"));
    }

    #[test]
    fn the_listing_comes_in_every_format() {
        let (r, o) = (Path::new("r.json"), Path::new("out"));
        let t = listing(&[chart()], r, o, Format::Table).unwrap();
        assert!(t.starts_with("1 chart(s) of r.json in out"), "{t}");
        assert!(t.contains("| out/roofline.svg | roofline | 2"), "{t}");
        let j: serde_json::Value =
            serde_json::from_str(&listing(&[chart()], r, o, Format::Json).unwrap()).unwrap();
        assert_eq!(j["schema_version"], SCHEMA_VERSION);
        assert_eq!(j["charts"][0]["series"][1], "reduce_v6 [llvm]");
        let c = listing(&[chart()], r, o, Format::Csv).unwrap();
        assert_eq!(c.lines().next(), Some("file,kind,title,series"));
        assert!(c.contains("bandwidth roof; reduce_v6 [llvm]"), "{c}");
    }

    #[test]
    fn a_file_from_another_schema_is_refused_with_the_reason() {
        let dir = std::env::temp_dir().join(format!("xtask-plot-schema-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("r.json");
        std::fs::write(&f, r#"{"schema_version": 2, "rows": []}"#).unwrap();
        let e = format!("{:#}", plot::plot_file(&f, &dir).unwrap_err());
        assert!(e.contains("schema_version 2"), "{e}");
        std::fs::write(&f, r#"{"schema_version": 1, "rows": []}"#).unwrap();
        let e = format!("{:#}", plot::plot_file(&f, &dir).unwrap_err());
        assert!(e.contains("nothing to plot"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
