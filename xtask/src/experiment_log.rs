//! The experiment log (the chapter's workflow, step 5–7): `--record "change; hypothesis"` on
//! `bench` and `profile` appends one row per measured kernel to `results/experiment-log.csv`,
//! and `cargo xtask log` prints the log. This module reads and writes it.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// One row of the log.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    pub date: String,
    pub commit: String,
    pub kernel: String,
    pub change: String,
    pub hypothesis: String,
    /// What happened: the headline number (e.g. "4312 GB/s, 98.2% of read ceiling").
    pub result: String,
    /// Supporting numbers, `name=value` separated by spaces.
    pub metrics: String,
}

/// Where the log lives.
pub fn path(root: &Path) -> PathBuf {
    root.join("results/experiment-log.csv")
}

/// Splits `--record "change; hypothesis"`; both parts are required, and exactly one `;`
/// (with two, which part a clause belongs to would be a guess: the log once got rows whose
/// change was cut at a `;` meant inside it).
pub fn parse_record(s: &str) -> Result<(String, String)> {
    match s.split_once(';') {
        Some((c, h)) if !c.trim().is_empty() && !h.trim().is_empty() && !h.contains(';') => {
            Ok((c.trim().into(), h.trim().into()))
        }
        _ => bail!(
            "--record takes \"change; hypothesis\" (both parts, one ';' between them; use ',' \
             inside a part), got '{s}'"
        ),
    }
}

/// Appends rows, writing the header if the file is new.
pub fn append(file: &Path, entries: &[Entry]) -> Result<()> {
    let new = !file.exists();
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .with_context(|| format!("opening {}", file.display()))?;
    let mut w = csv::WriterBuilder::new().has_headers(new).from_writer(f);
    for e in entries {
        w.serialize(e)?;
    }
    w.flush()?;
    Ok(())
}

pub fn read(file: &Path) -> Result<Vec<Entry>> {
    if !file.exists() {
        return Ok(Vec::new());
    }
    let mut r =
        csv::Reader::from_path(file).with_context(|| format!("reading {}", file.display()))?;
    r.deserialize().map(|e| e.map_err(Into::into)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_needs_both_parts() {
        assert_eq!(
            parse_record("unroll x4; more loads in flight").unwrap(),
            ("unroll x4".into(), "more loads in flight".into())
        );
        assert!(parse_record("no hypothesis").is_err());
        assert!(parse_record(" ; h").is_err());
        let e = parse_record("a; b; c").unwrap_err().to_string();
        assert!(e.contains("one ';'"), "{e}");
    }

    #[test]
    fn append_then_read_round_trips_and_keeps_one_header() {
        let dir = std::env::temp_dir().join(format!("lab-log-{}", std::process::id()));
        let file = dir.join("log.csv");
        let e = |k: &str| Entry {
            date: "2026-11-29T12:00:00Z".into(),
            commit: "abc1234".into(),
            kernel: k.into(),
            change: "pad the tile, \"33\"".into(),
            hypothesis: "conflicts 32 -> 1".into(),
            result: "1.9x".into(),
            metrics: "wavefronts=1".into(),
        };
        append(&file, &[e("transpose_padded")]).unwrap();
        append(&file, &[e("transpose_tiled")]).unwrap();
        let rows = read(&file).unwrap();
        assert_eq!(rows, vec![e("transpose_padded"), e("transpose_tiled")]);
        assert_eq!(
            std::fs::read_to_string(&file)
                .unwrap()
                .matches("date,commit")
                .count(),
            1
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
