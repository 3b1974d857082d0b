//! Everything the profiling subcommands (`profile`, `ncu-table`, `ncu-transpose`, `nsys`)
//! share: finding and running the profilers, parsing their CSV, the chapter's expected values,
//! the diagnosis rules and the printers.
//!
//! Its tests (`xtask/tests/profile_*.rs`) exercise it on captured ncu and nsys output.
//!
//! - `tools`: find ncu/nsys (PATH, then NVIDIA's install folders), their known failures.
//! - `progress`: ncu's and nsys's unfinished progress lines, shown as a bar on a terminal.
//! - `capture`: `lab run` under ncu so that exactly the profiled launches are collected.
//! - `ncu`: the options every ncu subcommand takes; rows collected (or read back); outputs.
//! - `tables`: `ncu-table` and `ncu-transpose`, with the expected values beside the measured.
//! - `nsys`: a program traced under nsys (or its tables read back), rendered.
//! - `ncu_csv`: `ncu --import R --page raw --csv`; `nsys_csv`: `nsys stats --format csv`.
//! - `metrics`: metric names, metric sets, the tables' derived columns.
//! - `profile`: `profile`'s full ncu report of each kernel, summarised.
//! - `source`: `profile --source`: ncu's Source page per kernel line, hottest first.
//! - `expected`: what the chapter expects ncu to measure, checked against what it did.
//! - `diagnose`: the rules table (SOL regime, then causes).
//! - `report`: text / JSON / CSV printers.

pub mod accuracy;
pub mod capture;
pub mod lines;
pub mod metrics;
pub mod ncu;
pub use profiler::ncu::raw as ncu_csv;
pub mod expected;
pub mod profile;
pub mod program;
pub mod report;
pub mod source;
pub mod tables;
