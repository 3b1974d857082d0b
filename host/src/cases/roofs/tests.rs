//! The roofs' expected outputs, computed the way their kernels compute them.

use super::*;
use catalog::launch::roofs::{BLOCK, SHARED_STEPS, SPREAD_REDS_PER_WARP};

#[test]
fn compare_names_the_first_wrong_word_and_counts_the_rest() {
    assert_eq!(
        compare(&[0u32, 1, 2], |i| i as u32, "x"),
        Ok("exact (3 words)".into())
    );
    let e = compare(&[0u32, 9, 2, 7], |i| i as u32, "marks").unwrap_err();
    assert_eq!(e, "marks: word 1 is 9 but should be 1 (1 more wrong)");
}

/// The kernel's loop, run on the CPU: the doubled rows, the load at `2r + l + step`, the
/// wrapping sum.
fn shared_rw_on_cpu(blocks: u32, trips: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for b in 0..blocks {
        let mut a = vec![0u32; 2 * BLOCK as usize];
        for t in 0..BLOCK {
            let (lane, row) = (t % 32, t - t % 32);
            a[(2 * row + lane) as usize] = shared_rw_value(b, t);
            a[(2 * row + 32 + lane) as usize] = shared_rw_value(b, t);
        }
        for t in 0..BLOCK {
            let (lane, row) = (t % 32, t - t % 32);
            let mut sum = 0u32;
            for _ in 0..trips {
                for step in 0..SHARED_STEPS {
                    sum = sum.wrapping_add(a[(2 * row + lane + step) as usize]);
                }
            }
            out.push(sum);
        }
    }
    out
}

#[test]
fn shared_rw_sums_are_what_the_kernel_computes() {
    assert_eq!(shared_rw_sums(3, 5), shared_rw_on_cpu(3, 5));
    // A launch that skipped a trip would not pass.
    assert_ne!(shared_rw_sums(3, 5), shared_rw_on_cpu(3, 4));
    // Each thread of a warp reads the same 32 words, so the warp's sums agree.
    let s = shared_rw_sums(1, 7);
    assert!(s[..32].iter().all(|&x| x == s[0]) && s[0] != s[32]);
}

/// The kernel's numbering of its `red`s, counted one by one.
#[test]
fn spread_counts_are_the_kernels_numbering() {
    for (warps, lines) in [(8u64, 4u32), (16, 4096), (24, 64), (3, 1)] {
        let mut want = vec![0u64; lines as usize];
        for trip in 0..SPREAD_REDS_PER_WARP as u64 {
            for w in 0..warps {
                want[((w + trip * warps) & (lines as u64 - 1)) as usize] += 1;
            }
        }
        assert_eq!(
            spread_counts(warps, lines),
            want,
            "{warps} warps, {lines} lines"
        );
        assert_eq!(
            want.iter().sum::<u64>(),
            warps * SPREAD_REDS_PER_WARP as u64
        );
    }
}

#[test]
fn tree_sums_are_the_blocks_values_summed() {
    for block in [0u64, 1, 6, 7, 255, 256, 1 << 20] {
        let direct: u64 = (0..BLOCK as u64)
            .map(|t| (t ^ (block & 255)) + block % 7)
            .sum();
        assert_eq!(tree_sum(block), direct, "block {block}");
    }
    // Exact in an f32: well under 2^24.
    assert!(tree_sum(6) < 1 << 24);
}

#[test]
fn tile_copy_sources_move_whole_tiles_to_the_transposed_place() {
    // A 64×96 input: 2×3 tiles; the output, 96 rows of 64, is 3×2 tiles.
    let (rows, cols) = (64u32, 96u32);
    let n = (rows * cols) as usize;
    let src: Vec<u32> = (0..n).map(|i| tile_copy_source(i, rows, cols)).collect();
    // A permutation of the input's indices.
    let mut sorted = src.clone();
    sorted.sort_unstable();
    assert!(sorted.iter().enumerate().all(|(i, &v)| v == i as u32));
    // Output row 32 + 5 (tile row 1), column 7 (tile column 0): input tile (0, 1), row 5,
    // column 7 of that tile: input (5, 32 + 7).
    let at = (32 + 5) * rows as usize + 7;
    assert_eq!(src[at], 5 * cols + 32 + 7);
    // The first output row is the first input row's first tile, then its second tile row's.
    assert_eq!(&src[..2], &[0, 1]);
    assert_eq!(src[32], 32 * cols);
}

#[test]
fn scatter_values_are_the_transposes_sources() {
    // A 2×3 input: output (3×2) row x holds input column x.
    let got: Vec<u32> = (0..6).map(|i| scatter_value(i, 2, 3)).collect();
    assert_eq!(got, [0, 3, 1, 4, 2, 5]);
    let input: Vec<f32> = (0..6).map(|i| i as f32).collect();
    let t = crate::cpu::transpose(&input, 2, 3);
    assert_eq!(got, t.iter().map(|&v| v as u32).collect::<Vec<_>>());
}
