//! Host side of the lab: one CUDA context, the kernels' PTX from both Rust GPU compilers and
//! nvcc (read from disk when the context starts, [`ptx`]), typed launchers that check what the
//! kernels assume, CUDA-event timing, graph capture, NVTX ranges and the CPU references the
//! results are checked against. *The chapter* is the course chapter `catalog::CHAPTER` names.
//!
//! Unsafe lives in these places only, each block with a `SAFETY:` note naming what it relies
//! on:
//! - `ffi.rs`: raw driver calls (graph capture, a kernel's shared-memory allowance);
//! - `launchers/`: kernel launches, after the launcher checked what the kernel assumes;
//! - `cases/`: stream-ordered copies and fills of buffers a case owns, an output allocated
//!   uninitialized for its kernel to write (`faults`), and CUB's C entry points (`cub`);
//! - `placement.rs`: the candidate result words, sliced by address out of one pool, and
//!   their fills;
//! - `bench/measure/flush.rs`: the cold rows' L2 flush, a stream-ordered fill;
//! - `canary.rs`: the deliberately wrong launches compute-sanitizer must report;
//! - `main.rs`: SIGPIPE's default restored before any other thread exists.

pub mod bench;
pub mod canary;
pub mod cases;
pub mod cpu;
pub mod error;
pub mod ffi;
pub mod files;
pub mod lab;
pub mod launchers;
pub mod nvtx;
pub mod placement;
pub mod ptx;
pub mod run;
pub mod timing;

pub use catalog::{Backend, Dtype, Kernel, Which};
pub use error::{HostError, Result};
pub use lab::Lab;
pub use launchers::Elem;
