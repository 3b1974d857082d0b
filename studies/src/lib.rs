//! What the lab makes of its own kernels, as a library under the `cargo xtask` front end. It
//! knows the catalogue; the general tools it stands on do not (`sass` reads any PTX and SASS,
//! `profiler` runs and reads ncu and nsys for any program). *The chapter* is the course chapter
//! `catalog::CHAPTER` names.
//!
//! - [`asm`]: the lab's PTX and SASS listed, counted, diffed, and checked against what the
//!   chapter teaches.
//! - [`explore`]: a kernel's source, PTX and SASS as one linked HTML page.
//! - [`profiles`]: the lab's kernels under ncu: `lab run` captured, the metrics it asks for,
//!   `profile`'s reports, the chapter's expected values beside the ncu tables, and how right
//!   the diagnosis is on the fault catalogue.
//! - [`compare`]: two kernels, compilers or results files compared: time verdict, counters,
//!   the recorded claims checked, SASS.
//! - [`plot`]: SVG charts of a bench results file; the time model held to one.
//! - [`rows_table`]: Part II's table: the row-wise kernels beside PyTorch, torch.compile,
//!   Liger and Triton, as × the copy.
//! - [`sanitize`]: every kernel under compute-sanitizer, and the canaries that prove each tool
//!   reports.
//! - [`experiment_log`]: the `--record "change; hypothesis"` rows, read and appended.
//! - [`process`]: running a child process (echo the command, pass on its failure).
//! - [`util`]: the lab's paths, its commit, the `lab` binary, CUDA tools, its source tree.

pub mod asm;
pub mod compare;
pub mod experiment_log;
pub mod explore;
pub mod plot;
pub mod process;
pub mod profiles;
pub mod rows_table;
pub mod sanitize;
pub mod util;
