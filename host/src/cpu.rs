//! CPU references the GPU results are checked against.

/// Σ x in f64, pairwise (error ~ log2(n)·2^-53·Σ|x|: exact enough to judge any f32 sum).
pub fn sum_f64(x: &[f32]) -> f64 {
    if x.len() <= 64 {
        return x.iter().map(|&v| v as f64).sum();
    }
    let (a, b) = x.split_at(x.len() / 2);
    sum_f64(a) + sum_f64(b)
}

/// Σ |x| in f64: the scale of the float error bounds.
pub fn sum_abs_f64(x: &[f32]) -> f64 {
    x.iter().map(|&v| (v as f64).abs()).sum()
}

/// Σ x in f32, tree-shaped like the GPU versions (pairs, then pairs of pairs).
pub fn sum_f32_tree(x: &[f32]) -> f32 {
    if x.len() <= 8 {
        return x.iter().sum();
    }
    let (a, b) = x.split_at(x.len() / 2);
    sum_f32_tree(a) + sum_f32_tree(b)
}

/// Σ x in f32, one running sum: the plain loop. Kept to show how inaccurate it is at large n
/// (once the sum is large, each small addend loses most of its bits).
pub fn sum_f32_sequential(x: &[f32]) -> f32 {
    x.iter().fold(0.0f32, |s, &v| s + v)
}

/// Σ x exactly, in i64 (no overflow below 2^32 elements of i32).
pub fn sum_i64(x: &[i32]) -> i64 {
    x.iter().map(|&v| v as i64).sum()
}

/// Σ x wrapping in i32: what the GPU's two's-complement atomics give.
pub fn sum_i32_wrapping(x: &[i32]) -> i32 {
    x.iter().fold(0i32, |s, &v| s.wrapping_add(v))
}

/// Row-major `rows × cols` → `cols × rows`.
pub fn transpose(x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    assert_eq!(x.len(), rows * cols);
    let mut out = vec![0.0; x.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = x[r * cols + c];
        }
    }
    out
}

/// |a − b| / |b|, or |a − b| when b is 0.
pub fn rel_error(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        (a - b).abs()
    } else {
        ((a - b) / b).abs()
    }
}

/// Random inputs, never zeros: uniform f32 in [0, 1) / i32 in [lo, hi], from a seed.
pub mod random {
    use rand::{Rng, SeedableRng, rngs::SmallRng};

    pub fn f32s(n: usize, seed: u64) -> Vec<f32> {
        let mut r = SmallRng::seed_from_u64(seed);
        (0..n).map(|_| r.random::<f32>()).collect()
    }

    pub fn i32s(n: usize, lo: i32, hi: i32, seed: u64) -> Vec<i32> {
        let mut r = SmallRng::seed_from_u64(seed);
        (0..n).map(|_| r.random_range(lo..=hi)).collect()
    }
}
