//! Thread-block clusters (sm_90, PTX 8.1; `rows.rs`'s cluster schedule), written once for both
//! Rust GPU compilers as `common.rs` is: the cluster's special registers, its mbarriers and
//! `st.async` into another block's shared memory.
//!
//! rustc's backend writes `.target sm_90` PTX 8.1 (`+ptx81`: `st.async` needs it); rust-cuda's
//! libnvvm 11.8 writes `.target sm_80` PTX 7.8, which `cargo xtask ptx` raises to sm_90 PTX 8.1
//! (`catalog::ptx::raised_to_sm90`; ptxas then emits the same SASS for every other kernel).
//! The cluster barriers are each compiler's (`llvm.rs`, `nvvm.rs`).

use core::arch::asm;

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

/// [`cluster_ctarank`] read again where it is used: an `asm!` with effects, which neither
/// compiler merges with an earlier read or hoists out of a loop, so that a kernel short of
/// registers reads the special register again instead of holding, or spilling, its value.
#[inline(always)]
pub fn cluster_ctarank_here() -> u32 {
    let r: u32;
    // SAFETY: as above.
    unsafe { asm!("mov.u32 {r}, %cluster_ctarank;", r = out(reg32) r, options(nomem, nostack)) };
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
        asm!(
            "{{ .reg .pred p;",
            "mbarrier.try_wait.parity.shared::cta.b64 p, [{a}], {k};",
            "selp.u32 {d}, 1, 0, p; }}",
            d = out(reg32) done,
            a = in(reg32) a,
            k = in(reg32) parity,
            options(nostack)
        );
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
    asm!(
        "{{ .reg .u32 rp, rb;",
        "mapa.shared::cluster.u32 rp, {p}, {r};",
        "mapa.shared::cluster.u32 rb, {b}, {r};",
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [rp], {v}, [rb]; }}",
        p = in(reg32) shared_address(p),
        b = in(reg32) shared_address(bar),
        r = in(reg32) rank,
        v = in(reg32) v,
        options(nostack)
    );
}
