//! `bump`: the launch-gap demo kernel. A couple of microseconds of work, so that 1000 launches
//! in a row measure launch overhead, not the kernel.

use crate::device::*;

kernel! {
    /// `data[i] += 1` for `i < n`.
    ///
    /// - `data`: device pointer, `n` f32.
    ///
    /// # Launch
    /// 1-D, any block size, grid covering `n` (the demo: 16 × 256 for n = 4096).
    fn bump(data: *mut f32, n: u32) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        if i < n {
            *data.add(i as usize) += 1.0;
        }
    }
}
