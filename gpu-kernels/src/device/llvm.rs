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
// rustc's backend writes `.target sm_90` PTX 8.1 (`+ptx81`: `st.async` needs it), which may
// hold them; rust-cuda's writes `.target sm_80`, where ptxas refuses every cluster
// instruction, so `nvvm.rs` has none and the cluster schedule is this compiler's only
// (docs/part2.md).

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

/// `%nclusterid.x`: clusters in the grid along x.
#[inline(always)]
pub fn cluster_count_x() -> u32 {
    let r: u32;
    // SAFETY: as above.
    unsafe { asm!("mov.u32 {r}, %nclusterid.x;", r = out(reg32) r, options(pure, nomem, nostack)) };
    r
}

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

/// `p`'s address in the shared window (32 bits), as `mbarrier`, `mapa` and `st.async` take it.
#[inline(always)]
fn shared_address<T>(p: *const T) -> u32 {
    let a: u32;
    // SAFETY: address arithmetic only (on the address as an integer: nothing is read).
    unsafe {
        asm!("{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; cvt.u32.u64 {a}, s; }}",
             a = out(reg32) a, p = in(reg64) p as usize as u64, options(pure, nomem, nostack))
    };
    a
}

/// `mbarrier.init.shared::cta.b64`: the barrier at `bar` expects `count` arrivals a phase,
/// then `fence.mbarrier_init.release.cluster`, so the cluster's other blocks see it initialised
/// once they have waited on a cluster barrier after this.
///
/// # Safety
/// `bar` must point into this block's shared memory, 8-byte aligned; one thread initialises
/// it, before any use.
#[inline(always)]
pub unsafe fn mbarrier_init_for_cluster(bar: *mut u64, count: u32) {
    asm!("mbarrier.init.shared::cta.b64 [{a}], {n}; fence.mbarrier_init.release.cluster;",
         a = in(reg32) shared_address(bar), n = in(reg32) count, options(nostack));
}

/// `mbarrier.arrive.expect_tx.shared::cta.b64`: this thread arrives at `bar` and its current
/// phase expects `bytes` more of asynchronous stores ([`st_async_u32`]) before it completes.
///
/// # Safety
/// As [`mbarrier_init_for_cluster`], after it.
#[inline(always)]
pub unsafe fn mbarrier_arrive_expect_tx(bar: *mut u64, bytes: u32) {
    asm!("{{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [{a}], {n}; }}",
         a = in(reg32) shared_address(bar), n = in(reg32) bytes, options(nostack));
}

/// `mbarrier.try_wait.parity.shared::cta.b64` until the phase of parity `parity` of `bar` has
/// completed; what the asynchronous stores it counted wrote is then visible to this thread.
///
/// # Safety
/// As [`mbarrier_arrive_expect_tx`].
#[inline(always)]
pub unsafe fn mbarrier_wait_parity(bar: *mut u64, parity: u32) {
    let a = shared_address(bar);
    loop {
        let done: u32;
        asm!("{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{a}], {k};               selp.u32 {d}, 1, 0, p; }}",
             d = out(reg32) done, a = in(reg32) a, k = in(reg32) parity, options(nostack));
        if done != 0 {
            return;
        }
    }
}

/// `st.async.shared::cluster.mbarrier::complete_tx::bytes.u32`: `v` to the word at `p` in the
/// shared memory of the cluster's block `rank`, counted (4 bytes) against the barrier at `bar`
/// in that block's shared memory (`p` and `bar` as this block's addresses: `mapa` moves both).
/// No fence and no cluster barrier: the receiver sees the word once its barrier's phase
/// completes.
///
/// # Safety
/// `p` (4-byte aligned) and `bar` (an initialised [`mbarrier_init_for_cluster`] barrier) point
/// into shared memory; block `rank` of the cluster has not exited and expects these bytes.
#[inline(always)]
pub unsafe fn st_async_u32(p: *mut u32, v: u32, bar: *mut u64, rank: u32) {
    asm!("{{ .reg .u32 rp, rb; mapa.shared::cluster.u32 rp, {p}, {r};           mapa.shared::cluster.u32 rb, {b}, {r};           st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [rp], {v}, [rb]; }}",
         p = in(reg32) shared_address(p), b = in(reg32) shared_address(bar), r = in(reg32) rank,
         v = in(reg32) v, options(nostack));
}
