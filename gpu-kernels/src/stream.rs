//! The read ceiling: a kernel that only reads memory, 16 bytes per load, as fast as the GPU
//! can stream it. `cargo xtask bench` measures it first, in the same run as the reductions, and
//! reports every reduction as a percentage of it (a reduction must read every byte once and
//! writes almost nothing, so this is the fastest any reduction can be).
//!
//! The loaded values must be used, or the compiler deletes the loads: every thread folds its
//! words together with XOR and stores the result only if it equals `sentinel`, a value the
//! host picks at run time (the compiler cannot prove the store never happens, so it keeps every
//! load; the host passes a value no realistic input folds to, and nothing is written).

use crate::device::*;
pub use crate::launch::stream::*;

/// XOR of the four words of one 16-byte group.
#[inline(always)]
fn fold(v: Vec4<f32>) -> u32 {
    let Vec4([a, b, c, d]) = v;
    a.to_bits() ^ b.to_bits() ^ c.to_bits() ^ d.to_bits()
}

kernel! {
    /// Reads `n` 4-byte elements once (any 4-byte type: only the bits are used) and writes
    /// nothing, unless a thread's XOR of its words equals `sentinel`.
    ///
    /// - `input`: device pointer, `n` elements, 16-byte aligned (a `cuMemAlloc` base).
    /// - `n`: element count (`u64`): `n / 4` 16-byte groups, then up to 3 scalar elements.
    /// - `sentinel`: any value; the host picks one no thread's fold is expected to equal.
    /// - `out`: device pointer to one `u32`, written only on a sentinel match.
    ///
    /// # Launch
    /// 1-D, blocks of [`BLOCK`] threads, no shared memory, at least `ceil(n / (4 · BLOCK))`
    /// of them (the catalogue's shape): thread `t` reads the 16-byte group `t`, the first
    /// `n % 4` threads one element each of the scalar tail. A flat grid rather than a one-wave
    /// grid-stride loop, for the reason E11 found for the copy (docs/experiments.md, E14).
    fn read_stream_f32(input: *const f32, n: u64, sentinel: u32, out: *mut u32) {
        let gtid = block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64;
        let groups = n / 4;
        let mut acc = 0u32;
        if gtid < groups {
            acc = fold(load4((input as *const Vec4<f32>).add(gtid as usize)));
        }
        // The scalar tail: n % 4 elements after the last whole group.
        if gtid < n - groups * 4 {
            acc ^= (*input.add((groups * 4 + gtid) as usize)).to_bits();
        }

        if acc == sentinel {
            *out = acc;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The copy ceiling as a kernel: the transposes' bytes (read once, write once) in their easiest
// order, so ncu can profile the same traffic the driver's D2D copy moves (it cannot profile the
// driver's copy itself).

kernel! {
    /// `output[i] = input[i]` for `i < n`, 16 bytes per access: thread `t` copies the 16-byte
    /// group `t`, and the first `n % 4` threads one element each of the scalar tail. A flat
    /// grid, not a one-wave grid-stride loop: the blocks resident at one time then walk one
    /// narrow window of addresses, which the DRAM serves at the driver's copy rate (E11 in
    /// docs/experiments.md); each thread does as little else as possible, since there are
    /// n / 4 of them.
    ///
    /// - `input`, `output`: device pointers, `n` f32 each, 16-byte aligned, not overlapping.
    /// - `n`: element count (`u64`).
    ///
    /// # Launch
    /// 1-D, blocks of [`BLOCK`] threads, at least `ceil(n / (4 · BLOCK))` of them (the
    /// catalogue's shape: one 16-byte group per thread).
    fn copy_stream_f32(input: *const f32, output: *mut f32, n: u64) {
        let gtid = block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64;
        let groups = n / 4;
        let (src, dst) = (input as *const Vec4<f32>, output as *mut Vec4<f32>);
        if gtid < groups {
            store4(dst.add(gtid as usize), load4(src.add(gtid as usize)));
        }
        if gtid < n - groups * 4 {
            let k = (groups * 4 + gtid) as usize;
            *output.add(k) = *input.add(k);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The compute ceiling: FP32 fused multiply-adds, as fast as the SMs can issue them.

/// One step of every chain: `x = x · a + b`, eight independent `fma.rn.f32`.
#[inline(always)]
fn fma_step(x: &mut [f32; FMA_CHAINS as usize], a: f32, b: f32) {
    let mut k = 0;
    while k < FMA_CHAINS as usize {
        x[k] = fma_f32(x[k], a, b);
        k += 1;
    }
}

kernel! {
    /// Runs `iters` × [`FMA_UNROLL`] steps of [`FMA_CHAINS`] independent FMA chains per thread
    /// and reads no memory: 2 · FMA_CHAINS · FMA_UNROLL · iters FLOP per thread. The measured
    /// rate is the roofline's compute roof.
    ///
    /// - `iters`: outer loop trips (a run-time value, so the loop cannot be folded).
    /// - `a`, `b`: each step computes `x · a + b`; the host picks `a` just below 1 and a small
    ///   `b`, so every chain converges to `b / (1 − a)`: no overflow, no subnormals.
    /// - `sentinel`: the sum of a thread's chains is stored only if it equals this; the host
    ///   passes a value no chain sum reaches (the stores keep the arithmetic alive).
    /// - `out`: device pointer to one `f32`, written only on a sentinel match.
    ///
    /// # Launch
    /// 1-D, blocks of [`FMA_BLOCK`] threads, no shared memory, any grid (the host launches
    /// several full waves so every SM stays busy to the end).
    fn fma_peak_f32(iters: u32, a: f32, b: f32, sentinel: f32, out: *mut f32) {
        let t = (block_idx_x() * block_dim_x() + thread_idx_x()) as f32;
        let mut x = [0f32; FMA_CHAINS as usize];
        let mut k = 0;
        while k < FMA_CHAINS as usize {
            x[k] = t + k as f32;
            k += 1;
        }
        let mut i = 0;
        while i < iters {
            let mut u = 0;
            while u < FMA_UNROLL {
                fma_step(&mut x, a, b);
                u += 1;
            }
            i += 1;
        }
        let mut sum = 0f32;
        let mut k = 0;
        while k < FMA_CHAINS as usize {
            sum += x[k];
            k += 1;
        }
        if sum == sentinel {
            *out = sum;
        }
    }
}
