//! Nsight Compute and Nsight Systems for any CUDA program, and the diagnosis of what they
//! measured. Nothing here knows the lab's kernels: a kernel is what a report says it is.
//!
//! - [`ncu`]: ncu's raw page read into launches; the metrics the rules read.
//! - [`diagnose`]: the rules, what each fault costs, and one ranked verdict per kernel.
//! - [`names`]: kernel names as a person reads them.
//! - [`fmt`]: numbers as the reports print them.

pub mod diagnose;
pub mod fmt;
pub mod names;
pub mod ncu;
