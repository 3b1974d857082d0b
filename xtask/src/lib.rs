//! The lab's front end as a library: `main.rs` parses the command line and calls
//! [`commands`], one module per subcommand, each a thin layer over the `studies` crate (the
//! lab's own studies), `profiler` and `sass` (general tools), and the `lab` binary.
//!
//! - [`mod@bench`]: `lab bench` run, its results file found, recorded and plotted.
//! - [`nvvm`]: the rust-cuda kernel build.

pub mod bench;
pub mod commands;
pub mod nvvm;
