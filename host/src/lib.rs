//! Host side of the lab: one CUDA context, the kernels' PTX from both Rust GPU compilers and nvcc,
//! typed launchers that check what the kernels assume, CUDA-event timing, graph capture,
//! NVTX ranges and the CPU references the results are checked against.
//!
//! Unsafe is confined: raw driver calls in `ffi.rs` (graph capture, a kernel's shared-memory allowance), kernel launches in
//! `launchers/` (each with a `SAFETY:` note naming what the launcher checked).

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
