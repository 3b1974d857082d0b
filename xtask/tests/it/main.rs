//! `cargo xtask` as a command, end to end: each subcommand run as a child process (against
//! stand-ins for lab, ncu, nsys and compute-sanitizer where it needs a GPU machine), and the
//! repository's documents held to the files and figures they name. One binary (one link) for
//! all; what the commands compute is tested with the library that computes it (`studies`,
//! `profiler`, `sass`).

mod asm;
mod cdp;
mod compare_cli;
mod docs_figures;
mod docs_links;
mod explore;
mod harness;
mod model_check_cli;
mod no_gpu;
mod nsys_cli;
mod profile_cli;
mod rows_table_cli;
mod sanitize_cli;
mod source_cli;

#[path = "../fixtures/nsys/joined.rs"]
mod nsys_capture;
