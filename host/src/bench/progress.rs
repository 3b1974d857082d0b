//! Progress on stderr while the bench runs: one bar over the whole plan, with the row (or
//! setup step) in hand and an ETA, and one line per finished row above it.
//!
//! The bar is drawn only when stderr is a terminal and `--quiet` is off. When stderr is not a
//! terminal (a log file, CI), the per-row lines are printed as plain lines, as before; with
//! `--quiet`, nothing is.
//!
//! The ETA weighs each row by an estimate of its time ([`weight`]), not by a count of rows:
//! in a sweep, one 2^30 row takes longer than all the 2^10 … 2^20 rows together.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// Launch overhead assumed per kernel launch, in µs.
const LAUNCH_US: u64 = 5;
/// Device bandwidth assumed for the timed launches, in bytes per µs (3 TB/s).
const DEVICE_BYTES_PER_US: u64 = 3_000_000;
/// Host-side work per byte of a row (random inputs, uploads, read-backs and checks), in
/// bytes per µs (1 GB/s).
const HOST_BYTES_PER_US: u64 = 1_000;
/// FP32 rate assumed for compute-only rows, in FLOP per µs (50 TFLOP/s).
const FLOP_PER_US: u64 = 50_000_000;

/// Estimated time of one row, in µs: `samples` timed or warm-up runs of `launches` launches
/// moving `bytes` and doing `flops`, plus the host's share of handling `bytes`.
pub fn weight(bytes: u64, flops: u64, launches: u32, samples: u32) -> u64 {
    let per_sample =
        launches as u64 * LAUNCH_US + bytes / DEVICE_BYTES_PER_US + flops / FLOP_PER_US;
    (samples.max(1) as u64 * per_sample + bytes / HOST_BYTES_PER_US).max(1)
}

/// The bar (hidden when quiet or not on a terminal) and whether to print row lines at all.
pub struct Progress {
    bar: ProgressBar,
    quiet: bool,
    rows_done: u64,
    rows_total: u64,
}

impl Progress {
    /// A bar of `total` weight over `rows` rows.
    pub fn new(rows: u64, total: u64, quiet: bool) -> Progress {
        let bar = if quiet {
            ProgressBar::hidden()
        } else {
            // Hidden by indicatif itself when stderr is not a terminal.
            ProgressBar::with_draw_target(Some(total.max(1)), ProgressDrawTarget::stderr())
        };
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} {elapsed_precise} [{bar:30}] {percent:>3}% ETA {eta:>4} {wide_msg}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        if !bar.is_hidden() {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        Progress {
            bar,
            quiet,
            rows_done: 0,
            rows_total: rows,
        }
    }

    /// Shows what is running now: a row's label or a setup step.
    pub fn working_on(&self, what: &str) {
        if !self.bar.is_hidden() {
            self.bar.set_message(format!(
                "row {}/{}: {what}",
                (self.rows_done + 1).min(self.rows_total.max(1)),
                self.rows_total
            ));
        }
    }

    /// A row is done: its line goes above the bar (or to stderr when there is no bar), and
    /// the bar moves by the row's weight.
    pub fn row_done(&mut self, line: &str, weight: u64) {
        self.rows_done += 1;
        if self.bar.is_hidden() {
            if !self.quiet {
                eprintln!("{line}");
            }
        } else {
            self.bar.println(line);
            self.bar.inc(weight);
        }
    }

    /// Clears the bar, before the report goes to stdout.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_grows_with_bytes_launches_and_samples() {
        // A 1 GiB read, 23 samples: ~8 ms on the device per sample, ~1 s on the host.
        let big = weight(1 << 30, 0, 1, 23);
        let small = weight(1 << 12, 0, 1, 23);
        assert!(big > 1000 * small, "{big} vs {small}");
        // The launch gap: 1000 launches per sample dominate its weight.
        assert_eq!(weight(0, 0, 1000, 23), 23 * 1000 * LAUNCH_US);
        assert!(weight(0, 0, 1, 0) >= 1);
    }

    #[test]
    fn a_quiet_bar_is_hidden_and_counts_rows() {
        let mut p = Progress::new(2, 10, true);
        assert!(p.bar.is_hidden());
        p.working_on("reduce_v1 [llvm] f32 2^10");
        p.row_done("bench: reduce_v1", 5);
        assert_eq!(p.rows_done, 1);
    }
}
