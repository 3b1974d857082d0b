//! The lab's front end as a library: `main.rs` parses the command line and calls
//! [`commands`], one module per subcommand; the work is done by the modules below, which the
//! tests use directly. *The chapter* is the course chapter `catalog::CHAPTER` names.
//!
//! - [`asm`]: PTX and SASS read, counted, listed, diffed and checked.
//! - [`explore`]: a kernel's source, PTX and SASS as one linked HTML page.
//! - [`bench`]: `lab bench` run, its results file found, recorded and plotted.
//! - [`compare`]: two kernels, compilers or results files compared: time verdict, counters,
//!   the recorded claims checked, SASS.
//! - [`profiler`]: ncu and nsys found, run and read; the chapter's expected values; the
//!   diagnosis.
//! - [`sanitize`]: every kernel under compute-sanitizer, and the canaries that prove each tool
//!   reports.
//! - [`experiment_log`]: the `--record "change; hypothesis"` rows, read and appended.
//! - [`plot`]: SVG charts of a bench results file.
//! - [`nvvm`]: the rust-cuda kernel build.
//! - [`process`]: running a child process (echo the command, pass on its failure).
//! - [`util`]: paths, the commit, the `lab` binary, CUDA tools.

pub mod asm;
pub mod bench;
pub mod commands;
pub mod compare;
pub mod experiment_log;
pub mod explore;
pub mod nvvm;
pub mod plot;
pub mod process;
pub mod profiler;
pub mod sanitize;
pub mod util;
