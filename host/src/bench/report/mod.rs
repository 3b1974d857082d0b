//! The bench's results: one [`Row`] per measurement, the [`Report`] around them (the records
//! are the catalogue's, `catalog::records::results`, which xtask reads too), and here what
//! `lab bench` does with them:
//!
//! - this module: a measured row's timing and bandwidth, the ratios between rows;
//! - [`headline`]: the headline sentences;
//! - [`model`]: each row's predicted time and binding roof (`catalog::model`);
//! - [`print`]: one printer per format (table, JSON, CSV);
//! - [`file`]: the results file;
//! - [`rows`]: the row-wise family's flat records (merged with the peers'), its headline.
//!
//! Everything here is plain data and arithmetic, tested without a GPU.

pub mod file;
pub mod headline;
pub mod model;
pub mod print;
pub mod rows;
#[cfg(test)]
mod tests;

pub use catalog::records::results::{
    Cache, CacheMode, Config, Device, Report, Row, SCHEMA_VERSION, Status, target,
};
pub use file::write_results;
pub use headline::{LAUNCH_DOMINATED_US, headline};
pub use print::{RoofRows, csv, fmt_gbps, fmt_us, json, table};

use crate::timing::Samples;

/// A row whose (max − min) / median exceeds this is marked noisy.
pub const NOISY_SPREAD: f64 = 0.05;

/// A verified measurement's timing, filled into its row.
pub trait Passed {
    /// Fills in the timing of a verified measurement, and the outcome's note.
    fn passed(self, s: &Samples, note: impl Into<String>) -> Row;
}

impl Passed for Row {
    fn passed(mut self, s: &Samples, note: impl Into<String>) -> Row {
        let median = s.median();
        self.status = Status::Ok;
        self.reps = s.ms.len() as u32;
        self.median_us = Some(median * 1e3);
        self.min_us = Some(s.min() * 1e3);
        self.max_us = Some(s.max() * 1e3);
        self.spread_pct = Some(s.spread() * 100.0);
        self.samples_us = s.ms.iter().map(|ms| ms * 1e3).collect();
        self.noisy = is_noisy(s);
        self.gbps = (self.bytes > 0).then(|| gbps(self.bytes, median));
        self.gflops = (self.flops > 0).then(|| gflops(self.flops, median));
        self.us_per_launch = Some(median * 1e3 / self.launches.max(1) as f64);
        self.add_note(note.into());
        self
    }
}

/// Bytes per second, in GB/s (10^9), from a time in milliseconds.
pub fn gbps(bytes: u64, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e-3) / 1e9
}

/// Floating-point operations per second, in GFLOP/s (10^9), from a time in milliseconds.
pub fn gflops(flops: u64, ms: f64) -> f64 {
    flops as f64 / (ms * 1e-3) / 1e9
}

pub fn is_noisy(s: &Samples) -> bool {
    s.spread() > NOISY_SPREAD
}

/// Resolves every row's `ceiling` and `reference` against the verified rows they name (the
/// best bandwidth among rows of that target measured with the same cache: a cold row is
/// compared with the cold ceiling) and fills in `pct_of_ceiling`, `vs_reference`. A ceiling
/// or reference that failed or was not measured leaves the ratio empty.
pub fn fill_ratios(rows: &mut [Row]) {
    let mut best: std::collections::HashMap<(Cache, String), f64> = Default::default();
    for r in rows.iter().filter(|r| r.status == Status::Ok) {
        if let Some(g) = r.gbps {
            let e = best.entry((r.cache, r.target())).or_insert(g);
            *e = e.max(g);
        }
    }
    for r in rows.iter_mut() {
        let (Status::Ok, Some(g)) = (r.status, r.gbps) else {
            continue;
        };
        let cache = r.cache;
        let of = |t: &Option<String>| {
            t.as_ref()
                .and_then(|t| best.get(&(cache, t.clone())))
                .map(|&b| g / b)
        };
        r.pct_of_ceiling = of(&r.ceiling).map(|x| x * 100.0);
        r.vs_reference = of(&r.reference);
    }
}

/// Fills in the ratios, the headline and the failure count once every row is in.
pub fn finish(r: &mut Report) {
    fill_ratios(&mut r.rows);
    model::fill_predictions(r);
    r.headline = headline(&r.rows);
    r.failed = r.rows.iter().filter(|x| x.status == Status::Failed).count();
}
