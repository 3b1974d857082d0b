//! Every reduction version × element type × backend against the CPU references, on the GPU.
//! Integers must match exactly (wrapping). Floats twice: random [0, 1) inputs must lie within
//! the rounding-error bound of the version's addition order, |gpu − Σx| ≤ depth · 2^-24 · Σ|x|,
//! where depth is the longest chain of dependent f32 additions (`host::launchers::addition_depth`);
//! and small-integer inputs, which every addition order sums exactly, must give exactly their
//! integer sum (that bound is percents of Σ|x| at 2^28 and would pass a lost block). Skips
//! visibly without a GPU.

use crate::common::{assert_no_failures, lab_or_skip, seed};
use catalog::Shape;
use host::cases::verify::{SumRef, check_f32, check_f32_exact};
use host::launchers::reduce::check_len;
use host::launchers::{MAX_GRID_X, addition_depth, elements_per_block, reductions};
use host::{Backend, HostError, Kernel, Lab, cpu};

/// The sizes every version must get right: 1, below a warp, one block, one past a block,
/// past v4's 2048-element block, not a multiple of 4, and two sizes far past the 60 MB L2.
const SIZES: [usize; 8] = [1, 31, 256, 257, 2049, (1 << 20) + 3, 1 << 24, 1 << 28];

/// Runs every (backend, version) on one device buffer; returns the failure lines.
fn check_all<T: host::Elem>(
    lab: &Lab,
    input: &cust::memory::DeviceSlice<T>,
    label: &str,
    ok: impl Fn(Backend, &Kernel, T) -> Result<(), String>,
) -> Vec<String> {
    let mut failures = Vec::new();
    for backend in lab.backends() {
        for version in reductions().filter(|v| v.carried_by(backend)) {
            let case = format!("{} [{backend}] {label}", version.entry(T::DTYPE));
            match lab.reduce(backend, version, input) {
                Ok(got) => match ok(backend, version, got) {
                    Ok(()) => println!("ok      {case}"),
                    Err(why) => {
                        println!("FAILED  {case}: {why}");
                        failures.push(format!("{case}: {why}"));
                    }
                },
                Err(e) => failures.push(format!("{case}: {e}")),
            }
        }
    }
    failures
}

/// Integers: exactly the wrapping sum.
fn exact(want: i32) -> impl Fn(Backend, &Kernel, i32) -> Result<(), String> {
    move |_, _, got| {
        if got == want {
            Ok(())
        } else {
            Err(format!("got {got}, want {want}"))
        }
    }
}

/// The f32 check every caller shares (`host::cases::verify::check_f32`): within
/// depth · 2^-24 · Σ|x| of the f64 sum, depth from the version's launch for `x.len()`.
fn float_check<'a>(
    lab: &'a Lab,
    x: &[f32],
) -> impl Fn(Backend, &Kernel, f32) -> Result<(), String> + 'a {
    let reference = SumRef::f32(x);
    let n = x.len() as u64;
    move |backend, version, got| {
        let blocks = lab
            .reduce_config::<f32>(backend, version, n)
            .map_err(|e| e.to_string())?
            .grid
            .0;
        check_f32(got, &reference, addition_depth(version, n, blocks as u64)).map(|_| ())
    }
}

fn all_backends_built(lab: &Lab) {
    assert_eq!(
        lab.backends(),
        Backend::ALL,
        "this binary must carry every compiler's PTX (llvm, nvvm, nvcc)"
    );
}

#[test]
fn reduce_i32_exact_all_sizes() {
    let Some(lab) = lab_or_skip("reduce_i32_exact_all_sizes") else {
        return;
    };
    all_backends_built(&lab);
    let seed = seed();
    let mut failures = Vec::new();
    for n in SIZES {
        let x = cpu::random::i32s(n, -1000, 1000, seed ^ n as u64);
        let want = cpu::sum_i32_wrapping(&x);
        let d = lab.upload(&x).unwrap();
        failures.extend(check_all(&lab, &d, &format!("n={n}"), exact(want)));
    }
    assert_no_failures(&failures);
}

#[test]
fn reduce_f32_within_error_bound_all_sizes() {
    let Some(lab) = lab_or_skip("reduce_f32_within_error_bound_all_sizes") else {
        return;
    };
    let seed = seed();
    let mut failures = Vec::new();
    for n in SIZES {
        let x = cpu::random::f32s(n, seed ^ n as u64);
        let d = lab.upload(&x).unwrap();
        failures.extend(check_all(
            &lab,
            &d,
            &format!("n={n}"),
            float_check(&lab, &x),
        ));
    }
    assert_no_failures(&failures);
}

/// f32 sums of `cpu::random::exact_sum_f32s` (integers in ±8, no zeros) at each size from
/// each start offset: every version must give exactly the i64 sum, so one lost element, an
/// ignored tail or a block counted twice fails.
fn exact_sum_cases(lab: &Lab, offsets: &[usize], sizes: &[usize]) -> Vec<String> {
    let (max_n, max_offset) = (sizes.iter().max().unwrap(), offsets.iter().max().unwrap());
    let x = cpu::random::exact_sum_f32s(max_n + max_offset, seed());
    let d = lab.upload(&x).unwrap();
    let mut failures = Vec::new();
    for &offset in offsets {
        for &n in sizes {
            let want = cpu::sum_ints_i64(&x[offset..offset + n]);
            failures.extend(check_all(
                lab,
                &d.index(offset..offset + n),
                &format!("n={n} offset={offset} exact-sum ints"),
                move |_, _, got| check_f32_exact(got, want).map(|_| ()),
            ));
        }
    }
    failures
}

#[test]
fn reduce_f32_exact_sum_all_sizes() {
    let Some(lab) = lab_or_skip("reduce_f32_exact_sum_all_sizes") else {
        return;
    };
    assert_no_failures(&exact_sum_cases(&lab, &[0], &SIZES));
}

/// The exact sums from starts 1, 2 and 3 elements past a 16-byte boundary (v6's and v7's
/// scalar head), at every size of `SIZES` and the short ones around a 16-byte group.
#[test]
fn reduce_f32_exact_sum_misaligned_starts() {
    let Some(lab) = lab_or_skip("reduce_f32_exact_sum_misaligned_starts") else {
        return;
    };
    let sizes: Vec<usize> = [2, 3, 4, 5, 7].into_iter().chain(SIZES).collect();
    assert_no_failures(&exact_sum_cases(&lab, &[1, 2, 3], &sizes));
}

/// Starts 1, 2 and 3 elements past a 16-byte boundary: v6 peels a scalar head; the others
/// must not care.
#[test]
fn reduce_misaligned_starts() {
    let Some(lab) = lab_or_skip("reduce_misaligned_starts") else {
        return;
    };
    let seed = seed();
    let mut failures = Vec::new();
    let max = (1 << 20) + 3;
    let xi = cpu::random::i32s(max + 3, -1000, 1000, seed);
    let xf = cpu::random::f32s(max + 3, seed);
    let (di, df) = (lab.upload(&xi).unwrap(), lab.upload(&xf).unwrap());
    for offset in 1..=3 {
        for n in [1, 2, 3, 4, 5, 7, 31, 257, 2049, max] {
            let label = format!("n={n} offset={offset}");
            let want = cpu::sum_i32_wrapping(&xi[offset..offset + n]);
            failures.extend(check_all(
                &lab,
                &di.index(offset..offset + n),
                &label,
                exact(want),
            ));
            let s = &xf[offset..offset + n];
            let check = float_check(&lab, s);
            failures.extend(check_all(
                &lab,
                &df.index(offset..offset + n),
                &label,
                check,
            ));
        }
    }
    assert_no_failures(&failures);
}

/// n = 0 launches nothing and returns 0.
#[test]
fn reduce_empty_is_zero() {
    let Some(lab) = lab_or_skip("reduce_empty_is_zero") else {
        return;
    };
    let d = lab.upload(&[7i32, 8]).unwrap();
    for backend in lab.backends() {
        for version in reductions().filter(|v| v.carried_by(backend)) {
            assert_eq!(lab.reduce(backend, version, &d.index(0..0)).unwrap(), 0);
        }
    }
}

/// Sums that overflow i32 wrap exactly like the CPU's wrapping sum.
#[test]
fn reduce_i32_overflow_wraps() {
    let Some(lab) = lab_or_skip("reduce_i32_overflow_wraps") else {
        return;
    };
    let n = (1 << 20) + 3;
    let x = cpu::random::i32s(n, i32::MAX / 2, i32::MAX, seed());
    let want = cpu::sum_i32_wrapping(&x);
    assert_ne!(
        want as i64,
        cpu::sum_i64(&x),
        "the test input must overflow"
    );
    let d = lab.upload(&x).unwrap();
    let failures = check_all(&lab, &d, &format!("n={n} overflowing"), exact(want));
    assert_no_failures(&failures);
}

/// NaN and ±inf propagate as IEEE 754 says; subnormal inputs are summed, not flushed, except
/// by the final float atomic (see below).
#[test]
fn reduce_f32_special_values() {
    let Some(lab) = lab_or_skip("reduce_f32_special_values") else {
        return;
    };
    let n = 100_003;
    let base = cpu::random::f32s(n, seed());
    // (label, elements to overwrite, what the sum must be)
    type Case = (&'static str, Vec<(usize, f32)>, fn(f32) -> bool);
    let cases: [Case; 4] = [
        ("one NaN", vec![(n / 2, f32::NAN)], f32::is_nan),
        ("one +inf", vec![(7, f32::INFINITY)], |v| v == f32::INFINITY),
        ("one -inf", vec![(n - 1, f32::NEG_INFINITY)], |v| {
            v == f32::NEG_INFINITY
        }),
        (
            "+inf and -inf",
            vec![(3, f32::INFINITY), (n - 2, f32::NEG_INFINITY)],
            f32::is_nan,
        ),
    ];
    let mut failures = Vec::new();
    for (label, edits, want) in cases {
        let mut x = base.clone();
        for (i, v) in edits {
            x[i] = v;
        }
        let d = lab.upload(&x).unwrap();
        failures.extend(check_all(&lab, &d, label, |_, _, got| {
            if want(got) {
                Ok(())
            } else {
                Err(format!("got {got}"))
            }
        }));
    }
    // Subnormal inputs whose block sums are normal (n = 4096: every block of every version
    // gets at least 256 of them): the kernels' adds keep subnormals (no flush).
    let tiny = f32::from_bits(1 << 19); // 2^-130 < 2^-126, the smallest normal
    let x = vec![tiny; 4096];
    let d = lab.upload(&x).unwrap();
    failures.extend(check_all(
        &lab,
        &d,
        "subnormal inputs",
        float_check(&lab, &x),
    ));
    // A subnormal total: `atom/red.global.add.f32` flushes subnormal inputs and results to
    // zero (PTX ISA, "atom"), so the per-block atomic makes it 0. Pinned here as a known fact.
    let x = vec![f32::from_bits(1 << 9); 4099]; // 2^-140 each, total ≈ 2.9e-39 (subnormal)
    let d = lab.upload(&x).unwrap();
    failures.extend(check_all(&lab, &d, "subnormal total", |_, _, got| {
        if got == 0.0 {
            Ok(())
        } else {
            Err(format!("got {got:e}: the atomic no longer flushes to zero"))
        }
    }));
    assert_no_failures(&failures);
}

/// Past 2^31 elements (8 GiB of i32): every index is 64-bit. Skipped if the GPU lacks memory.
#[test]
fn reduce_past_2_pow_31_elements() {
    let Some(lab) = lab_or_skip("reduce_past_2_pow_31_elements") else {
        return;
    };
    let n = (1usize << 31) + 5;
    let (free, _) = lab.memory().unwrap();
    if free < (n * 4 + (1 << 30)) as u64 {
        println!("skipped: {n} i32 need {} bytes, {free} free", n * 4);
        return;
    }
    let x = cpu::random::i32s(n, -1_000_000, 1_000_000, seed());
    let want = cpu::sum_i32_wrapping(&x);
    let d = lab.upload(&x).unwrap();
    drop(x);
    let failures = check_all(&lab, &d, &format!("n={n}"), exact(want));
    assert_no_failures(&failures);
}

/// A length past what the grid can cover is refused with the limit named, not launched, by a
/// check that needs no GPU; a kernel launched as one wave takes any length.
#[test]
fn reduce_refuses_sizes_past_the_grid_limit() {
    for v in reductions() {
        let limit = MAX_GRID_X * elements_per_block(v);
        if matches!(v.shape, Shape::OneWave { .. }) {
            assert!(check_len(v, u64::MAX).is_ok(), "{v:?}");
            continue;
        }
        assert!(check_len(v, limit).is_ok(), "{v:?}");
        match check_len(v, limit + 1) {
            Err(e @ HostError::TooLarge { .. }) => {
                assert!(e.to_string().contains(&limit.to_string()), "{e}")
            }
            other => panic!("{v:?}: expected TooLarge, got {other:?}"),
        }
    }
    let v3 = catalog::kernels::find("reduce_v3").unwrap();
    assert_eq!(
        elements_per_block(v3),
        catalog::launch::reduce::BLOCK as u64
    );
}

/// The launch config refuses exactly the lengths the pure check refuses, with its words (the
/// two size the grid separately: this holds them together).
#[test]
fn reduce_config_applies_the_grid_limit() {
    let Some(lab) = lab_or_skip("reduce_config_applies_the_grid_limit") else {
        return;
    };
    for backend in lab.backends() {
        for v in reductions().filter(|v| v.carried_by(backend)) {
            let limit = MAX_GRID_X * elements_per_block(v);
            for n in [limit, limit + 1] {
                let got = lab.reduce_config::<f32>(backend, v, n).map(|_| ());
                let want = check_len(v, n);
                assert_eq!(
                    format!("{got:?}"),
                    format!("{want:?}"),
                    "{} [{backend}] n={n}",
                    v.name
                );
            }
        }
    }
}
