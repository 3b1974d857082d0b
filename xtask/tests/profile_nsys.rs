//! The nsys side of `cargo xtask nsys`: `nsys stats --format csv` tables, parsed and printed.
//!
//! Fixtures in `tests/fixtures/nsys/`: `synthetic-*` files are hand-made in nsys's format, to
//! be joined by the H200 capture of `gpu/profile.sh` (`nsys-launch-gap_<report>.csv`,
//! `nsys-bench_<report>.csv`).

#[allow(dead_code)]
#[path = "../src/profiler/mod.rs"]
mod profiler;

use profiler::nsys_csv::{self, REPORTS};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nsys")
}

fn table(prefix: &str, report: &str) -> nsys_csv::StatsTable {
    let path = fixtures().join(format!("{prefix}_{report}.csv"));
    let text = std::fs::read_to_string(&path).unwrap();
    nsys_csv::parse_stats(report, &text).unwrap()
}

#[test]
fn kernel_summary_columns_and_values() {
    let t = table("synthetic-nsys-launch-gap", "cuda_gpu_kern_sum");
    assert_eq!(t.headers.last().unwrap(), "Name");
    assert_eq!(t.rows.len(), 1);
    let inst = t.column("Instances").unwrap();
    let avg = t.column("Avg").unwrap(); // matches "Avg (ns)"
    assert_eq!(t.num(0, inst), Some(3000.0));
    assert_eq!(t.num(0, avg), Some(1603.7));
    assert_eq!(t.find("bump"), Some(0));
}

#[test]
fn notices_before_the_header_are_skipped() {
    let t = table("synthetic-nsys-launch-gap", "cuda_api_sum");
    assert_eq!(t.headers[0], "Time (%)");
    assert_eq!(t.rows.len(), 4);
    let calls = t.column("Num Calls").unwrap();
    let row = t.find("cuLaunchKernel").unwrap();
    assert_eq!(t.num(row, calls), Some(2000.0));
    // "6,981,220" with separators.
    assert_eq!(t.num(0, t.column("Total Time").unwrap()), Some(6_981_220.0));
}

#[test]
fn render_shows_microseconds() {
    let t = table("synthetic-nsys-launch-gap", "nvtx_sum");
    let text = t.render();
    assert!(text.contains("Total Time (µs)"), "{text}");
    assert!(text.contains("9630.41"), "{text}");
    assert!(
        text.contains(":launch-gap C: graph replay [llvm]"),
        "{text}"
    );
}

#[test]
fn a_skipped_report_is_an_empty_table_that_says_why() {
    let t = table("synthetic-nsys-empty", "nvtx_sum");
    assert!(t.rows.is_empty());
    assert!(
        t.note
            .as_deref()
            .unwrap()
            .contains("does not contain NV Tools Extension")
    );
    assert!(t.render().contains("(empty: SKIPPED"));
}

#[test]
fn launch_summary_reads_launches_syncs_and_the_demo_kernel() {
    let tables: Vec<_> = REPORTS
        .iter()
        .map(|r| table("synthetic-nsys-launch-gap", r))
        .collect();
    let lines = nsys_csv::launch_summary(&tables);
    assert!(
        lines.contains(&"cuLaunchKernel: 2,000 calls, 2.24 µs of CPU time each".to_string()),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("cuStreamSynchronize: 1,002 calls")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("cuGraphLaunch: 3 calls")),
        "{lines:#?}"
    );
    assert!(
        lines.contains(&"kernel bump: 3,000 launches, 1.60 µs of GPU time each".to_string()),
        "{lines:#?}"
    );
}

/// The H200 capture, once committed: every table parses and has rows.
#[test]
fn real_captures_parse() {
    let Ok(dir) = std::fs::read_dir(fixtures()) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("synthetic-") || !name.ends_with(".csv") {
            continue;
        }
        let report = REPORTS
            .iter()
            .find(|r| name.ends_with(&format!("_{r}.csv")));
        let Some(report) = report else { continue };
        let text = std::fs::read_to_string(e.path()).unwrap();
        let t = nsys_csv::parse_stats(report, &text).unwrap();
        assert!(!t.headers.is_empty(), "{name}: no header");
    }
}
