//! Host side of the lab: one CUDA context, the kernels' PTX from both Rust GPU compilers and nvcc,
//! typed launchers that check what the kernels assume, CUDA-event timing, graph capture,
//! NVTX ranges and the CPU references the results are checked against.
//!
//! Unsafe is confined: raw driver calls in `ffi.rs` (graph capture), kernel launches in
//! `kernels.rs` (each with a `SAFETY:` note naming what the launcher checked).

pub mod bench;
pub mod canary;
pub mod cpu;
pub mod error;
pub mod ffi;
pub mod files;
pub mod kernels;
pub mod lab;
pub mod nvtx;
pub mod placement;
pub mod profile;
pub mod timing;

pub use error::{HostError, Result};
pub use kernels::{Backend, Elem, Variant, Version};
pub use lab::Lab;

/// The kernels' PTX as `cargo xtask ptx` wrote it, embedded at build time.
pub mod ptx {
    include!(concat!(env!("OUT_DIR"), "/ptx.rs"));
}
