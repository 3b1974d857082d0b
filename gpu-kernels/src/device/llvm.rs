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

// ---- Thread-block clusters (sm_90; `rows.rs`'s cluster schedule). ----
// rustc's backend writes `.target sm_90` PTX, which may hold them; rust-cuda's writes
// `.target sm_80`, where ptxas refuses every cluster instruction, so `nvvm.rs` has none and
// the cluster schedule is this compiler's only (docs/part2.md).

/// `%cluster_ctarank`: this block's rank in its cluster, 0 .. [`cluster_nctarank`].
#[inline(always)]
pub fn cluster_ctarank() -> u32 {
    let r: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe {
        asm!("mov.u32 {r}, %cluster_ctarank;", r = out(reg32) r, options(pure, nomem, nostack))
    };
    r
}

/// `%cluster_nctarank`: blocks in this block's cluster.
#[inline(always)]
pub fn cluster_nctarank() -> u32 {
    let r: u32;
    // SAFETY: as above.
    unsafe {
        asm!("mov.u32 {r}, %cluster_nctarank;", r = out(reg32) r, options(pure, nomem, nostack))
    };
    r
}

/// `%clusterid.x`: this cluster's index in the grid along x.
#[inline(always)]
pub fn cluster_id_x() -> u32 {
    let r: u32;
    // SAFETY: as above.
    unsafe { asm!("mov.u32 {r}, %clusterid.x;", r = out(reg32) r, options(pure, nomem, nostack)) };
    r
}

/// `barrier.cluster.arrive.aligned`: this thread has arrived; its earlier writes (shared
/// memory included) are visible to every thread of the cluster that waits after it (release
/// semantics: the default, and the only ones PTX 7.8, rustc's PTX version, can write).
///
/// # Safety
/// Every thread of every block of the cluster must arrive, then wait ([`cluster_wait`]),
/// the same number of times, all lanes of a warp together.
#[inline(always)]
pub unsafe fn cluster_arrive() {
    asm!("barrier.cluster.arrive.aligned;", options(nostack));
}

/// `barrier.cluster.wait.aligned`: waits until every thread of the cluster has arrived; their
/// writes before arriving are then visible to this thread (acquire semantics, the default).
///
/// # Safety
/// As [`cluster_arrive`], after this thread's own arrival.
#[inline(always)]
pub unsafe fn cluster_wait() {
    asm!("barrier.cluster.wait.aligned;", options(nostack));
}

/// The word at `p` (a pointer into this block's shared memory) in the shared memory of the
/// cluster's block `rank`: `mapa.shared::cluster` then `ld.shared::cluster.u32` (the
/// distributed shared memory).
///
/// # Safety
/// `p` must point into this block's shared memory, 4-byte aligned; `rank` must be a block of
/// the cluster that has not exited, and its word must not be written concurrently.
#[inline(always)]
pub unsafe fn ld_shared_cluster_u32(p: *const u32, rank: u32) -> u32 {
    let v: u32;
    asm!("{{ .reg .u64 s; .reg .u32 a, r; cvta.to.shared.u64 s, {p}; cvt.u32.u64 a, s; \
          mapa.shared::cluster.u32 r, a, {rank}; ld.shared::cluster.u32 {v}, [r]; }}",
         v = out(reg32) v, p = in(reg64) p, rank = in(reg32) rank, options(nostack));
    v
}
