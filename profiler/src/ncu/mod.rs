//! Nsight Compute: a program run under ncu, its raw page read into launches, and the metrics
//! the diagnosis reads.

pub mod metrics;
pub mod raw;
pub mod run;

pub use metrics::Counters;
pub use raw::{Launch, Value, parse_raw};
