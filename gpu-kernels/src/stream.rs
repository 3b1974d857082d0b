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

/// Threads per block of the stream kernel.
pub const BLOCK: u32 = 256;
/// Independent 16-byte loads each thread has in flight per loop trip.
pub const UNROLL: u64 = 4;

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
    /// 1-D, blocks of [`BLOCK`] threads, no shared memory, any grid (the host launches one
    /// wave: blocks per SM from the occupancy API × SMs). Each thread walks the 16-byte groups
    /// with a grid-stride loop, [`UNROLL`] independent loads per trip.
    fn read_stream_f32(input: *const f32, n: u64, sentinel: u32, out: *mut u32) {
        let threads = grid_dim_x() as u64 * block_dim_x() as u64;
        let gtid = block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64;
        let groups = n / 4;
        let body = input as *const Vec4<f32>;

        let mut acc = 0u32;
        let mut i = gtid;
        while i + (UNROLL - 1) * threads < groups {
            let a = load4(body.add(i as usize));
            let b = load4(body.add((i + threads) as usize));
            let c = load4(body.add((i + 2 * threads) as usize));
            let d = load4(body.add((i + 3 * threads) as usize));
            acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
            i += UNROLL * threads;
        }
        while i < groups {
            acc ^= fold(load4(body.add(i as usize)));
            i += threads;
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
