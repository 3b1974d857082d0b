//! The profiler crate's integration tests, one binary (one link) for all:
//!
//! - [`rules`]: the diagnosis rules on synthetic counters (and one H200 capture of the lab's
//!   cluster kernel);
//! - [`corpus`]: the held-out corpora (C++, Triton, PyTorch) graded against their truths;
//! - [`foreign`]: kernels the lab did not build, from real H200 captures;
//! - [`nsys`]: `nsys stats` tables and the verdicts per NVTX range, on the lab's H200 captures;
//! - [`progress`]: ncu's and nsys's progress while they run;
//! - [`source`]: hot source lines of a kernel from a tree that is not the lab's.

mod corpus;
mod foreign;
mod nsys;
mod progress;
mod rules;
mod source;

#[path = "../../../xtask/tests/fixtures/nsys/joined.rs"]
mod nsys_capture;

use profiler::ncu::{Launch, parse_raw};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The launches of one of the profiler's H200 raw pages,
/// `profiler/tests/fixtures/h200/<name>.raw.csv.gz`.
pub fn h200_launches(name: &str) -> Vec<Launch> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/h200")
        .join(format!("{name}.raw.csv.gz"));
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    parse_raw(&text).unwrap()
}

/// The lab's H200 captures, kept under `xtask/tests/fixtures/` (the docs and commands name
/// them there).
pub fn lab_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../xtask/tests/fixtures")
}
