//! Nsight Compute and Nsight Systems for any CUDA program, and the diagnosis of what they
//! measured. Nothing here knows the lab's kernels: a kernel is what a report says it is.
//!
//! - [`ncu`]: ncu's raw page read into launches; the metrics the rules read.
//! - [`diagnose`]: the rules, what each fault costs, and one ranked verdict per kernel.
//! - [`accuracy`]: the diagnosis scored against stated truths (a corpus's truth file).
//! - [`document`]: the one JSON document every way of profiling prints, and reading it back.
//! - [`program`], [`report`]: any program's kernels diagnosed, and one kernel's profile as
//!   text, the verdict first.
//! - [`nsys`]: a program traced under nsys (or its tables read back), and the verdict per NVTX
//!   range: is the time even inside a kernel?
//! - [`source`]: where a kernel's time goes in its source lines, from ncu's Source page and the
//!   line tables of its PTX (through the `sass` crate), and the diagnosis pointed at a line.
//! - [`tools`]: finding ncu and nsys, and their known failures (files are written whole by the
//!   `files` crate).
//! - [`process`], [`progress`]: a profiler run with its output forwarded, and its unfinished
//!   progress lines shown as a bar on a terminal.
//! - [`names`]: kernel names as a person reads them; [`gzip`]: a capture's text files, plain or
//!   gzipped.
//! - [`fmt`], [`table`]: numbers and fixed-width tables as the reports print them.

pub mod accuracy;
pub mod diagnose;
pub mod document;
pub mod fmt;
pub mod gzip;
pub mod names;
pub mod ncu;
pub mod nsys;
pub mod process;
pub mod program;
pub mod progress;
pub mod report;
pub mod source;
pub mod table;
pub mod tools;
