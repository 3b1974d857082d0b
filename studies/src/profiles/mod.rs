//! The lab's kernels under ncu, what the profiling subcommands (`profile`, `ncu-table`,
//! `ncu-transpose`, `accuracy`) share on top of the `profiler` crate (which finds and runs ncu
//! and nsys, parses their output, and diagnoses any kernel): the lab's own captures, the
//! chapter's expectations, and how right the diagnosis is.
//!
//! Its tests run on captured H200 output (`studies/tests/it/profile_*.rs`, fixtures under
//! `xtask/tests/fixtures/`).
//!
//! - [`capture`]: `lab run` under ncu so that exactly the profiled launches are collected, and
//!   captures read back.
//! - [`ncu`]: the options every ncu subcommand takes; rows collected (or read back); outputs.
//! - [`metrics`]: metric names, metric sets, the tables' derived columns.
//! - [`profile`]: `profile`'s full ncu report of each kernel, summarised; [`program`]: the same
//!   for kernels the lab did not build (`profile -- PROGRAM`, `--report FILE`).
//! - [`attribution`]: the lab's source tree and PTX for `profile --source`
//!   (`profiler::source`).
//! - [`expected`]: what the chapter expects ncu to measure, checked against what it did.
//! - [`tables`]: `ncu-table` and `ncu-transpose`, with the expected values beside the measured.
//! - [`accuracy`]: the diagnosis scored against the fault catalogue and the chapter's kernels.
//! - [`report`]: text / JSON / CSV printers.
//! - [`ncu_csv`]: `ncu --import R --page raw --csv`, as the `profiler` crate reads it.

pub mod accuracy;
pub mod attribution;
pub mod capture;
pub mod metrics;
pub mod ncu;
pub use profiler::ncu::raw as ncu_csv;
pub mod expected;
pub mod profile;
pub mod program;
pub mod report;
pub mod tables;
