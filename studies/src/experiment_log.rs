//! The experiment log (the chapter's workflow, step 5–7): `--record "change; hypothesis"` on
//! `bench` and `profile` appends one row per measured kernel to `results/experiment-log.csv`
//! (with `--predict`, the counters that should move), `cargo xtask compare` writes back whether
//! they did, and `cargo xtask log` prints the log. This module reads and writes it.

use anyhow::{Context, Result, bail};
use catalog::records::Row;
use std::path::{Path, PathBuf};

/// One row of the log.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    pub date: String,
    pub commit: String,
    /// The measured row, as [`kernel_label`] writes it.
    pub kernel: String,
    pub change: String,
    pub hypothesis: String,
    /// What happened: the headline number (e.g. "4312 GB/s, 98.2% of read ceiling").
    pub result: String,
    /// Supporting numbers, `name=value` separated by spaces.
    pub metrics: String,
    /// `--predict`: which counters should move which way (`crate::compare::predict`); empty:
    /// none. Absent from logs written before it existed.
    #[serde(default)]
    pub prediction: String,
    /// What `cargo xtask compare` found for the prediction; empty until it is checked.
    #[serde(default)]
    pub outcome: String,
}

/// A results row as the log's `kernel` column names it: `reduce_v7 f32 [llvm] 2^28`, with
/// `(cold L2)` after it for a row measured with the L2 flushed.
pub fn kernel_label(r: &Row) -> String {
    let label = format!("{} {} [{}] {}", r.kernel, r.dtype, r.backend, r.size);
    match r.cache {
        catalog::records::Cache::Hot => label,
        cold => format!("{label} ({})", cold.label()),
    }
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

/// The log's columns: [`Entry`]'s fields, as the CSV header names them.
fn header() -> Vec<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.serialize(Entry::default()).expect("an entry serializes");
    let text = String::from_utf8(w.into_inner().expect("in memory")).expect("UTF-8");
    let first = text.lines().next().unwrap_or_default();
    first.split(',').map(String::from).collect()
}

/// Appends rows, writing the header if the file is new. A log written before a column existed
/// is rewritten whole with every column first (its rows read the new columns as empty).
pub fn append(file: &Path, entries: &[Entry]) -> Result<()> {
    if file.exists() {
        let mut r =
            csv::Reader::from_path(file).with_context(|| format!("reading {}", file.display()))?;
        let old: Vec<String> = r.headers()?.iter().map(String::from).collect();
        if old != header() {
            let mut all = read(file)?;
            all.extend_from_slice(entries);
            return write_all(file, &all);
        }
    }
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

/// Writes the whole log (temporary file, then rename: never half a log).
pub fn write_all(file: &Path, entries: &[Entry]) -> Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    for e in entries {
        w.serialize(e)?;
    }
    let bytes = w.into_inner().context("writing the log in memory")?;
    Ok(files::write_atomic(file, &bytes)?)
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
    use catalog::{Backend, Dtype};

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
            prediction: "sh_ld_conflicts down 90%".into(),
            outcome: String::new(),
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

    /// A log from before the prediction columns reads (they are empty), and the first append
    /// rewrites it with every column, its rows kept.
    #[test]
    fn an_old_log_reads_and_gains_the_new_columns() {
        let dir = std::env::temp_dir().join(format!("lab-oldlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("log.csv");
        std::fs::write(
            &file,
            "date,commit,kernel,change,hypothesis,result,metrics\n\
             d,c,reduce_v7 f32 [llvm] 2^28,x,y,\"1 GB/s, 2%\",m=1\n",
        )
        .unwrap();
        let old = read(&file).unwrap();
        assert_eq!(old.len(), 1);
        assert_eq!(old[0].result, "1 GB/s, 2%");
        assert_eq!(
            (old[0].prediction.as_str(), old[0].outcome.as_str()),
            ("", "")
        );
        let new = Entry {
            kernel: "k".into(),
            prediction: "time down".into(),
            ..Entry::default()
        };
        append(&file, std::slice::from_ref(&new)).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.starts_with(
                "date,commit,kernel,change,hypothesis,result,metrics,prediction,outcome\n"
            ),
            "{text}"
        );
        assert_eq!(read(&file).unwrap(), vec![old[0].clone(), new.clone()]);
        // Once migrated, appends append.
        append(&file, std::slice::from_ref(&new)).unwrap();
        assert_eq!(read(&file).unwrap().len(), 3);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The committed log, written whole with the new columns, reads back row for row.
    #[test]
    fn the_committed_log_survives_a_rewrite() {
        let committed = path(Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap());
        let rows = read(&committed).unwrap();
        assert!(rows.len() > 100, "{} rows", rows.len());
        let file = std::env::temp_dir().join(format!("lab-log-rewrite-{}.csv", std::process::id()));
        write_all(&file, &rows).unwrap();
        assert_eq!(read(&file).unwrap(), rows);
        std::fs::remove_file(file).unwrap();
    }

    #[test]
    fn the_kernel_column_names_kernel_dtype_backend_size() {
        let r = Row::new(
            catalog::Family::Reduce,
            "reduce_v7",
            Backend::Llvm,
            Dtype::F32,
            1 << 28,
            "2^28".into(),
            0,
        );
        assert_eq!(kernel_label(&r), "reduce_v7 f32 [llvm] 2^28");
        let cold = r.with_cache(catalog::records::Cache::Cold);
        assert_eq!(kernel_label(&cold), "reduce_v7 f32 [llvm] 2^28 (cold L2)");
    }
}
