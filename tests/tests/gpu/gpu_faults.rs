//! The fault catalogue on the GPU: every fault kernel and its fixed twin, on both Rust
//! compilers, against the CPU reference at the test scale (every output element checked),
//! outputs poisoned before each launch; the GEMMs also at their profiling size, on a sample;
//! and the launchers' refusals of what the kernels cannot take.

use crate::common::{assert_no_failures, lab_or_skip, seed};
use catalog::kernels::Pair;
use host::Lab;
use host::cases::Case;
use host::cases::faults::{FaultCase, Inputs, Scale};
use host::launchers::faults::pair;

/// Every kernel of `pairs` on every backend that carries it, at `scale`: one line per case,
/// the failures collected.
fn run_pairs(lab: &Lab, pairs: &[Pair], scale: Scale, seed: u64) -> Vec<String> {
    let mut failures = Vec::new();
    for &p in pairs {
        let inputs = match Inputs::new(lab, p, scale, seed) {
            Ok(i) => i,
            Err(e) => {
                failures.push(format!("{p:?} inputs: {e}"));
                continue;
            }
        };
        let (fault, fixed) = pair(p);
        for k in [fault, fixed] {
            for backend in lab.backends().into_iter().filter(|&b| k.carried_by(b)) {
                let label = format!("{} [{backend}] {}", k.name, inputs.size_label());
                let outcome = FaultCase::new(lab, backend, k, &inputs).and_then(|c| {
                    // Twice: the second launch must not read what the first one left.
                    for _ in 0..2 {
                        c.reset()?;
                        c.launch()?;
                        lab.sync()?;
                    }
                    c.verify()
                });
                match outcome {
                    Ok(Ok(note)) => println!("ok      {label}: {note}"),
                    Ok(Err(wrong)) => {
                        println!("FAILED  {label}: {wrong}");
                        failures.push(format!("{label}: {wrong}"));
                    }
                    Err(e) => {
                        println!("FAILED  {label}: {e}");
                        failures.push(format!("{label}: {e}"));
                    }
                }
            }
        }
    }
    failures
}

#[test]
fn every_fault_and_its_twin_is_right_on_both_compilers() {
    let Some(lab) = lab_or_skip("every_fault_and_its_twin_is_right_on_both_compilers") else {
        return;
    };
    let failures = run_pairs(&lab, &Pair::ALL, Scale::Test, seed());
    assert_no_failures(&failures);
}

/// The GEMMs at 4096³, the size the profilers see, on an even sample of C.
#[test]
fn gemms_at_their_profiling_size() {
    let Some(lab) = lab_or_skip("gemms_at_their_profiling_size") else {
        return;
    };
    let failures = run_pairs(&lab, &[Pair::TensorCores], Scale::Profile, seed());
    assert_no_failures(&failures);
}

/// What the kernels cannot take is refused before anything is launched: a kernel of another
/// pair, sizes the kernels do not divide, buffers of the wrong length.
#[test]
fn fault_launchers_refuse_what_the_kernels_cannot_take() {
    let Some(lab) = lab_or_skip("fault_launchers_refuse_what_the_kernels_cannot_take") else {
        return;
    };
    let b = lab.backends()[0];
    let s = &lab.stream;
    let words = lab.upload(&vec![1u32; 4096]).unwrap();
    let floats = lab.upload(&vec![1f32; 4096]).unwrap();
    let (spill_fault, spill_fixed) = pair(Pair::Spills);
    let (gemm_f32, gemm_bf16) = pair(Pair::TensorCores);
    // Another pair's kernel.
    assert!(
        lab.launch_two_paths(b, spill_fault, &words, 1, &words, s)
            .is_err()
    );
    // The spill fault takes a shift, its twin none.
    assert!(
        lab.launch_words_array(b, spill_fixed, &words, Some(3), &words, s)
            .is_err()
    );
    // 4096 words are 64 per thread of 64 threads: not a whole block of 256.
    let out = lab.upload(&[0u32; 64]).unwrap();
    assert!(
        lab.launch_words_array(b, spill_fault, &words, Some(3), &out, s)
            .is_err()
    );
    // A GEMM of a size its tiles do not divide, and with the other twin's input type.
    let c = lab.upload(&vec![0f32; 64 * 64]).unwrap();
    let a = lab.upload(&vec![1f32; 64 * 64]).unwrap();
    assert!(
        lab.launch_gemm(b, gemm_f32, &a, &a, &c, (64, 64, 64), s)
            .is_err()
    );
    assert!(
        lab.launch_gemm(b, gemm_bf16, &a, &a, &c, (128, 128, 32), s)
            .is_err()
    );
    // A strided copy from an input whose length is not a power of two.
    let (copy, _) = pair(Pair::Coalescing);
    let odd = lab.upload(&vec![1f32; 3000]).unwrap();
    assert!(lab.launch_strided_copy(b, copy, &odd, &floats, s).is_err());
    lab.sync().unwrap();
}
