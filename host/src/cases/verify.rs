//! What counts as a right answer, for every case: integers exactly, float sums against an f64
//! reference within a bound on the rounding of their addition order (and, on small-integer
//! inputs, exactly), arrays bit for bit.
//! Each check returns a short note for the table, or the error that fails the row.

use crate::cpu;

/// A verification verdict: a note for the table, or the error that fails the row.
pub type Verdict = Result<String, String>;

/// What a sum of `x` should be: the exact (f64 or i64) sum, and Σ|x| to scale float bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SumRef {
    pub sum: f64,
    pub abs_sum: f64,
    /// The i32 wrapping sum (what two's-complement atomics give); 0 for floats.
    pub wrapping: i32,
}

impl SumRef {
    pub fn f32(x: &[f32]) -> SumRef {
        SumRef {
            sum: cpu::sum_f64(x),
            abs_sum: cpu::sum_abs_f64(x),
            wrapping: 0,
        }
    }
    pub fn i32(x: &[i32]) -> SumRef {
        SumRef {
            sum: cpu::sum_i64(x) as f64,
            abs_sum: 0.0,
            wrapping: cpu::sum_i32_wrapping(x),
        }
    }
}

/// An f32 sum whose longest chain of dependent additions is `depth`: its error is at most
/// depth · 2^-24 · Σ|x| (the recursive-summation bound).
pub fn check_f32(got: f32, r: &SumRef, depth: u64) -> Result<String, String> {
    let err = (got as f64 - r.sum).abs();
    let tol = depth as f64 * f32::EPSILON as f64 / 2.0 * r.abs_sum;
    let rel = cpu::rel_error(got as f64, r.sum);
    if err <= tol && got.is_finite() {
        Ok(format!("rel err {rel:.1e}"))
    } else {
        Err(format!(
            "sum {got} but the f64 reference is {} (|error| {err:.3e} > bound {tol:.3e}, depth {depth})",
            r.sum
        ))
    }
}

/// An f32 sum of integers every addition order sums exactly (`cpu::random::exact_sum_f32s`):
/// exactly `want`, their i64 sum. Unlike [`check_f32`]'s bound, 0.1–6 % of Σ|x| at 2^28
/// elements, this fails one lost, extra or doubled element.
pub fn check_f32_exact(got: f32, want: i64) -> Result<String, String> {
    // f32 holds every integer up to 2^24; past it a correct sum may be rounded.
    if want.unsigned_abs() > 1 << f32::MANTISSA_DIGITS {
        return Err(format!(
            "the integer sum {want} is past 2^24, where f32 sums round: not an exact-sum input"
        ));
    }
    if got.is_finite() && got as f64 == want as f64 {
        Ok("exact".into())
    } else {
        Err(format!(
            "sum {got} but the exact integer sum is {want} (off by {})",
            got as f64 - want as f64
        ))
    }
}

/// An i32 sum: exactly the wrapping sum.
pub fn check_i32(got: i32, r: &SumRef) -> Result<String, String> {
    if got == r.wrapping {
        Ok("exact".into())
    } else {
        Err(format!(
            "sum {got} but the exact wrapping sum is {}",
            r.wrapping
        ))
    }
}

/// Element types the bench reduces: how to make them, check them and poison them.
pub trait Checked: Copy + PartialEq + std::fmt::Debug {
    fn reference(x: &[Self]) -> SumRef;
    fn check(got: Self, r: &SumRef, depth: u64) -> Result<String, String>;
    /// A value no correct sum of the bench's inputs comes out as (catches a launch that
    /// never wrote its output).
    fn poison() -> Self;
    fn random(n: usize, seed: u64) -> Vec<Self>;
}

impl Checked for f32 {
    fn reference(x: &[f32]) -> SumRef {
        SumRef::f32(x)
    }
    fn check(got: f32, r: &SumRef, depth: u64) -> Result<String, String> {
        check_f32(got, r, depth)
    }
    fn poison() -> f32 {
        f32::NAN
    }
    /// Uniform in [0, 1).
    fn random(n: usize, seed: u64) -> Vec<f32> {
        cpu::random::f32s(n, seed)
    }
}

impl Checked for i32 {
    fn reference(x: &[i32]) -> SumRef {
        SumRef::i32(x)
    }
    fn check(got: i32, r: &SumRef, _depth: u64) -> Result<String, String> {
        check_i32(got, r)
    }
    fn poison() -> i32 {
        0x7bad_bad0
    }
    /// Uniform in [-1000, 1000].
    fn random(n: usize, seed: u64) -> Vec<i32> {
        cpu::random::i32s(n, -1000, 1000, seed)
    }
}

/// The depth bound used for CUB's f32 sum. CUB's reduce runs a grid of at least one block of
/// ≥ 128 threads per SM, each thread adding its share in order, then two block trees: so no
/// chain is longer than n / (SMs · 128) + 64 (twice the slack of its real shape).
///
/// What [`check_f32`] with it guarantees is a rounding bound, not that every element was
/// added: it fails NaN, an unwritten output, or a lost share of the input past depth · 2^-24
/// of Σ|x|. At 2^28 on 132 SMs that is 9.5e-4 — about a thousand 256-value blocks of the
/// bench's [0, 1) input — so one lost or doubled block passes; the exact-sum input
/// ([`check_f32_exact`]) is what catches that.
pub fn cub_depth(n: u64, sm_count: u32) -> u64 {
    n.div_ceil(sm_count.max(1) as u64 * 128) + 64
}

/// How an output array compared with its reference, bit for bit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mismatches {
    /// Elements compared.
    pub len: usize,
    /// Elements whose bits differ.
    pub wrong: usize,
    /// The first of them: index, got, want.
    pub first: Option<(usize, f32, f32)>,
}

impl Mismatches {
    /// Compares the common length of `got` and `want`.
    pub fn of(got: &[f32], want: &[f32]) -> Mismatches {
        let mut bad = got
            .iter()
            .zip(want)
            .enumerate()
            .filter(|(_, (g, w))| g.to_bits() != w.to_bits());
        let first = bad.next().map(|(i, (&g, &w))| (i, g, w));
        Mismatches {
            len: got.len().min(want.len()),
            wrong: first.map_or(0, |_| 1 + bad.count()),
            first,
        }
    }

    /// `exact`, or the first mismatch and how many more there are.
    pub fn verdict(&self, what: &str) -> Verdict {
        match self.first {
            None => Ok("exact".into()),
            Some((i, g, w)) => Err(format!(
                "{what}: element {i} is {g} but should be {w} ({} more mismatches)",
                self.wrong - 1
            )),
        }
    }
}

/// Bit-for-bit equality of two f32 arrays; the first mismatches, on failure.
pub fn check_equal(got: &[f32], want: &[f32], what: &str) -> Verdict {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements, expected {}",
            got.len(),
            want.len()
        ));
    }
    Mismatches::of(got, want).verdict(what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_sums_pass_within_the_bound_and_fail_outside_it() {
        let x = f32::random(1 << 16, 1);
        let r = SumRef::f32(&x);
        let tree = cpu::sum_f32_tree(&x);
        assert!(check_f32(tree, &r, 17).is_ok());
        // One block's worth of values missing (what a lost block does) is far outside at this
        // size and depth (not at 2^28: see `cub_depth`).
        let short = (r.sum - cpu::sum_f64(&x[..256])) as f32;
        let e = check_f32(short, &r, 64).unwrap_err();
        assert!(e.contains("bound"), "{e}");
        assert!(check_f32(f32::NAN, &r, 1 << 20).is_err());
    }

    #[test]
    fn exact_float_sums_fail_one_lost_element_or_block() {
        let x = cpu::random::exact_sum_f32s(1 << 16, 4);
        let want = cpu::sum_ints_i64(&x);
        // The right sum, in the two most different orders, passes.
        assert_eq!(
            check_f32_exact(cpu::sum_f32_tree(&x), want),
            Ok("exact".into())
        );
        assert_eq!(
            check_f32_exact(cpu::sum_f32_sequential(&x), want),
            Ok("exact".into())
        );
        // A 256-element block whose sum is not 0 (a block summing to 0 is invisible to any
        // check of the total; see `exact_sum_f32s`).
        let block = x
            .chunks(256)
            .position(|b| cpu::sum_ints_i64(b) != 0)
            .expect("a block with a nonzero sum");
        let (start, end) = (block * 256, block * 256 + 256);
        let without = |range: std::ops::Range<usize>| {
            let mut y = x.clone();
            y.drain(range);
            cpu::sum_f32_tree(&y)
        };
        let doubled = {
            let mut y = x.clone();
            y.extend_from_slice(&x[start..end]);
            cpu::sum_f32_tree(&y)
        };
        for (what, got) in [
            ("one lost element", without(1000..1001)),
            ("the first element lost", without(0..1)),
            ("the last element lost", without(x.len() - 1..x.len())),
            ("one lost block", without(start..end)),
            ("one block counted twice", doubled),
            ("NaN", f32::NAN),
            ("+inf", f32::INFINITY),
        ] {
            let e = check_f32_exact(got, want).expect_err(what);
            assert!(e.contains("exact integer sum"), "{what}: {e}");
        }
        // A sum past 2^24 is refused as not an exact-sum input.
        let e = check_f32_exact(2f32.powi(25), 1 << 25).unwrap_err();
        assert!(e.contains("past 2^24"), "{e}");
        assert!(check_f32_exact(-16_777_216.0, -(1 << 24)).is_ok());
    }

    /// Why the exact check exists: v1's rounding bound at 2^22 [0, 1) floats (depth 16393,
    /// 0.1 % of Σ|x|) lets a lost 256-value block through.
    #[test]
    fn the_rounding_bound_passes_a_lost_block_at_large_n() {
        let n = 1u64 << 22;
        let x = f32::random(n as usize, 5);
        let r = SumRef::f32(&x);
        // The first version: one value per thread, one block per 256 values.
        let v1 = crate::launchers::reductions().next().unwrap();
        let depth = crate::launchers::addition_depth(v1, n, n / 256);
        let lost = (r.sum - cpu::sum_f64(&x[..256])) as f32;
        assert!(check_f32(lost, &r, depth).is_ok());
    }

    #[test]
    fn int_sums_are_exact_and_wrap() {
        let x = i32::random(10_001, 2);
        let r = SumRef::i32(&x);
        assert_eq!(check_i32(cpu::sum_i32_wrapping(&x), &r), Ok("exact".into()));
        assert!(check_i32(cpu::sum_i32_wrapping(&x) + 1, &r).is_err());
        let big = [i32::MAX, 1];
        assert_eq!(SumRef::i32(&big).wrapping, i32::MIN);
        assert!(x.iter().all(|v| (-1000..=1000).contains(v)));
    }

    #[test]
    fn poison_is_never_a_correct_result() {
        let x = f32::random(1000, 3);
        assert!(check_f32(f32::poison(), &SumRef::f32(&x), 1000).is_err());
        let y = i32::random(1000, 3);
        assert!(check_i32(i32::poison(), &SumRef::i32(&y)).is_err());
    }

    #[test]
    fn cub_bound_grows_with_n_per_thread() {
        assert_eq!(cub_depth(0, 132), 64);
        assert_eq!(cub_depth(132 * 128, 132), 65);
        assert_eq!(
            cub_depth(1 << 28, 132),
            (1u64 << 28).div_ceil(132 * 128) + 64
        );
        assert_eq!(cub_depth(10, 0), 65);
    }

    #[test]
    fn arrays_compare_bit_for_bit() {
        let a = [1.0f32, 2.0, 3.0];
        assert_eq!(check_equal(&a, &a, "t"), Ok("exact".into()));
        let b = [1.0f32, f32::NAN, 4.0];
        let e = check_equal(&b, &a, "t").unwrap_err();
        assert!(e.contains("element 1") && e.contains("1 more"), "{e}");
        let m = Mismatches::of(&b, &a);
        assert_eq!((m.len, m.wrong, m.first.map(|f| f.0)), (3, 2, Some(1)));
        assert!(check_equal(&a[..2], &a, "t").is_err());
    }
}
