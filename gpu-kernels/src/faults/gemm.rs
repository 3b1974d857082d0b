//! Fault 1, tensor cores unused: one GEMM on the FMA pipe in FP32 and on the tensor cores in
//! BF16, the same tiling otherwise.
//!
//! Both compute `C = A · Bᵀ` (every `C[i][j] = Σ_k A[i][k] · B[j][k]`, f32 accumulation):
//! - `a`: device pointer, `m × k` row-major (k contiguous);
//! - `b`: device pointer, `n × k` row-major (k contiguous: the "TN" layout, each row of `b` a
//!   column of the product's right factor);
//! - `c`: device pointer, `m × n` row-major f32;
//! - `m`, `n`: multiples of [`GEMM_TILE`]; `k`: a multiple of [`GEMM_K_BF16`] (so one size
//!   serves both), all 16-byte-aligned buffers.
//!
//! # Tiling (both)
//! A block of [`GEMM_THREADS`] threads computes one `GEMM_TILE × GEMM_TILE` tile of C, walking
//! k in stages: each stage copies an `A` and a `B` slab into shared memory (16-byte global
//! loads), waits at a barrier, multiplies from shared memory into 64 accumulators per thread,
//! and waits again. The one thing changed is the inner product: 8 × 8 `fma.rn.f32` per k in
//! the fault, `mma.sync … .bf16` (16 × 8 × 16 per instruction) in the fix, with BF16 inputs.
//!
//! # Launch (both)
//! Grid `(n / GEMM_TILE, m / GEMM_TILE)`, blocks of [`GEMM_THREADS`] threads; dynamic shared
//! memory: the fault `2 · GEMM_K_F32 · GEMM_TILE · 4` bytes, the fix
//! `2 · GEMM_TILE · GEMM_PITCH_BF16 · 2` bytes.

use crate::device::*;
use crate::launch::faults::*;

const T: u32 = GEMM_TILE;

/// The FP32 GEMM: each thread's 8 × 8 outputs are rows `4ty..4ty+4` and `64+4ty..` by columns
/// `4tx..4tx+4` and `64+4tx..` of the tile (tx, ty = thread % 16, thread / 16), so the 16-byte
/// shared loads of a warp touch consecutive words. The stage is `GEMM_K_F32` deep, stored
/// k-major (`As[k][row]`, `Bs[k][col]`).
#[inline(always)]
unsafe fn gemm_f32(a: *const f32, b: *const f32, c: *mut f32, n: u32, k: u32) {
    const BK: u32 = GEMM_K_F32;
    let tid = thread_idx_x();
    let (tx, ty) = (tid % 16, tid / 16);
    let (m0, n0) = (block_idx_y() * T, block_idx_x() * T);
    let sa = dynamic_shared::<f32>();
    let sb = sa.add((BK * T) as usize);
    // Each thread loads 4 consecutive k of one row of A and of B per stage.
    let (row, kq) = (tid / 2, (tid % 2) * 4);
    let ga = a.add(((m0 + row) as u64 * k as u64 + kq as u64) as usize);
    let gb = b.add(((n0 + row) as u64 * k as u64 + kq as u64) as usize);

    let mut acc = [[0f32; 8]; 8];
    let mut k0 = 0;
    while k0 < k {
        let Vec4(va) = load4_ro(ga.add(k0 as usize) as *const Vec4<f32>);
        let Vec4(vb) = load4_ro(gb.add(k0 as usize) as *const Vec4<f32>);
        unroll!(4, j, 0, {
            *sa.add(((kq + j as u32) * T + row) as usize) = va[j];
            *sb.add(((kq + j as u32) * T + row) as usize) = vb[j];
        });
        sync_threads();
        let mut kk = 0;
        while kk < BK {
            let pa = sa.add((kk * T + 4 * ty) as usize) as *const Vec4<f32>;
            let pb = sb.add((kk * T + 4 * tx) as usize) as *const Vec4<f32>;
            let (Vec4(a0), Vec4(a1)) = (*pa, *pa.add(16));
            let (Vec4(b0), Vec4(b1)) = (*pb, *pb.add(16));
            let av = [a0[0], a0[1], a0[2], a0[3], a1[0], a1[1], a1[2], a1[3]];
            let bv = [b0[0], b0[1], b0[2], b0[3], b1[0], b1[1], b1[2], b1[3]];
            unroll!(8, i, 0, {
                unroll!(8, j, 0, {
                    acc[i][j] = fma_f32(av[i], bv[j], acc[i][j]);
                });
            });
            kk += 1;
        }
        sync_threads();
        k0 += BK;
    }

    unroll!(8, i, 0, {
        let r = m0 + 4 * ty + (i % 4) as u32 + 64 * (i / 4) as u32;
        let out = c.add((r as u64 * n as u64 + (n0 + 4 * tx) as u64) as usize) as *mut Vec4<f32>;
        let row = acc[i];
        store4(out, Vec4([row[0], row[1], row[2], row[3]]));
        store4(out.add(16), Vec4([row[4], row[5], row[6], row[7]]));
    });
}

/// The BF16 GEMM: 8 warps as 2 (rows) × 4 (columns), each computing a 64 × 32 piece of the
/// tile as 4 × 4 `mma.sync.m16n8k16` tiles (64 f32 accumulators per thread, as the fault). The
/// stage is `GEMM_K_BF16` deep (two k16 steps), stored row-major with a pitch of
/// `GEMM_PITCH_BF16` elements (`As[row][k]`, `Bs[col][k]`), so a fragment's 32-bit words fall
/// in 32 different banks.
#[inline(always)]
unsafe fn gemm_bf16(a: *const u16, b: *const u16, c: *mut f32, n: u32, k: u32) {
    const BK: u32 = GEMM_K_BF16;
    const _: () = assert!(BK == 2 * 16);
    const P: u32 = GEMM_PITCH_BF16;
    // The pitch in 32-bit words (two BF16 each).
    const PW: usize = P as usize / 2;
    let tid = thread_idx_x();
    let (lane, warp) = (tid % 32, tid / 32);
    let (g, q) = (lane / 4, lane % 4);
    let (wm, wn) = (warp / 4, warp % 4);
    let (m0, n0) = (block_idx_y() * T, block_idx_x() * T);
    let sa = dynamic_shared::<u16>();
    let sb = sa.add((T * P) as usize);
    // This lane's first fragment word: A's row g, B's column g, k pair q, of the warp's piece.
    let a_frag = (sa as *const u32).add(((wm * 64 + g) * P / 2 + q) as usize);
    let b_frag = (sb as *const u32).add(((wn * 32 + g) * P / 2 + q) as usize);

    let mut acc = [[[0f32; 4]; 4]; 4];
    let mut k0 = 0;
    while k0 < k {
        // Two 16-byte chunks (8 BF16) of A and of B per thread. A warp's 32 chunks are 8 rows
        // by the stage's 4 chunks of k. Each 8 lanes that store together (one wavefront of
        // 16-byte stores) take two whole rows, 64 contiguous bytes of global memory each, 4
        // rows apart: the pitch puts those on disjoint halves of the banks (rows 1 apart
        // would share 4 banks, and 8 lanes on 8 rows would touch 8 lines per load).
        unroll!(2, h, 0, {
            let chunk = tid + h as u32 * GEMM_THREADS;
            let (lane8, quarter) = (chunk % 8, chunk / 8 % 4);
            let row = 8 * (chunk / 32) + quarter + 4 * (lane8 / 4);
            let col = (lane8 % 4) * 8;
            let at = ((m0 + row) as u64 * k as u64 + (k0 + col) as u64) as usize;
            let bt = ((n0 + row) as u64 * k as u64 + (k0 + col) as u64) as usize;
            let Vec4(va) = load4_ro(a.add(at) as *const Vec4<u32>);
            let Vec4(vb) = load4_ro(b.add(bt) as *const Vec4<u32>);
            *(sa.add((row * P + col) as usize) as *mut Vec4<u32>) = Vec4(va);
            *(sb.add((row * P + col) as usize) as *mut Vec4<u32>) = Vec4(vb);
        });
        sync_threads();
        unroll!(2, ks, 0, {
            let mut bf = [[0u32; 2]; 4];
            unroll!(4, ni, 0, {
                let p = b_frag.add(ni * 8 * PW + ks * 8);
                bf[ni] = [*p, *p.add(4)];
            });
            unroll!(4, mi, 0, {
                let p = a_frag.add(mi * 16 * PW + ks * 8);
                let af = [*p, *p.add(8 * PW), *p.add(4), *p.add(8 * PW + 4)];
                unroll!(4, ni, 0, {
                    acc[mi][ni] = mma_bf16_m16n8k16(af, bf[ni], acc[mi][ni]);
                });
            });
        });
        sync_threads();
        k0 += BK;
    }

    // Every store's address is this lane's first one plus whole rows and a constant, so no
    // more than one row pointer is live beside the accumulators.
    let first = (m0 + wm * 64 + g) as u64 * n as u64 + (n0 + wn * 32 + 2 * q) as u64;
    let rows8 = 8 * n as usize;
    unroll!(4, mi, 0, {
        let top = c.add(first as usize + 2 * mi * rows8);
        let bottom = top.add(rows8);
        unroll!(4, ni, 0, {
            let d = acc[mi][ni];
            *top.add(8 * ni) = d[0];
            *top.add(8 * ni + 1) = d[1];
            *bottom.add(8 * ni) = d[2];
            *bottom.add(8 * ni + 1) = d[3];
        });
    });
}

kernel! {
    /// The fault: an FP32 GEMM on the FMA pipe (see the module doc for the layout and launch).
    fn tensor_cores_fault(a: *const f32, b: *const f32, c: *mut f32, m: u32, n: u32, k: u32) {
        let _ = m;
        gemm_f32(a, b, c, n, k)
    }
}

kernel! {
    /// The fix: the same GEMM with BF16 inputs (raw bits, `u16`), on the tensor cores.
    fn tensor_cores_fixed(a: *const u16, b: *const u16, c: *mut f32, m: u32, n: u32, k: u32) {
        let _ = m;
        gemm_bf16(a, b, c, n, k)
    }
}
