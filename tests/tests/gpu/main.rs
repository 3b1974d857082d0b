//! The kernels on the GPU, one binary (one link, one file in `dist/tests/`): every kernel ×
//! size class × compiler against its CPU reference, the fault catalogue, the roofs' kernels,
//! the row-wise family, the CPU references themselves, and `LAB_REQUIRE_GPU`. Without a CUDA device each GPU test
//! prints "skipped: no CUDA device" and passes (fails under `LAB_REQUIRE_GPU=1`).
//! `gpu_leak` counts device memory in a child process of its own, where no other test runs.

#[path = "../common/mod.rs"]
mod common;

mod cpu_reference;
mod gpu_faults;
mod gpu_leak;
mod gpu_reduce;
mod gpu_roofs;
mod gpu_rows;
mod gpu_transpose;
mod require_gpu;
