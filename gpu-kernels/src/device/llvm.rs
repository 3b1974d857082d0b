//! Device layer for rustc's built-in NVPTX backend (`nvptx64-nvidia-cuda`, sm_90).

use core::arch::asm;
use core::arch::nvptx;

#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_thread_idx_x() }
}
#[inline(always)]
pub fn thread_idx_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_thread_idx_y() }
}
#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_x() }
}
#[inline(always)]
pub fn block_idx_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_y() }
}
#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_x() }
}
#[inline(always)]
pub fn block_dim_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_y() }
}
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_grid_dim_x() }
}

/// `bar.sync 0`.
///
/// # Safety
/// Every non-exited thread of the block must reach the same barrier.
#[inline(always)]
pub unsafe fn sync_threads() {
    nvptx::_syncthreads()
}

/// Base of the block's dynamic shared memory (the size passed at launch).
///
/// # Safety
/// Accesses must stay within the launch size; the usual data-race rules apply.
#[inline(always)]
pub unsafe fn dynamic_shared<T>() -> *mut T {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>()
}

/// Declares a kernel entry point with rustc's PTX kernel ABI.
macro_rules! kernel {
    ($(#[$m:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name($($arg: $ty),*) $body
    };
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the host sees a launch failure.
    unsafe { asm!("trap;", options(noreturn)) }
}

// ---- The sanitizer's canaries (`canary.rs`) only; `nvvm.rs` has no counterpart. ----

/// `bar.warp.sync mask`: waits until every lane in `mask` has executed a `bar.warp.sync`
/// with the same mask.
///
/// # Safety
/// The calling lane must be in `mask`, and every lane in `mask` must reach it.
#[cfg(feature = "canaries")]
#[inline(always)]
pub unsafe fn warp_sync(mask: u32) {
    asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack));
}

// ---- The cluster barriers (the rest of the clusters' instructions: `cluster.rs`). ----
// The `.aligned` forms: rustc's backend keeps each call one instruction, which a warp's lanes
// reach together.

/// `barrier.cluster.wait.aligned`: waits until every thread of the cluster has arrived (acquire
/// semantics, the default: what a releasing arrival wrote before it is then visible; ptxas
/// follows it with a `CCTL.IVALL`, the L1 invalidated).
///
/// # Safety
/// As [`cluster_arrive_relaxed`], after this thread's own arrival.
#[inline(always)]
pub unsafe fn cluster_wait() {
    asm!("barrier.cluster.wait.aligned;", options(nostack));
}

/// `barrier.cluster.arrive.relaxed.aligned`: this thread has arrived, with no memory ordering
/// (the default release puts a `MEMBAR.ALL.GPU` before it in SASS, which waits for every
/// store the thread has in flight). For a barrier that orders no memory, or whose ordering a
/// fence before it already made (`fence.mbarrier_init`).
///
/// # Safety
/// Every thread of every block of the cluster must arrive, then wait ([`cluster_wait`]), the
/// same number of times, all lanes of a warp together.
#[inline(always)]
pub unsafe fn cluster_arrive_relaxed() {
    asm!("barrier.cluster.arrive.relaxed.aligned;", options(nostack));
}
