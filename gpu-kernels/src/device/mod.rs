//! The thin device layer: everything a kernel needs from the hardware, one function per PTX
//! instruction, implemented once per Rust GPU compiler.
//!
//! - `llvm.rs`: rustc's built-in NVPTX backend (`core::arch::nvptx`, `asm!`, a 2026 nightly).
//! - `nvvm.rs`: rust-cuda's `rustc_codegen_nvvm` (`cuda_std`, libnvvm, a 2021 nightly).
//! - `common.rs`: what both compilers accept alike (the shuffles, atomics, wide loads and
//!   stores, the L1 prefetch, `redux.sync`, `fma.rn`, volatile shared accesses), written once.
//! - `cluster.rs`: the thread-block cluster's instructions both accept alike, written once.
//!
//! The kernel files (`reduce.rs`, `transpose.rs`, `stream.rs`, `roofs.rs`, `bump.rs`,
//! `rows.rs`) see only this module, so the same source builds under both compilers. All inline assembly lives in
//! those four files.
//!
//! Items each implementation provides (all `#[inline(always)]`):
//! - `thread_idx_x/y`, `block_idx_x/y`, `block_dim_x/y`, `grid_dim_x` — safe register reads.
//! - `sync_threads` — `bar.sync 0`; unsafe: every thread of the block must reach it.
//! - `dynamic_shared::<T>()` — base of the shared memory sized at launch.
//! - `shfl_down(v, offset)` — `shfl.sync.down.b32`, full mask; unsafe: all 32 lanes must call it.
//! - `shfl_xor(v, mask)` — `shfl.sync.bfly.b32`, full mask; unsafe: all 32 lanes must call it.
//! - `atomic_add_f32`, `atomic_add_i32` — `red.global.add`; unsafe: `p` must be a valid global.
//! - `load4` — one 16-byte global load; `load4_nc` — the same through the non-coherent path,
//!   no L1 allocation (`ld.global.nc.L1::no_allocate.v4`); `load4_ro` — the non-coherent path
//!   through L1 (`ld.global.nc.v4`); `load4_ro_with` — the same under an L2 cache policy,
//!   `l2_evict_last` the policy that keeps the lines it loads past the L2's others,
//!   `l2_evict_normal` a plain access's, `l2_evict_first` the one whose lines leave first;
//!   `load4_nc_with` — `load4_nc` under an L2 policy; `load4_ordered_with` — the same on the
//!   coherent path, which ptxas keeps in order with the thread's stores.
//! - `store4` — one 16-byte global store (`st.global.v4`, never split); `store4_where`, the
//!   same predicated on a condition instead of branched around.
//! - `redux_add_i32` — `redux.sync.add.s32` over the warp.
//! - `fma_f32(a, b, c)` — `fma.rn.f32`, `a · b + c` rounded once; safe.
//! - `ex2_approx_f32`, `sqrt_rn_f32`, `div_full_f32`, `rcp_approx_f32` — `ex2.approx.ftz`,
//!   `sqrt.rn`, `div.full`, `rcp.approx.ftz`; `bf16x2_rn` — two f32 to packed BF16
//!   (`cvt.rn.bf16x2.f32`); `bf16_unpack` — one half of a packed word as f32; `f16x2_rn`,
//!   `f16_unpack` — the same for IEEE half precision (`cvt.rn.f16x2.f32`, `cvt.f32.f16`) (the
//!   row-wise family).
//! - `cluster_ctarank`, `cluster_nctarank`, `cluster_id_x`, `cluster_count_x`,
//!   `cluster_arrive_relaxed`, `cluster_wait`, `mbarrier_init_for_cluster`,
//!   `mbarrier_arrive_expect_tx`, `mbarrier_wait_parity`, `st_async_u32` — thread-block
//!   clusters and their asynchronous stores (sm_90, PTX 8.1; rust-cuda's PTX is raised to
//!   them after its build); the two barriers are each compiler's, the rest in `cluster.rs`.
//! - `opaque_u32` — `v` through a move the compiler cannot see through: loop-invariant work
//!   derived from it stays in the loop (fewer registers held across it).
//! - `ld_shared_volatile_u32`, `st_shared_volatile_u32` — one `ld`/`st.volatile.shared.u32`
//!   each, through a generic pointer; unsafe: the pointer must be into shared memory.
//! - `kernel!` — declares an entry point with the compiler's kernel ABI.

/// Four elements loaded or stored as one 16-byte access (`ld.global.v4`).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Vec4<T>(pub [T; 4]);

#[cfg(not(feature = "nvvm"))]
#[macro_use]
mod llvm;
#[cfg(not(feature = "nvvm"))]
pub use llvm::*;

#[cfg(feature = "nvvm")]
#[macro_use]
mod nvvm;
#[cfg(feature = "nvvm")]
pub use nvvm::*;

mod cluster;
mod common;
pub use cluster::*;
pub use common::*;

/// A view of shared memory indexed like the chapter's `s[tid]` (u32 indices).
#[derive(Clone, Copy)]
pub struct Shared<T>(*mut T);

impl<T: Copy> Shared<T> {
    /// The block's dynamic shared memory, sized at launch.
    ///
    /// # Safety
    /// Every index used later must lie within the launch's shared-memory size.
    #[inline(always)]
    pub unsafe fn dynamic() -> Self {
        Shared(dynamic_shared::<T>())
    }
    /// # Safety
    /// `i` within the launch size; no concurrent write to `i` since the last barrier.
    #[inline(always)]
    pub unsafe fn get(self, i: u32) -> T {
        *self.0.add(i as usize)
    }
    /// # Safety
    /// `i` within the launch size; no other thread touches `i` until the next barrier.
    #[inline(always)]
    pub unsafe fn set(self, i: u32, v: T) {
        *self.0.add(i as usize) = v
    }
}
