//! Host side of the lab: one CUDA context, the kernels' PTX from both Rust GPU compilers and nvcc,
//! typed launchers that check what the kernels assume, CUDA-event timing, graph capture,
//! NVTX ranges and the CPU references the results are checked against. *The chapter* is the
//! course chapter `catalog::CHAPTER` names.
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
pub mod run;
pub mod timing;

pub use catalog::{Backend, Dtype, Kernel, Which};
pub use error::{HostError, Result};
pub use lab::Lab;
pub use launchers::Elem;

/// The kernels' PTX as `cargo xtask ptx` wrote it, embedded at build time.
pub mod ptx {
    include!(concat!(env!("OUT_DIR"), "/ptx.rs"));

    /// `backend`'s PTX (a missing one fails the build).
    pub fn of(backend: catalog::Backend) -> &'static str {
        match backend {
            catalog::Backend::Llvm => LLVM,
            catalog::Backend::Nvvm => NVVM,
            catalog::Backend::Nvcc => NVCC,
        }
    }
}
