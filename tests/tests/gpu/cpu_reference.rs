//! CPU-only checks of the references every GPU result is judged by (run in CI too).

use host::cpu;

#[test]
fn f64_reference_matches_exact_integer_sum() {
    // Integers below 2^24 are exact in f32 and their sum is exact in f64.
    let x: Vec<f32> = (0..100_003).map(|i| (i % 1000) as f32).collect();
    let exact: i64 = (0..100_003i64).map(|i| i % 1000).sum();
    assert_eq!(cpu::sum_f64(&x), exact as f64);
}

#[test]
fn wrapping_sum_wraps_like_two_complement() {
    let x = vec![i32::MAX, 1, 5];
    assert_eq!(cpu::sum_i32_wrapping(&x), i32::MIN + 5);
    assert_eq!(cpu::sum_i64(&x), i32::MAX as i64 + 6);
}

#[test]
fn transpose_reference() {
    let x: Vec<f32> = (0..6).map(|v| v as f32).collect(); // [[0,1,2],[3,4,5]]
    assert_eq!(cpu::transpose(&x, 2, 3), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    assert!(cpu::transpose(&[], 0, 7).is_empty());
}

/// The chapter's surprise: at 2^24 uniform floats the plain sequential f32 loop is far less
/// accurate than a tree sum of the same floats, because once the running sum is large each
/// small addend loses most of its bits.
#[test]
fn sequential_f32_loop_is_the_least_accurate() {
    let x = cpu::random::f32s(1 << 24, 42);
    let exact = cpu::sum_f64(&x);
    let seq = cpu::rel_error(cpu::sum_f32_sequential(&x) as f64, exact);
    let tree = cpu::rel_error(cpu::sum_f32_tree(&x) as f64, exact);
    println!(
        "n = 2^24: sequential f32 rel. error {seq:.3e}, tree f32 {tree:.3e}, ratio {:.0}",
        seq / tree
    );
    assert!(seq > 1e-5, "sequential error {seq:.3e} unexpectedly small");
    assert!(
        seq > 100.0 * tree,
        "sequential {seq:.3e} vs tree {tree:.3e}"
    );
}

#[test]
fn random_inputs_are_never_all_zero_and_depend_on_seed() {
    let a = cpu::random::f32s(1000, 1);
    let b = cpu::random::f32s(1000, 2);
    assert!(a.iter().any(|&v| v != 0.0));
    assert_ne!(a, b);
    let i = cpu::random::i32s(1000, -5, 5, 3);
    assert!(i.iter().all(|v| (-5..=5).contains(v)) && i.iter().any(|&v| v != 0));
}
