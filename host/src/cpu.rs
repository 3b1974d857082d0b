//! CPU references the GPU results are checked against.

pub mod faults;
pub mod rows;

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

/// Σ x exactly, in i64, of integer-valued floats such as [`random::exact_sum_f32s`]' (panics
/// on any other value: the sum would not be an integer).
pub fn sum_ints_i64(x: &[f32]) -> i64 {
    match exact_int_sum(x) {
        Ok(s) => s,
        Err(v) => panic!("{v} is not an integer"),
    }
}

/// Σ x in i64 when every value is an integer; else the first value that is not.
fn exact_int_sum(x: &[f32]) -> Result<i64, f32> {
    x.iter()
        .map(|&v| {
            if v.fract() == 0.0 {
                Ok(v as i64)
            } else {
                Err(v)
            }
        })
        .sum()
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

/// Random inputs from a seed: uniform f32 in [0, 1), i32 in [lo, hi], and small nonzero
/// integers as f32 whose sum is exact in every order.
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

    /// The largest magnitude [`exact_sum_f32s`] draws.
    pub const EXACT_SUM_MAX: i32 = 8;

    /// Integers uniform in {−8, …, −1, 1, …, 8}, as f32: an input every addition order sums
    /// exactly, so a correct GPU sum of it equals [`super::sum_ints_i64`] bit for bit, while a
    /// lost or doubled part of the input shows however small it is.
    ///
    /// Exact because f32 holds every integer up to 2^24 and an add of two of them rounds only
    /// past that, which no partial sum comes near: the values have mean 0 and |x| ≤ 8, so a
    /// sum of m ≤ 2^28 of them has standard deviation ≤ 8·√m ≤ 8·2^14 = 2^17, and 2^24 is
    /// 2^7 = 128 standard deviations (64 at m = 2^30). Hoeffding's bound, in its maximal form
    /// for a running sum in any order fixed without looking at the values: P(|partial sum| ≥
    /// 2^24) ≤ 2·exp(−(2^24)² / (2·m·8²)) = 2·e^−8192 at m = 2^28 (2·e^−2048 at 2^30).
    ///
    /// No value is 0, so a lost or doubled element always changes the sum (by 1 to 8); a lost
    /// or doubled block of 256 changes it unless that block sums to 0, which happens with
    /// probability ≈ 1 / (√(2π)·81) ≈ 0.5 % (81 ≈ the standard deviation of 256 values).
    pub fn exact_sum_f32s(n: usize, seed: u64) -> Vec<f32> {
        let mut r = SmallRng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                // −8..=7, with 0..=7 moved up to 1..=8.
                let k = r.random_range(-EXACT_SUM_MAX..EXACT_SUM_MAX);
                (if k < 0 { k } else { k + 1 }) as f32
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sum_inputs_are_small_nonzero_integers_of_every_value() {
        let x = random::exact_sum_f32s(100_000, 7);
        let m = random::EXACT_SUM_MAX;
        let mut seen = vec![0u32; 2 * m as usize + 1];
        for &v in &x {
            assert!(v != 0.0 && v.fract() == 0.0 && v.abs() <= m as f32, "{v}");
            seen[(v as i32 + m) as usize] += 1;
        }
        // Every nonzero value in [−8, 8] drawn, about equally often (6250 each expected).
        for (i, &c) in seen.iter().enumerate() {
            let v = i as i32 - m;
            assert!(v == 0 || (5500..7000).contains(&c), "{v} drawn {c} times");
        }
        assert_eq!(seen[m as usize], 0);
        assert_eq!(x, random::exact_sum_f32s(100_000, 7));
        assert_ne!(x, random::exact_sum_f32s(100_000, 8));
    }

    #[test]
    fn exact_sum_inputs_sum_exactly_in_any_order() {
        let x = random::exact_sum_f32s(1 << 22, 11);
        let want = sum_ints_i64(&x);
        let reversed: Vec<f32> = x.iter().rev().copied().collect();
        // The orders farthest apart: one running sum (forward and backward) and a tree.
        for got in [
            sum_f32_sequential(&x),
            sum_f32_sequential(&reversed),
            sum_f32_tree(&x),
        ] {
            assert_eq!(got as f64, want as f64);
        }
        assert_eq!(sum_f64(&x), want as f64);
    }

    #[test]
    fn integer_sum_refuses_a_fraction() {
        assert_eq!(exact_int_sum(&[1.0, 0.5, 2.0]), Err(0.5));
        assert_eq!(exact_int_sum(&[1.0, -3.0]), Ok(-2));
    }
}
