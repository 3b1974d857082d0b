//! The kernel catalogue, and every name the lab's crates share.
//!
//! `host` (the `lab` binary, which launches kernels) and `xtask` (the front end, which runs
//! `lab`, ncu, nsys and the compilers) both read this crate, so a kernel, a compiler or a file
//! name is written down once:
//!
//! - [`names`]: the vocabulary, at the floor of the crate: [`Backend`], [`Runner`], [`Which`],
//!   [`Dtype`], [`Family`], [`Format`], the names every table, flag and record uses, parsed
//!   once where a string comes in.
//! - [`kernels`]: every kernel's name, family, element types, the compilers that carry it, how
//!   it is launched and what one launch does (`kernels::counts`); the one selection rule for
//!   `--kernel`.
//! - [`nvtx`]: the NVTX domain and ranges `lab` emits and the profilers filter on.
//! - [`ptx`]: where `cargo xtask ptx` writes each compiler's PTX.
//! - [`records`]: the plan, manifest and results records `lab` writes and `xtask` reads.
//! - [`roofs`]: the roofs a bench run measures (atomics, shared memory, blocks, launches,
//!   scattered stores beside the ceilings), read back from its rows.
//! - [`model`]: each kernel's predicted time, its counts against the measured roofs.
//! - [`rows`]: the row-wise family's operations, schedules, launches and shapes.
//! - [`launch`]: the launch constants the kernels are compiled with (the same file the kernel
//!   crate compiles).
//! - [`cdefs`]: the launch constants as nvcc `-D` flags, for the CUDA C++ twins.
//! - [`cli`]: the flags `lab` takes, which xtask checks before running it.
//!
//! The modules form layers, each using only those below it (a test holds them to it): the
//! vocabulary; the records; the roofs read off them; the kernels; the model and the flags.
//!
//! # The chapter
//!
//! Wherever the lab's sources, in any crate, say *the chapter*, they mean the course chapter
//! this lab accompanies, [`CHAPTER`]: "Profiling reductions and transposes" (its seed text is
//! `../shared/seeds/profiling-reductions-transposes.txt`, beside this repository). Its
//! section 6 is the reductions (v1–v7), its section 7 the transposes; *the chapter's
//! kernels*, *metrics* and *expected values* are those sections'.

/// The course chapter the lab accompanies: what *the chapter* means throughout the sources.
pub const CHAPTER: &str = "Profiling reductions and transposes";

pub mod cdefs;
pub mod cli;
pub mod kernels;
pub mod model;
pub mod names;
pub mod nvtx;
pub mod ptx;
pub mod records;
pub mod roofs;
pub mod rows;

/// The kernels' launch constants: the kernel crate's own file, compiled here too. The kernel
/// crate is also built by a 2021 toolchain whose cargo cannot read this crate's manifest, so
/// the file is shared by path rather than through a dependency.
#[path = "../../gpu-kernels/src/launch.rs"]
pub mod launch;

pub use kernels::{KERNELS, Kernel, Shape, select};
pub use names::{Backend, Dtype, Family, Format, Runner, SlotChoice, Which};
pub use roofs::Roofs;
