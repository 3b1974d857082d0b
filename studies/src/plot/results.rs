//! Reading a bench results file (`lab bench --out`) through the catalogue's records
//! ([`catalog::records::Report`]), and what the charts and tables ask of it: verified rows,
//! the best bandwidth of a target, the sizes, the provenance line. `docs/json-schema.md`
//! describes the file.

use anyhow::{Context, Result, bail};
use catalog::records::{Report, Row, SCHEMA_VERSION, Status};
use catalog::{Dtype, Family};
use std::path::Path;

/// Reads and checks a results file (`.json`, or `.json.gz` gunzipped).
pub fn read(path: &Path) -> Result<Report> {
    let text = crate::profiles::capture::read_text(path)?;
    parse(&text).with_context(|| format!("parsing {}", path.display()))
}

/// A results file's text as a [`Report`]; its schema version is checked first, so a file of
/// another version is named as such rather than failing on a field.
pub fn parse(text: &str) -> Result<Report> {
    #[derive(serde::Deserialize)]
    struct Version {
        schema_version: u32,
    }
    let v: Version = serde_json::from_str(text)?;
    if v.schema_version != SCHEMA_VERSION {
        bail!(
            "schema_version {} is not one this xtask reads ({SCHEMA_VERSION}): is it a bench results file from another version?",
            v.schema_version
        );
    }
    Ok(serde_json::from_str(text)?)
}

/// What the charts and tables read off one row.
pub trait Measured {
    /// A verified row's bandwidth.
    fn ok_gbps(&self) -> Option<f64>;
    /// A verified row's GFLOP/s: the file's, or for an f32 reduction from a file written
    /// before `flops` existed, `n − 1` adds over the median time.
    fn ok_gflops(&self) -> Option<f64>;
    /// FLOPs of an f32 reduction: the file's count, else `n − 1`.
    fn reduction_flops(&self) -> Option<u64>;
    /// `reduce_v6 [llvm]`, `cub_reduce_sum` (CUB's backend is in its name).
    fn series_name(&self) -> String;
}

impl Measured for Row {
    fn ok_gbps(&self) -> Option<f64> {
        self.gbps.filter(|_| self.status == Status::Ok)
    }

    fn ok_gflops(&self) -> Option<f64> {
        if self.status != Status::Ok {
            return None;
        }
        self.gflops.or_else(|| {
            let flops = self.reduction_flops()?;
            Some(flops as f64 / (self.median_us? * 1e-6) / 1e9)
        })
    }

    fn reduction_flops(&self) -> Option<u64> {
        (self.section == Family::Reduce && self.dtype == Dtype::F32).then(|| {
            if self.flops > 0 {
                self.flops
            } else {
                self.n.saturating_sub(1)
            }
        })
    }

    fn series_name(&self) -> String {
        if self.backend.backend().is_none() {
            self.kernel.clone()
        } else {
            format!("{} [{}]", self.kernel, self.backend)
        }
    }
}

/// What the charts and tables read off a whole file.
pub trait Rows {
    /// Verified rows of a section.
    fn ok_rows(&self, section: Family) -> impl Iterator<Item = &Row>;
    /// The reduction sizes in the file, ascending.
    fn reduce_sizes(&self) -> Vec<u64>;
    /// The best verified bandwidth of `kernel` in `section` at size label `size` (the best of
    /// the backends counts, as in the bench's ratios).
    fn best_gbps(&self, section: Family, kernel: &str, size: &str) -> Option<f64>;
    /// The measured FP32 peak (the best `fma_peak` row), GFLOP/s.
    fn fma_peak(&self) -> Option<f64>;
    /// `NVIDIA H200, commit 0123abcd, 2026-11-29T12:00:00Z, hot L2`: the charts' subtitle.
    fn provenance(&self) -> String;
}

impl Rows for Report {
    fn ok_rows(&self, section: Family) -> impl Iterator<Item = &Row> {
        self.rows
            .iter()
            .filter(move |r| r.section == section && r.status == Status::Ok)
    }

    fn reduce_sizes(&self) -> Vec<u64> {
        catalog::records::results::reduce_sizes(&self.rows)
    }

    fn best_gbps(&self, section: Family, kernel: &str, size: &str) -> Option<f64> {
        self.ok_rows(section)
            .filter(|r| r.kernel == kernel && r.size == size)
            .filter_map(Measured::ok_gbps)
            .reduce(f64::max)
    }

    fn fma_peak(&self) -> Option<f64> {
        self.ok_rows(Family::Ceiling)
            .filter(|r| r.kernel == "fma_peak")
            .filter_map(|r| r.gflops)
            .reduce(f64::max)
    }

    fn provenance(&self) -> String {
        let commit = self.commit.get(..12).unwrap_or(&self.commit);
        let caches: Vec<&str> = self.caches().iter().map(|c| c.name()).collect();
        format!(
            "{}, commit {commit}, {}, {} L2",
            self.device.name,
            self.date,
            caches.join(" and ")
        )
    }
}

/// Folder-safe form of a size label: `2^28` → `2pow28`, `4096x4096` as it is.
pub fn file_label(size: &str) -> String {
    size.replace('^', "pow")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A results file kept gzipped (`….json.gz`, as the large ones under `results/bench/` are)
    /// reads as the same report as the plain file.
    #[test]
    fn a_gzipped_results_file_reads_the_same() {
        let plain = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../results/bench/nvidia-h200-custom-20261129T134514Z.json");
        let dir = std::env::temp_dir().join(format!("xtask-results-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let packed = dir.join("nvidia-h200-custom-20261129T134514Z.json.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&std::fs::read(&plain).unwrap()).unwrap();
        std::fs::write(&packed, gz.finish().unwrap()).unwrap();
        let (a, b) = (read(&plain).unwrap(), read(&packed).unwrap());
        assert!(!a.rows.is_empty());
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
        // Not gzip at all: named as what it is.
        std::fs::write(&packed, b"{}").unwrap();
        let e = format!("{:#}", read(&packed).unwrap_err());
        assert!(e.contains("gunzipping"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
