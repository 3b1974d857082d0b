//! The part of a bench results file (`lab bench --out`, schema version 1) the charts read.
//! A copy of the fields, not a dependency on the host crate (which links the CUDA driver):
//! `docs/json-schema.md` describes the whole file.

use anyhow::{Context, Result, bail};
use std::path::Path;

/// The schema versions this reader understands.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, serde::Deserialize)]
pub struct Results {
    pub schema_version: u32,
    #[serde(default)]
    pub date: String,
    #[serde(default)]
    pub commit: String,
    #[serde(default)]
    pub device: Device,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct Device {
    #[serde(default)]
    pub name: String,
    /// L2 cache size, in bytes.
    #[serde(default)]
    pub l2_bytes: u64,
}

/// One measurement (see `host::bench::Row`).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Row {
    /// `ceiling`, `reduce`, `transpose`, `launch_gap`.
    pub section: String,
    pub kernel: String,
    /// `llvm`, `nvvm`, `nvcc`, `cub`, `driver`.
    pub backend: String,
    pub dtype: String,
    pub n: u64,
    pub size: String,
    pub bytes: u64,
    /// `ok`, `failed`, `skipped`.
    pub status: String,
    pub median_us: Option<f64>,
    /// GB/s (10^9 bytes per second).
    pub gbps: Option<f64>,
    /// FLOPs per timed sample (absent before the roofline was added: 0).
    #[serde(default)]
    pub flops: u64,
    /// GFLOP/s (absent before the roofline was added).
    #[serde(default)]
    pub gflops: Option<f64>,
    /// % of the row's ceiling (reductions: the read stream; transposes: the copy).
    #[serde(default)]
    pub pct_of_ceiling: Option<f64>,
    /// Ratio to the row's reference (reductions: CUB; transposes: the copy).
    #[serde(default)]
    pub vs_reference: Option<f64>,
}

impl Row {
    /// A verified row's bandwidth.
    pub fn ok_gbps(&self) -> Option<f64> {
        self.gbps.filter(|_| self.status == "ok")
    }

    /// A verified row's GFLOP/s: the file's, or for an f32 reduction from a file written
    /// before `flops` existed, `n − 1` adds over the median time.
    pub fn ok_gflops(&self) -> Option<f64> {
        if self.status != "ok" {
            return None;
        }
        self.gflops.or_else(|| {
            let flops = self.reduction_flops()?;
            Some(flops as f64 / (self.median_us? * 1e-6) / 1e9)
        })
    }

    /// FLOPs of an f32 reduction: the file's count, else `n − 1`.
    pub fn reduction_flops(&self) -> Option<u64> {
        (self.section == "reduce" && self.dtype == "f32").then(|| {
            if self.flops > 0 {
                self.flops
            } else {
                self.n.saturating_sub(1)
            }
        })
    }

    /// `reduce_v6 [llvm]`, `cub_reduce_sum` (CUB's backend is in its name).
    pub fn series_name(&self) -> String {
        if matches!(self.backend.as_str(), "cub" | "driver") {
            self.kernel.clone()
        } else {
            format!("{} [{}]", self.kernel, self.backend)
        }
    }
}

impl Results {
    pub fn read(path: &Path) -> Result<Results> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Results::parse(&text).with_context(|| format!("parsing {}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Results> {
        let r: Results = serde_json::from_str(text)?;
        if r.schema_version != SCHEMA_VERSION {
            bail!(
                "schema_version {} is not one this xtask reads ({SCHEMA_VERSION}): is it a bench results file from another version?",
                r.schema_version
            );
        }
        Ok(r)
    }

    /// Verified rows of a section.
    pub fn ok_rows<'a>(&'a self, section: &'a str) -> impl Iterator<Item = &'a Row> + 'a {
        self.rows
            .iter()
            .filter(move |r| r.section == section && r.status == "ok")
    }

    /// The reduction sizes in the file, ascending.
    pub fn reduce_sizes(&self) -> Vec<u64> {
        let mut n: Vec<u64> = self
            .rows
            .iter()
            .filter(|r| r.section == "reduce")
            .map(|r| r.n)
            .collect();
        n.sort();
        n.dedup();
        n
    }

    /// The best verified bandwidth of `kernel` in `section` at size label `size` (the best of
    /// the backends counts, as in the bench's ratios).
    pub fn best_gbps(&self, section: &str, kernel: &str, size: &str) -> Option<f64> {
        self.ok_rows(section)
            .filter(|r| r.kernel == kernel && r.size == size)
            .filter_map(Row::ok_gbps)
            .reduce(f64::max)
    }

    /// The measured FP32 peak (the best `fma_peak` row), GFLOP/s.
    pub fn fma_peak(&self) -> Option<f64> {
        self.ok_rows("ceiling")
            .filter(|r| r.kernel == "fma_peak")
            .filter_map(|r| r.gflops)
            .reduce(f64::max)
    }

    /// `NVIDIA H200, commit 0123abcd, 2026-11-29T12:00:00Z`: the charts' subtitle.
    pub fn provenance(&self) -> String {
        let commit = self.commit.get(..12).unwrap_or(&self.commit);
        format!("{}, commit {commit}, {}", self.device.name, self.date)
    }
}

/// Folder-safe form of a size label: `2^28` → `2pow28`, `4096x4096` as it is.
pub fn file_label(size: &str) -> String {
    size.replace('^', "pow")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}
