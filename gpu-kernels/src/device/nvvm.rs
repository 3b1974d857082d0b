//! Device layer for rust-cuda's `rustc_codegen_nvvm` (libnvvm from CUDA 11.8, toolchain
//! `nightly-2021-12-04`, built by `nvvm/` through `cuda_builder`).
//!
//! Register reads come from `cuda_std` 0.2.2, which the codegen lowers to `llvm.nvvm.*`
//! intrinsics. Its dynamic shared memory is a sized 16-byte symbol, so an unsized `extern`
//! address-space-3 array stands in for it here; the barrier is inline `asm!` (see
//! [`sync_threads`]). Shuffles, atomics and the other inline assembly both compilers take
//! alike are in `common.rs`.
//!
//! The panic handler comes from `cuda_std`. Everything is `#[inline(always)]`: libnvvm sees
//! one function per kernel.

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
/// `barrier.sync 0`: the non-`.aligned` form of `bar.sync`.
///
/// Not `cuda_std::thread::sync_threads()` (`llvm.nvvm.barrier0` → `bar.sync 0`, which is
/// `barrier.sync.aligned`): libnvvm 11.8 tail-duplicates that barrier into both arms of the
/// trees' `if tid < stride` (v3, v4, v5), so lanes of one warp wait at *different* aligned
/// barrier instructions — undefined in PTX, and on the H200 reduce_v3 deadlocked. The
/// non-aligned form lets a warp's lanes arrive through different instructions; each thread
/// still executes the same barriers in the same order.
///
/// # Safety
/// Every non-exited thread of the block must reach the same number of barriers.
#[inline(always)]
pub unsafe fn sync_threads() {
    asm!("barrier.sync 0;", options(nostack));
}

extern "C" {
    /// The block's dynamic shared memory: an unsized `extern` array in address space 3,
    /// like CUDA C's `extern __shared__ float s[];`. libnvvm emits
    /// `.extern .shared .align 16 .b8 gpu_kernels_dynamic_shared[];` and, since the address
    /// space is known, `ld.shared`/`st.shared` for every access through it.
    /// (`cuda_std::shared::dynamic_shared_mem` declares `.b8 _Zcuda_std_dyn_shared[16]`
    /// instead, which ptxas turns into a 16-byte static array: "Unresolved extern variable ...
    /// ignoring extern qualifier".) `u128` only sets the alignment; it is never read as such.
    #[nvvm_internal(addrspace(3))]
    #[allow(improper_ctypes)]
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

/// Declares a kernel entry point through `cuda_std`'s kernel attribute (`extern "C"`,
/// `#[no_mangle]`, marked as a kernel for the codegen).
macro_rules! kernel {
    ($(#[$m:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        #[cuda_std::kernel]
        pub unsafe fn $name($($arg: $ty),*) $body
    };
}

// ---- The cluster barriers (the rest of the clusters' instructions: `cluster.rs`). ----

/// `barrier.cluster.wait`: waits until every thread of the cluster has arrived (acquire
/// semantics: what a releasing arrival wrote before it is then visible). Not the `.aligned`
/// form, for [`sync_threads`]'s reason: libnvvm may duplicate the call into both arms of a
/// branch before it, and an aligned barrier must be one instruction for a warp's lanes.
///
/// # Safety
/// As [`cluster_arrive_relaxed`], after this thread's own arrival.
#[inline(always)]
pub unsafe fn cluster_wait() {
    asm!("barrier.cluster.wait;", options(nostack));
}

/// `barrier.cluster.arrive.relaxed`: this thread has arrived, with no memory ordering. For a
/// barrier that orders no memory, or whose ordering a fence before it already made
/// (`fence.mbarrier_init`). Not `.aligned`, as [`cluster_wait`].
///
/// # Safety
/// Every thread of every block of the cluster must arrive, then wait ([`cluster_wait`]), the
/// same number of times.
#[inline(always)]
pub unsafe fn cluster_arrive_relaxed() {
    asm!("barrier.cluster.arrive.relaxed;", options(nostack));
}
