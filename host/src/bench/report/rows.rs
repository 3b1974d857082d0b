//! The row-wise family's table as flat records, the fields the peers' script
//! (`gpu/rows/peers.py`) writes too, so the two merge into one table (op × shape × dtype ×
//! implementation): written beside the results file as `rows-STEM.json`, and one headline
//! line per element type: how many of the chosen schedules' rows reach 0.90 of the copy; and
//! one on how far apart the run's copies of one byte count lie.

use super::{Cache, Report, Row, Status};
use crate::files::{report_written, write_atomic};
use catalog::rows::{Op, RowLaunch, chosen};
use catalog::{Backend, Family, Runner};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The share of the D2D copy every row is held to (the bar).
pub const COPY_BAR: f64 = 0.90;

/// One measured row of a row-wise kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RowRecord {
    /// `softmax`, `rmsnorm`, `layernorm`.
    pub op: &'static str,
    pub rows: u32,
    pub cols: u32,
    pub dtype: String,
    /// `rust-llvm`, `rust-nvvm`, `nvcc`.
    pub implementation: String,
    /// The PTX entry (`softmax_warp_f32`) and its launch on this GPU: what
    /// `gpu/rows/peers.py --lab` launches to time the same kernel beside the peers.
    pub entry: String,
    pub launch: Option<RowLaunch>,
    /// `warp`, `block`, `cluster`, and whether `catalog::rows::chosen` picks it for the shape.
    pub schedule: &'static str,
    pub chosen: bool,
    pub median_us: f64,
    pub gbps: f64,
    /// gbps / the D2D copy's of the same matrix, measured in the same run.
    pub x_copy: Option<f64>,
    pub cache: &'static str,
}

/// `rust-llvm`, `rust-nvvm`, `nvcc`.
fn implementation(r: Runner) -> String {
    match r.backend() {
        Some(b @ (Backend::Llvm | Backend::Nvvm)) => format!("rust-{b}"),
        _ => r.to_string(),
    }
}

/// The verified row-wise kernel rows of `r`, as records.
pub fn records(r: &Report) -> Vec<RowRecord> {
    r.rows.iter().filter_map(record).collect()
}

fn record(row: &Row) -> Option<RowRecord> {
    if row.section != Family::Rows || row.status != Status::Ok {
        return None;
    }
    let k = catalog::kernels::find(&row.kernel)?;
    let catalog::Shape::Rows { op, schedule } = k.shape else {
        return None;
    };
    let (rows, cols) = row.size.split_once('x')?;
    let (rows, cols): (u32, u32) = (rows.parse().ok()?, cols.parse().ok()?);
    Some(RowRecord {
        op: op.name(),
        rows,
        cols,
        dtype: row.dtype.to_string(),
        implementation: implementation(row.backend),
        entry: k.entry(row.dtype),
        launch: row.launch,
        schedule: schedule.name(),
        chosen: chosen(op, cols as u64, row.dtype) == Some(schedule),
        median_us: row.median_us?,
        gbps: row.gbps?,
        x_copy: row.vs_reference,
        cache: row.cache.name(),
    })
}

/// Writes `rows-STEM.json` into `dir` when the report has row-wise rows: the device, commit,
/// date, the eps passed, the PTX each Rust backend's kernels came from (what `peers.py --lab`
/// loads), and the records. None when it has none.
pub fn write(dir: &Path, r: &Report) -> std::io::Result<Option<PathBuf>> {
    let records = records(r);
    if records.is_empty() {
        return Ok(None);
    }
    let ptx: std::collections::BTreeMap<&str, String> = [Backend::Llvm, Backend::Nvvm]
        .into_iter()
        .filter(|&b| {
            let name = implementation(b.into());
            records.iter().any(|rec| rec.implementation == name)
        })
        .filter_map(|b| {
            let path = crate::ptx::find(b.name()).ok()?;
            Some((
                b.name(),
                std::path::absolute(path).ok()?.display().to_string(),
            ))
        })
        .collect();
    let doc = serde_json::json!({
        "what": "lab bench, the row-wise family: bytes = one read + one write of the matrix, \
                 plus the weights; x_copy against the D2D copy of the same matrix in this run",
        "device": r.device.name,
        "commit": r.commit,
        "date": r.date,
        "reps": r.config.reps,
        "eps": {
            Op::RmsNorm.name(): Op::RmsNorm.eps(),
            Op::LayerNorm.name(): Op::LayerNorm.eps(),
        },
        "ptx": ptx,
        "rows": records,
    });
    let path = dir.join(format!("rows-{}.json", r.file_stem()));
    let text = serde_json::to_string_pretty(&doc).expect("the records serialize") + "\n";
    write_atomic(&path, text.as_bytes())?;
    report_written(&path);
    Ok(Some(path))
}

/// The headline's lines for the family, one per element type measured with `cache`: the
/// chosen schedules' rows at or above [`COPY_BAR`] of the copy, and the slowest of them.
pub fn headline_lines(rows: &[Row], cache: Cache) -> Vec<String> {
    let mut out = Vec::new();
    let chosen_rows: Vec<RowRecord> = rows
        .iter()
        .filter(|r| r.cache == cache)
        .filter_map(record)
        .filter(|r| r.chosen && r.implementation.starts_with("rust"))
        .collect();
    let mut dtypes: Vec<&str> = chosen_rows.iter().map(|r| r.dtype.as_str()).collect();
    dtypes.sort_unstable();
    dtypes.dedup();
    for d in dtypes {
        let of: Vec<&RowRecord> = chosen_rows.iter().filter(|r| r.dtype == d).collect();
        let held = of
            .iter()
            .filter(|r| r.x_copy.is_some_and(|x| x >= COPY_BAR))
            .count();
        let mut line = format!(
            "row-wise {d} ({}): {held} of {} rows of the chosen schedules (both Rust compilers) at >= {COPY_BAR:.2} x copy",
            cache.label(),
            of.len()
        );
        if let Some(w) = of
            .iter()
            .filter(|r| r.x_copy.is_some())
            .min_by(|a, b| a.x_copy.partial_cmp(&b.x_copy).unwrap())
        {
            line += &format!(
                "; the slowest {}_{} [{}] {}x{} at {:.3} x copy",
                w.op,
                w.schedule,
                w.implementation,
                w.rows,
                w.cols,
                w.x_copy.unwrap_or(0.0)
            );
        }
        out.push(line);
    }
    out
}

/// The run's D2D copies of the row-wise matrices, grouped by the bytes they move: where two or
/// more matrices move the same bytes (65536 x 512 and 32768 x 1024 f32, 16384 x 4096 bf16, …),
/// one line for the group whose copies lie furthest apart. Each case's x copy divides by its
/// own matrix's copy, so two cases' ratios differ by that much before their kernels differ at
/// all (the H100's record: 268 MB in 90.4–92.9 µs over five matrices).
pub fn copy_spread_line(rows: &[Row], cache: Cache) -> Option<String> {
    let mut by_bytes: Vec<(u64, Vec<f64>)> = Vec::new();
    let copies = rows.iter().filter(|r| {
        r.section == Family::Rows
            && r.kernel == catalog::roofs::D2D_COPY
            && r.cache == cache
            && r.status == Status::Ok
    });
    for r in copies {
        let Some(us) = r.median_us else { continue };
        match by_bytes.iter_mut().find(|(b, _)| *b == r.bytes) {
            Some((_, v)) => v.push(us),
            None => by_bytes.push((r.bytes, vec![us])),
        }
    }
    let (bytes, fastest, slowest, n) = by_bytes
        .iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(b, v)| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(0.0, f64::max);
            (*b, lo, hi, v.len())
        })
        .max_by(|a, b| (a.2 / a.1).total_cmp(&(b.2 / b.1)))?;
    Some(format!(
        "row-wise D2D copies ({}): the {n} matrices of {:.1} MB moved took {fastest:.1}–\
         {slowest:.1} us, {:.1} % apart: each case's x copy divides by its own matrix's copy, \
         so two cases' ratios can differ by that much with the same kernel speed",
        cache.label(),
        bytes as f64 / 1e6,
        100.0 * (slowest / fastest - 1.0)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::Passed;
    use crate::timing::Samples;
    use catalog::Dtype;

    fn row(kernel: &str, b: Backend, dtype: Dtype, shape: &str, x_copy: f64) -> Row {
        let mut r = Row::new(Family::Rows, kernel, b, dtype, 1, shape.into(), 1 << 30)
            .passed(&Samples::new(vec![0.25]), "ok");
        r.vs_reference = Some(x_copy);
        r
    }

    #[test]
    fn records_carry_the_merge_fields_and_the_chosen_schedule() {
        let rows = [
            row("softmax_warp", Backend::Llvm, Dtype::F32, "65536x512", 0.95),
            row(
                "softmax_block",
                Backend::Nvvm,
                Dtype::F32,
                "65536x512",
                0.80,
            ),
            row(
                "softmax_cluster",
                Backend::Llvm,
                Dtype::Bf16,
                "256x262144",
                0.85,
            )
            .with_launch(RowLaunch {
                blocks: 224,
                threads: 256,
                cluster: 16,
                shared_bytes: 60_000,
                balanced: true,
            }),
            Row::new(
                Family::Rows,
                "d2d_copy",
                Runner::Driver,
                Dtype::F32,
                1,
                "65536x512".into(),
                1,
            ),
        ];
        let recs: Vec<RowRecord> = rows.iter().filter_map(record).collect();
        assert_eq!(recs.len(), 3);
        assert_eq!(
            (
                recs[0].op,
                recs[0].rows,
                recs[0].cols,
                recs[0].schedule,
                recs[0].chosen
            ),
            ("softmax", 65536, 512, "warp", true)
        );
        assert_eq!(recs[1].implementation, "rust-nvvm");
        assert!(!recs[1].chosen);
        assert!((recs[0].gbps - (1u64 << 30) as f64 / 0.25e-3 / 1e9).abs() < 1e-6);
        assert_eq!(recs[2].entry, "softmax_cluster_bf16");
        assert_eq!(recs[0].launch, None);
        let json = serde_json::to_value(&recs[2]).unwrap();
        assert_eq!(json["launch"]["cluster"], 16, "{json}");
        assert_eq!(json["launch"]["balanced"], true, "{json}");
        for field in [
            "op",
            "rows",
            "cols",
            "dtype",
            "implementation",
            "median_us",
            "gbps",
            "x_copy",
        ] {
            assert!(json.get(field).is_some(), "{field}");
        }
        let lines = headline_lines(&rows, Cache::Hot);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with("row-wise bf16") && lines[0].contains("0 of 1"),
            "{lines:?}"
        );
        assert!(
            lines[0].contains("softmax_cluster [rust-llvm] 256x262144 at 0.850"),
            "{lines:?}"
        );
        assert!(
            lines[1].starts_with("row-wise f32") && lines[1].contains("1 of 1"),
            "{lines:?}"
        );
    }

    #[test]
    fn the_copies_of_one_byte_count_are_held_against_each_other() {
        let copy = |shape: &str, dtype: Dtype, bytes: u64, us: f64| {
            let mut r = Row::new(
                Family::Rows,
                "d2d_copy",
                Runner::Driver,
                dtype,
                1,
                shape.into(),
                bytes,
            )
            .passed(&Samples::new(vec![us * 1e-3]), "exact");
            r.median_us = Some(us);
            r
        };
        let mb268 = 268_435_456;
        let mut rows = vec![
            copy("65536x512", Dtype::F32, mb268, 92.9),
            copy("32768x1024", Dtype::F32, mb268, 90.4),
            copy("8192x8192", Dtype::Bf16, mb268, 91.7),
            // A byte count of its own: nothing to hold it against.
            copy("8192x8192", Dtype::F32, 2 * mb268, 170.0),
        ];
        let line = copy_spread_line(&rows, Cache::Hot).unwrap();
        assert!(
            line.contains("the 3 matrices of 268.4 MB moved took 90.4–92.9 us, 2.8 % apart"),
            "{line}"
        );
        // Another cache's copies, a failed copy and a single matrix a byte count: no line.
        assert_eq!(copy_spread_line(&rows, Cache::Cold), None);
        rows.truncate(1);
        rows.push(copy("32768x1024", Dtype::F32, mb268, 90.4).failed("wrong"));
        rows.push(copy("4096x4096", Dtype::F32, 3, 1.0));
        assert_eq!(copy_spread_line(&rows, Cache::Hot), None);
    }
}
