//! Device layer for rust-cuda's `rustc_codegen_nvvm` (libnvvm from CUDA 11.8, toolchain
//! `nightly-2021-12-04`, built by `nvvm/` through `cuda_builder`).
//!
//! Register reads and the barrier come from `cuda_std` 0.2.2, which the codegen lowers to
//! `llvm.nvvm.*` intrinsics. `cuda_std` has neither warp shuffles nor float atomics, and no
//! dynamic shared memory that works with this codegen, so those are written here: inline
//! `asm!` for the shuffle and the reductions, an `extern` address-space-3 array for the
//! shared memory, and `asm!` for the 16-byte load (libnvvm splits a plain 16-byte struct load
//! into four scalar loads).
//!
//! Everything is `#[inline(always)]`: libnvvm sees one function per kernel.

use super::Vec4;
use core::mem::size_of;

#[inline(always)]
pub fn thread_idx_x() -> u32 {
    cuda_std::thread::thread_idx_x()
}
#[inline(always)]
pub fn thread_idx_y() -> u32 {
    cuda_std::thread::thread_idx_y()
}
#[inline(always)]
pub fn block_idx_x() -> u32 {
    cuda_std::thread::block_idx_x()
}
#[inline(always)]
pub fn block_idx_y() -> u32 {
    cuda_std::thread::block_idx_y()
}
#[inline(always)]
pub fn block_dim_x() -> u32 {
    cuda_std::thread::block_dim_x()
}
#[inline(always)]
pub fn block_dim_y() -> u32 {
    cuda_std::thread::block_dim_y()
}
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    cuda_std::thread::grid_dim_x()
}

/// `bar.sync 0`.
///
/// # Safety
/// Every non-exited thread of the block must reach the same barrier.
#[inline(always)]
pub unsafe fn sync_threads() {
    cuda_std::thread::sync_threads()
}

extern "C" {
    /// The block's dynamic shared memory: an unsized `extern` array in address space 3,
    /// like CUDA C's `extern __shared__ float s[];`. libnvvm emits
    /// `.extern .shared .align 16 .b8 gpu_kernels_dynamic_shared[];` and, since the address
    /// space is known, `ld.shared`/`st.shared` for every access through it.
    /// (`cuda_std::shared::dynamic_shared_mem` declares a sized `u128` instead, which ptxas
    /// treats as an undefined 16-byte external symbol.)
    #[nvvm_internal(addrspace(3))]
    #[link_name = "gpu_kernels_dynamic_shared"]
    static mut DYNAMIC_SHARED: [u128; 0];
}

/// Base of the block's dynamic shared memory (the size passed at launch).
///
/// # Safety
/// Accesses must stay within the launch size; the usual data-race rules apply.
#[inline(always)]
pub unsafe fn dynamic_shared<T>() -> *mut T {
    DYNAMIC_SHARED.as_mut_ptr() as *mut T
}

/// `shfl.sync.down.b32` over the full warp: lane i gets lane i+offset's `v` (its own past 31).
///
/// # Safety
/// All 32 lanes of the warp must execute this call together.
#[inline(always)]
pub unsafe fn shfl_down(v: u32, offset: u32) -> u32 {
    let r: u32;
    asm!("shfl.sync.down.b32 {r}, {v}, {o}, 0x1f, 0xffffffff;",
         r = out(reg32) r, v = in(reg32) v, o = in(reg32) offset);
    r
}

/// `red.global.add.f32`: `*p += v`, atomically, result unused.
///
/// # Safety
/// `p` must point to a live, 4-byte-aligned f32 in global memory.
#[inline(always)]
pub unsafe fn atomic_add_f32(p: *mut f32, v: f32) {
    asm!("red.global.add.f32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v);
}

/// `red.global.add.s32`: `*p += v`, atomically, wrapping on overflow.
///
/// # Safety
/// `p` must point to a live, 4-byte-aligned i32 in global memory.
#[inline(always)]
pub unsafe fn atomic_add_i32(p: *mut i32, v: i32) {
    asm!("red.global.add.s32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v);
}

/// One 16-byte load, `ld.global.v4.b32`, for 4-byte `T` (the kernels use f32 and i32);
/// other sizes fall back to a plain load.
///
/// # Safety
/// `p` must be valid for reads, in global memory, and 16-byte aligned.
#[inline(always)]
pub unsafe fn load4<T: Copy>(p: *const Vec4<T>) -> Vec4<T> {
    if size_of::<T>() != 4 {
        return *p;
    }
    let (a, b, c, d): (u32, u32, u32, u32);
    asm!("ld.global.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];",
         a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
         p = in(reg64) p, options(pure, readonly, nostack));
    // SAFETY: `T` is 4 bytes (checked above), so `Vec4<T>` is four `u32`-sized words.
    core::mem::transmute_copy(&[a, b, c, d])
}

/// Declares a kernel entry point through `cuda_std`'s kernel attribute (`extern "C"`,
/// `#[no_mangle]`, marked as a kernel for the codegen).
macro_rules! kernel {
    ($(#[$m:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        #[cuda_std::kernel]
        pub unsafe fn $name($($arg: $ty),*) $body
    };
}
