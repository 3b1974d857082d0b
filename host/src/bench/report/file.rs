//! The results file: the report as JSON beside the table (every roof row included), each
//! written whole.

use super::Report;
use super::print::{RoofRows, json, table};
use crate::files::{report_written, write_atomic};
use std::path::{Path, PathBuf};

/// Writes `STEM.json` (the report) and `STEM.txt` (the table with every ceiling and roof row)
/// into `dir`, each through a temporary file and a rename, so a reader never sees half a file.
pub fn write_results(dir: &Path, r: &Report) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let stem = r.file_stem();
    let txt_path = dir.join(format!("{stem}.txt"));
    write_atomic(&txt_path, table(r, RoofRows::All).as_bytes())?;
    report_written(&txt_path);
    let json_path = dir.join(format!("{stem}.json"));
    write_atomic(&json_path, (json(r) + "\n").as_bytes())?;
    report_written(&json_path);
    Ok(json_path)
}
