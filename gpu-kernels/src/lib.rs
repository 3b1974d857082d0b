//! The lab's kernels, written once and compiled by two Rust GPU compilers:
//! rustc's built-in NVPTX backend (default) and rust-cuda's `rustc_codegen_nvvm` (feature `nvvm`).
//!
//! Kernel ABI: raw pointers and `u64`/`u32` lengths, never slices or references, so the host
//! side is plain `DeviceCopy` values and sizes past 2^32 elements are expressible.
#![no_std]
#![cfg_attr(
    not(feature = "nvvm"),
    feature(
        abi_ptx,
        stdarch_nvptx,
        asm_experimental_arch,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem
    )
)]
#![cfg_attr(
    feature = "nvvm",
    feature(register_attr, asm, asm_experimental_arch),
    register_attr(nvvm_internal)
)]
#![allow(clippy::missing_safety_doc)]
// `tid % (2 * stride) == 0` is the chapter's v1, and rustc 1.59 (nvvm) has no is_multiple_of.
#![allow(clippy::manual_is_multiple_of)]
#![cfg_attr(not(feature = "nvvm"), allow(internal_features))]

#[cfg(all(feature = "canaries", feature = "nvvm"))]
compile_error!("the canaries build with rustc's NVPTX backend only: drop feature `nvvm`");

#[macro_use]
pub mod device;
pub mod launch;
// Feature `canaries` builds the sanitizer's deliberately wrong kernels instead of the lab's,
// so the two never share a PTX.
#[cfg(not(feature = "canaries"))]
pub mod bump;
#[cfg(feature = "canaries")]
pub mod canary;
#[cfg(not(feature = "canaries"))]
pub mod faults;
#[cfg(not(feature = "canaries"))]
pub mod reduce;
#[cfg(not(feature = "canaries"))]
pub mod roofs;
#[cfg(not(feature = "canaries"))]
pub mod rows;
#[cfg(not(feature = "canaries"))]
pub mod stream;
#[cfg(not(feature = "canaries"))]
pub mod transpose;
