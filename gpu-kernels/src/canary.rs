//! The sanitizer's canaries: four kernels that are wrong on purpose, one per compute-sanitizer
//! tool, so that `cargo xtask sanitize` can show each tool flagging a fault before it reports
//! the lab's kernels clean. Built only with feature `canaries` (rustc's NVPTX backend), into
//! their own PTX (`target/ptx/canary/`); the lab's PTX sets never contain them. Launched only by
//! the hidden `lab canary <tool>`, whose process exists to be checked by the sanitizer.

use crate::device::*;

kernel! {
    /// memcheck: `data[i] = i` for `i <= n`, the classic off-by-one bound, so thread `n`
    /// writes one element past the end of a buffer of exactly `n` elements.
    ///
    /// # Launch
    /// 1-D, any block size, grid covering `n + 1` threads.
    fn canary_oob_write(data: *mut u32, n: u32) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        if i <= n {
            *data.add(i as usize) = i;
        }
    }
}

kernel! {
    /// racecheck: every thread writes its own index to shared `s[0]` and reads `s[0]` back,
    /// with no barrier between, so which value a thread reads depends on the schedule.
    /// Volatile, so the compiler keeps the read instead of forwarding the thread's own store.
    ///
    /// - `out`: device pointer, one `u32` per thread.
    ///
    /// # Launch
    /// One block of more than one warp (the race is between warps), 4 bytes of dynamic
    /// shared memory.
    fn canary_shared_race(out: *mut u32) {
        let s = dynamic_shared::<u32>();
        let tid = thread_idx_x();
        core::ptr::write_volatile(s, tid);
        *out.add(tid as usize) = core::ptr::read_volatile(s);
    }
}

kernel! {
    /// synccheck: threads 0..=16 of one warp execute `bar.warp.sync 0xffff` (`__syncwarp` with
    /// lanes 0..16), so thread 16 waits on a mask that leaves itself out: invalid arguments,
    /// which synccheck reports on sm_70 and later (NVIDIA's synccheck sample
    /// `illegal_syncwarp.cu` plants the same fault). The closing block barrier keeps threads
    /// 17..31 alive past the warp sync; were they to exit there, ptxas would drop the
    /// `WARPSYNC` as a no-op and leave synccheck nothing to check.
    ///
    /// # Launch
    /// One block of one warp (32 threads), no shared memory.
    fn canary_warp_sync_mask() {
        if thread_idx_x() <= 16 {
            warp_sync(0xffff);
        }
        sync_threads();
    }
}

kernel! {
    /// initcheck: thread 0 sums `input[0..n)`, which the host allocated and never wrote,
    /// and stores the sum to `*out`.
    ///
    /// - `input`: device pointer, `n` `u32`, uninitialised.
    /// - `out`: device pointer to one `u32`.
    ///
    /// # Launch
    /// One thread.
    fn canary_uninit_read(input: *const u32, n: u32, out: *mut u32) {
        let mut sum = 0u32;
        for i in 0..n {
            sum = sum.wrapping_add(*input.add(i as usize));
        }
        *out = sum;
    }
}
