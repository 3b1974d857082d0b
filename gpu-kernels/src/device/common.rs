//! The device layer's part that both Rust GPU compilers accept alike: inline `asm!` with the
//! same operands and options, and plain loads both lower to the same PTX instruction.
//! `mod.rs` includes it once for whichever compiler builds the crate; what differs between
//! them (register reads, the barrier, dynamic shared memory, the kernel ABI, the panic
//! handler) stays in `llvm.rs` and `nvvm.rs`.

use super::Vec4;
use core::arch::asm;

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

/// `shfl.sync.bfly.b32` over the full warp: lane i gets lane (i ^ mask)'s `v`.
///
/// # Safety
/// All 32 lanes of the warp must execute this call together.
#[inline(always)]
pub unsafe fn shfl_xor(v: u32, mask: u32) -> u32 {
    let r: u32;
    asm!("shfl.sync.bfly.b32 {r}, {v}, {m}, 0x1f, 0xffffffff;",
         r = out(reg32) r, v = in(reg32) v, m = in(reg32) mask);
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

/// One 16-byte load: a plain load of the aligned `Vec4`, which rustc's backend emits as
/// `ld.global.v4.b32` once the pointer is known to be global and libnvvm as
/// `ld.global.v4.f32` / `ld.global.v4.u32` (kernel pointer parameters are global; checked in
/// the PTX of `reduce_v6_*`).
///
/// # Safety
/// `p` must be valid for reads and 16-byte aligned.
#[inline(always)]
pub unsafe fn load4<T: Copy>(p: *const Vec4<T>) -> Vec4<T> {
    *p
}

// ---- Non-coherent 16-byte loads, unsplit 16-byte stores, `redux.sync`. ----
// libnvvm has no way to ask for these qualifiers from a plain load, so both compilers get
// them as inline `asm!`.

/// `ld.global.nc<qualifier>.v4.b32` of four 4-byte words at the generic pointer `$p`
/// (converted with `cvta.to.global` first), as `Vec4<T>`; other sizes of `T` load plainly.
/// `@op "ld.global"` first makes it the coherent load instead. With a `$policy` (from
/// [`l2_evict_last`], [`l2_evict_normal`]), the load is under that L2 cache policy:
/// `.L2::cache_hint`, the policy its last operand.
macro_rules! load4_nc_with {
    (@hint $policy:expr) => {
        ".L2::cache_hint"
    };
    (@operand $policy:expr) => {
        ", {policy}"
    };
    ($p:expr, $qualifier:literal $(, $policy:expr)?) => {
        load4_nc_with!(@op "ld.global.nc", $p, $qualifier $(, $policy)?)
    };
    (@op $op:literal, $p:expr, $qualifier:literal $(, $policy:expr)?) => {{
        let p = $p;
        if core::mem::size_of::<T>() != 4 {
            return *p;
        }
        let (a, b, c, d): (u32, u32, u32, u32);
        asm!(concat!("{{ .reg .u64 g; cvta.to.global.u64 g, {p}; ", $op, $qualifier,
                     $(load4_nc_with!(@hint $policy),)?
                     ".v4.b32 {{{a}, {b}, {c}, {d}}}, [g]", $(load4_nc_with!(@operand $policy),)?
                     "; }}"),
             a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
             p = in(reg64) p, $(policy = in(reg64) $policy,)? options(pure, readonly, nostack));
        // SAFETY: `T` is 4 bytes (checked above), so `Vec4<T>` is four `u32`-sized words.
        core::mem::transmute_copy(&[a, b, c, d])
    }};
}

/// One 16-byte read-only load that does not allocate in L1:
/// `ld.global.nc.L1::no_allocate.v4.b32` (the non-coherent path: the data must not be written
/// while the kernel runs).
///
/// # Safety
/// `p` must point to global memory, be valid for reads and 16-byte aligned, and nothing may
/// write those bytes during the kernel.
#[inline(always)]
pub unsafe fn load4_nc<T: Copy>(p: *const Vec4<T>) -> Vec4<T> {
    load4_nc_with!(p, ".L1::no_allocate")
}

/// One 16-byte read-only load through L1: `ld.global.nc.v4.b32`, never split.
///
/// # Safety
/// As [`load4_nc`].
#[inline(always)]
pub unsafe fn load4_ro<T: Copy>(p: *const Vec4<T>) -> Vec4<T> {
    load4_nc_with!(p, "")
}

/// `createpolicy.fractional.L2::<kind>.b64` with fraction 1 (every line of the access), for
/// [`load4_ro_with`]. A constant, held in uniform registers: make it once and pass it to each
/// load.
macro_rules! l2_policy {
    ($kind:literal) => {{
        let policy: u64;
        // SAFETY: computes a value from constants; touches no memory.
        unsafe {
            asm!(concat!("createpolicy.fractional.L2::", $kind, ".b64 {p}, 1.0;"),
                 p = out(reg64) policy, options(pure, nomem, nostack));
        }
        policy
    }};
}

/// The L2 cache policy under which the lines an access brings in are evicted after the L2's
/// other lines (`evict_last`).
#[inline(always)]
pub fn l2_evict_last() -> u64 {
    l2_policy!("evict_last")
}

/// The L2 cache policy of a plain access (`evict_normal`): for a load that shares its code
/// with loads under [`l2_evict_last`] and should not keep its lines.
#[inline(always)]
pub fn l2_evict_normal() -> u64 {
    l2_policy!("evict_normal")
}

/// The L2 cache policy under which the lines an access brings in are evicted before the L2's
/// other lines (`evict_first`): for a last read of data an earlier read kept.
#[inline(always)]
pub fn l2_evict_first() -> u64 {
    l2_policy!("evict_first")
}

/// [`load4_ro`] under an L2 cache policy from [`l2_evict_last`] or [`l2_evict_normal`]:
/// `ld.global.nc.L2::cache_hint.v4.b32`.
///
/// # Safety
/// As [`load4_nc`].
#[inline(always)]
pub unsafe fn load4_ro_with<T: Copy>(p: *const Vec4<T>, policy: u64) -> Vec4<T> {
    load4_nc_with!(p, "", policy)
}

/// [`load4_nc`] under an L2 cache policy: `ld.global.nc.L1::no_allocate.L2::cache_hint.v4.b32`,
/// for data the L2 keeps and the L1 cannot (read once a row, with the row's own lines
/// passing through the L1 in between).
///
/// # Safety
/// As [`load4_nc`].
#[inline(always)]
pub unsafe fn load4_nc_with<T: Copy>(p: *const Vec4<T>, policy: u64) -> Vec4<T> {
    load4_nc_with!(p, ".L1::no_allocate", policy)
}

/// [`load4_nc_with`] on the coherent path: `ld.global.L1::no_allocate.L2::cache_hint.v4.b32`,
/// which ptxas keeps in the thread's order with its stores (any of them could write these
/// bytes, as far as it knows), so the load leaves where the source puts it. A non-coherent
/// load promises no store does, and ptxas may sink it below stores to free registers (in
/// rust-cuda's LayerNorm cluster kernels, the loads of `b` ahead of their use, to after the
/// third output's store).
///
/// # Safety
/// `p` must point to global memory, be valid for reads and 16-byte aligned.
#[inline(always)]
pub unsafe fn load4_ordered_with<T: Copy>(p: *const Vec4<T>, policy: u64) -> Vec4<T> {
    load4_nc_with!(@op "ld.global", p, ".L1::no_allocate", policy)
}

/// `redux.sync.add.s32` over the full warp (sm_80+): every lane gets the wrapping sum of all
/// 32 lanes' `v`, in one instruction instead of five shuffle-and-add steps.
///
/// # Safety
/// All 32 lanes of the warp must execute this call together.
#[inline(always)]
pub unsafe fn redux_add_i32(v: i32) -> i32 {
    let r: i32;
    asm!("redux.sync.add.s32 {r}, {v}, 0xffffffff;",
         r = out(reg32) r, v = in(reg32) v, options(nostack));
    r
}

/// One 16-byte global store, `st.global.v4.b32`, always as one instruction (a plain store of
/// `Vec4` may be split when the compiler merges it with a neighbouring scalar store).
/// Types other than 4 bytes fall back to a plain store.
///
/// # Safety
/// `p` must point to global memory, be valid for writes and 16-byte aligned.
#[inline(always)]
pub unsafe fn store4<T: Copy>(p: *mut Vec4<T>, v: Vec4<T>) {
    if core::mem::size_of::<T>() != 4 {
        *p = v;
        return;
    }
    // SAFETY: `T` is 4 bytes (checked above), so `Vec4<T>` is four `u32`-sized words.
    let [a, b, c, d]: [u32; 4] = core::mem::transmute_copy(&v);
    asm!("{{ .reg .u64 g; cvta.to.global.u64 g, {p}; \
          st.global.v4.b32 [g], {{{a}, {b}, {c}, {d}}}; }}",
         p = in(reg64) p, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, d = in(reg32) d,
         options(nostack));
}

/// [`store4`] of four 4-byte words where `keep`, else nothing: one predicated `st.global.v4`,
/// not a branch around a store, so the compiler cannot sink what the value needs (its loads
/// above all) into a conditional block of its own.
///
/// # Safety
/// Where `keep`, as [`store4`]'s; elsewhere `p` is not dereferenced.
#[inline(always)]
pub unsafe fn store4_where(p: *mut Vec4<u32>, v: Vec4<u32>, keep: bool) {
    let Vec4([a, b, c, d]) = v;
    asm!("{{ .reg .pred k; .reg .u64 g; setp.ne.u32 k, {keep}, 0; cvta.to.global.u64 g, {p}; \
          @k st.global.v4.b32 [g], {{{a}, {b}, {c}, {d}}}; }}",
         keep = in(reg32) keep as u32, p = in(reg64) p,
         a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, d = in(reg32) d,
         options(nostack));
}

/// `v`, through a register move the compiler cannot see through (an `asm!` with effects):
/// what a loop computes from it stays in the loop, instead of being hoisted out and held in
/// registers across every iteration (the row-wise cluster's rows: `rows.rs`).
#[inline(always)]
pub fn opaque_u32(v: u32) -> u32 {
    let r: u32;
    // SAFETY: a move between registers.
    unsafe {
        asm!("mov.u32 {r}, {v};", r = out(reg32) r, v = in(reg32) v, options(nomem, nostack))
    };
    r
}

// ---- The roofline's compute roof (`stream::fma_peak_f32`). ----

/// `fma.rn.f32`: `a · b + c` with one rounding. Written out because neither compiler is
/// bound to fuse `a * b + c` (rustc's backend never does without fast-math flags), and the
/// FMA peak kernel must issue exactly this instruction.
#[inline(always)]
pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    let d: f32;
    // SAFETY: a register-only arithmetic instruction: no memory, no preconditions.
    unsafe {
        asm!("fma.rn.f32 {d}, {a}, {b}, {c};",
             d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c,
             options(pure, nomem, nostack));
    }
    d
}

// ---- The shared-memory roof (`roofs::shared_rw`). ----

/// `ld.volatile.shared.u32` from a generic pointer into shared memory: exactly one `LDS` per
/// call, which no compiler may merge, hoist or delete (a plain load of a word nobody else
/// writes would be hoisted out of the shared-memory roof's loop).
///
/// # Safety
/// `p` must point into the block's shared memory, 4-byte aligned.
#[inline(always)]
pub unsafe fn ld_shared_volatile_u32(p: *const u32) -> u32 {
    let v: u32;
    asm!("{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; ld.volatile.shared.u32 {v}, [s]; }}",
         v = out(reg32) v, p = in(reg64) p, options(nostack));
    v
}

/// `st.volatile.shared.u32` through a generic pointer into shared memory: exactly one `STS`
/// per call, never merged with the next store to the same word.
///
/// # Safety
/// `p` must point into the block's shared memory, 4-byte aligned.
#[inline(always)]
pub unsafe fn st_shared_volatile_u32(p: *mut u32, v: u32) {
    asm!("{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; st.volatile.shared.u32 [s], {v}; }}",
         p = in(reg64) p, v = in(reg32) v, options(nostack));
}

// ---- The fault catalogue's instructions (`faults.rs`): tensor cores, async copies, the SFU. ----

/// One warp-wide tensor-core multiply-accumulate (sm_80+):
/// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`, `d = a · b + c` for a 16×16 BF16
/// `a` (row-major), a 16×8 BF16 `b` (column-major) and a 16×8 f32 `c`, each spread over the
/// warp's 32 lanes in the PTX ISA's fragment layout: `a` as four registers of two BF16 each,
/// `b` as two, `c` and the result as four f32. With lane `l`, `g = l / 4` and `q = l % 4`:
/// `a[0]` holds A[g][2q..2q+2], `a[1]` A[g+8][2q..], `a[2]` A[g][2q+8..], `a[3]` A[g+8][2q+8..];
/// `b[0]` holds B[2q..2q+2][g], `b[1]` B[2q+8..][g]; `c[0..2]` C[g][2q..2q+2] and `c[2..4]`
/// C[g+8][2q..].
///
/// # Safety
/// All 32 lanes of the warp must execute this call together.
#[inline(always)]
pub unsafe fn mma_bf16_m16n8k16(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
    let [mut d0, mut d1, mut d2, mut d3] = c;
    asm!("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 \
          {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, \
          {{{d0}, {d1}, {d2}, {d3}}};",
         d0 = inout(reg32) d0, d1 = inout(reg32) d1, d2 = inout(reg32) d2, d3 = inout(reg32) d3,
         a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
         b0 = in(reg32) b[0], b1 = in(reg32) b[1], options(pure, nomem, nostack));
    [d0, d1, d2, d3]
}

/// `cp.async.cg.shared.global [dst], [src], 16` (sm_80+): starts copying 16 bytes from global
/// to shared memory without passing through registers (and, `.cg`, without allocating in L1).
/// The copy joins the thread's current group of async copies: [`cp_async_commit`] closes the
/// group, [`cp_async_wait`] waits for it.
///
/// # Safety
/// `dst` must point into the block's shared memory and `src` to global memory, both 16-byte
/// aligned and valid for 16 bytes; nothing may read `dst` before a wait covers the copy.
#[inline(always)]
pub unsafe fn cp_async_16(dst: *mut u32, src: *const u32) {
    asm!("{{ .reg .u64 s, g; cvta.to.shared.u64 s, {d}; cvta.to.global.u64 g, {p}; \
          cp.async.cg.shared.global [s], [g], 16; }}",
         d = in(reg64) dst, p = in(reg64) src, options(nostack));
}

/// `cp.async.commit_group`: closes this thread's current group of async copies (an empty
/// group when it has none, which still counts for [`cp_async_wait`]).
///
/// # Safety
/// None beyond those of the copies it closes; unsafe as the copies are.
#[inline(always)]
pub unsafe fn cp_async_commit() {
    asm!("cp.async.commit_group;", options(nostack));
}

/// `cp.async.wait_group PENDING`: waits until at most `PENDING` of this thread's committed
/// groups are still in flight (0: all of them are done). Other threads' copies need a
/// barrier after it before this thread reads them. `PENDING` is an immediate in PTX: 0 to 7.
///
/// # Safety
/// As [`cp_async_commit`].
#[inline(always)]
pub unsafe fn cp_async_wait<const PENDING: u32>() {
    match PENDING {
        0 => asm!("cp.async.wait_group 0;", options(nostack)),
        1 => asm!("cp.async.wait_group 1;", options(nostack)),
        2 => asm!("cp.async.wait_group 2;", options(nostack)),
        3 => asm!("cp.async.wait_group 3;", options(nostack)),
        4 => asm!("cp.async.wait_group 4;", options(nostack)),
        5 => asm!("cp.async.wait_group 5;", options(nostack)),
        6 => asm!("cp.async.wait_group 6;", options(nostack)),
        _ => asm!("cp.async.wait_group 7;", options(nostack)),
    }
}

/// One-operand f32 instructions as functions: `$name(x)` is `$instr` applied to `x`.
macro_rules! unary_f32 {
    ($($(#[$doc:meta])* $name:ident = $instr:literal;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(x: f32) -> f32 {
            let y: f32;
            // SAFETY: a register-only arithmetic instruction: no memory, no preconditions.
            unsafe {
                asm!(concat!($instr, " {y}, {x};"), y = out(reg32) y, x = in(reg32) x,
                     options(pure, nomem, nostack));
            }
            y
        }
    )*};
}

unary_f32! {
    /// `sin.approx.f32`: the SFU's sine (`MUFU.SIN` after a range scaling), maximum absolute
    /// error about 2^-20.5 for |x| ≤ π.
    sin_approx_f32 = "sin.approx.f32";
}

// ---- The row-wise family (`rows.rs`): the exponential, the square root, BF16 packing. ----

unary_f32! {
    /// `ex2.approx.ftz.f32`: 2^x on the SFU (`MUFU.EX2`), maximum relative error 2^-22 for
    /// finite results; subnormal inputs and results flush to zero; 2^-inf = +0, 2^NaN = NaN.
    ex2_approx_f32 = "ex2.approx.ftz.f32";
    /// `rcp.approx.ftz.f32`: `1 / x` within 1 ulp, one MUFU.RCP (subnormals flushed to zero).
    rcp_approx_f32 = "rcp.approx.ftz.f32";
    /// `sqrt.rn.f32`: the square root, rounded to nearest (IEEE).
    sqrt_rn_f32 = "sqrt.rn.f32";
}

/// `div.full.f32`: `a / b` within 2 ulp, without the IEEE-rounded division's slow-path
/// subroutine (whose call would cost a kernel registers it needs nowhere else).
#[inline(always)]
pub fn div_full_f32(a: f32, b: f32) -> f32 {
    let d: f32;
    // SAFETY: a register-only arithmetic instruction: no memory, no preconditions.
    unsafe {
        asm!("div.full.f32 {d}, {a}, {b};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
             options(pure, nomem, nostack));
    }
    d
}

/// `cvt.rn.bf16x2.f32` (sm_80+): `hi` and `lo` rounded to nearest-even BF16 and packed into
/// one word, `hi` in the upper half (a NaN stays a NaN).
#[inline(always)]
pub fn bf16x2_rn(hi: f32, lo: f32) -> u32 {
    let d: u32;
    // SAFETY: a register-only arithmetic instruction: no memory, no preconditions.
    unsafe {
        asm!("cvt.rn.bf16x2.f32 {d}, {hi}, {lo};", d = out(reg32) d, hi = in(reg32) hi,
             lo = in(reg32) lo, options(pure, nomem, nostack));
    }
    d
}

/// The BF16 in the low (`HIGH` false) or high half of `w`, as the f32 it is exactly: `w << 16`
/// or `w & 0xffff0000`. Inline assembly with side effects, on purpose: the compilers may then
/// neither merge two unpackings of one word nor hoist one, so a thread holding a row of BF16
/// keeps its packed words live (two elements per register) and unpacks them again in each
/// pass, instead of keeping every unpacked f32 live from the first pass to the last.
#[inline(always)]
pub fn bf16_unpack<const HIGH: bool>(w: u32) -> f32 {
    let y: f32;
    // SAFETY: a register-only integer instruction: no memory, no preconditions.
    unsafe {
        if HIGH {
            asm!("and.b32 {y}, {w}, 0xffff0000;", y = out(reg32) y, w = in(reg32) w,
                 options(nomem, nostack));
        } else {
            asm!("shl.b32 {y}, {w}, 16;", y = out(reg32) y, w = in(reg32) w,
                 options(nomem, nostack));
        }
    }
    y
}

/// `cvt.rn.f16x2.f32` (sm_80+): `hi` and `lo` rounded to nearest-even IEEE half precision and
/// packed into one word, `hi` in the upper half (past 65504: ±inf; a NaN stays a NaN).
#[inline(always)]
pub fn f16x2_rn(hi: f32, lo: f32) -> u32 {
    let d: u32;
    // SAFETY: a register-only arithmetic instruction: no memory, no preconditions.
    unsafe {
        asm!("cvt.rn.f16x2.f32 {d}, {hi}, {lo};", d = out(reg32) d, hi = in(reg32) hi,
             lo = in(reg32) lo, options(pure, nomem, nostack));
    }
    d
}

/// The half-precision number in the low (`HIGH` false) or high half of `w`, as the f32 it is
/// exactly (`cvt.f32.f16`). With side effects, as [`bf16_unpack`], for the same reason.
#[inline(always)]
pub fn f16_unpack<const HIGH: bool>(w: u32) -> f32 {
    let y: f32;
    // SAFETY: register-only moves and a conversion: no memory, no preconditions.
    unsafe {
        if HIGH {
            asm!("{{ .reg .b16 l, h; mov.b32 {{l, h}}, {w}; cvt.f32.f16 {y}, h; }}",
                 y = out(reg32) y, w = in(reg32) w, options(nomem, nostack));
        } else {
            asm!("{{ .reg .b16 l, h; mov.b32 {{l, h}}, {w}; cvt.f32.f16 {y}, l; }}",
                 y = out(reg32) y, w = in(reg32) w, options(nomem, nostack));
        }
    }
    y
}

// ---- Named barriers (a block's threads in groups: `rows.rs`'s cluster of two rows a block). ----
// The plain (non-aligned) forms, which both compilers' PTX accepts alike: a warp's lanes may
// reach them through different instructions.

/// `barrier.sync id, threads`: waits until `threads` threads (a multiple of 32) have arrived
/// at barrier `id` (1 to 15; 0 is [`sync_threads`]'s).
///
/// # Safety
/// Exactly `threads` threads, whole warps, use barrier `id` for each of its phases.
#[inline(always)]
pub unsafe fn sync_named(id: u32, threads: u32) {
    asm!("barrier.sync {i}, {n};", i = in(reg32) id, n = in(reg32) threads, options(nostack));
}

/// `barrier.arrive id, threads`: counts this thread's arrival at barrier `id` and goes on,
/// for the threads that [`sync_named`] there to wait for.
///
/// # Safety
/// As [`sync_named`]: the arriving and the waiting threads together are `threads`.
#[inline(always)]
pub unsafe fn arrive_named(id: u32, threads: u32) {
    asm!("barrier.arrive {i}, {n};", i = in(reg32) id, n = in(reg32) threads, options(nostack));
}

/// [`sync_named`] for this thread's half of the block: barrier 1 for the threads below
/// `ntid.x / 2`, barrier 2 for the rest, `ntid.x / 2` threads each. The barrier and the count
/// are worked out inside the instruction's block from `%tid.x` and `%ntid.x`, so no register
/// holds them between barriers (held, rustc's pair kernels spilled them).
///
/// # Safety
/// Every thread of the half calls it, in the same order as its other barriers; `ntid.x` is a
/// multiple of 64.
#[inline(always)]
pub unsafe fn sync_half_block() {
    asm!(
        "{{ .reg .u32 t, n, b; .reg .pred p; mov.u32 t, %tid.x; mov.u32 n, %ntid.x;",
        "shr.u32 n, n, 1; setp.ge.u32 p, t, n; selp.u32 b, 2, 1, p; barrier.sync b, n; }}",
        options(nostack)
    );
}
