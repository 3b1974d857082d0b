//! Repeated launches must not leak device memory, on success and on error paths.

mod common;

use common::lab_or_skip;
use host::launchers::{reductions, transposes};
use host::{HostError, Kernel};

/// Device memory a run of `f` leaves behind, in bytes.
fn leaked(lab: &host::Lab, f: impl FnOnce()) -> i64 {
    lab.sync().unwrap();
    let before = lab.memory().unwrap().0 as i64;
    f();
    lab.sync().unwrap();
    before - lab.memory().unwrap().0 as i64
}

#[test]
fn thousand_launches_of_each_launcher_leak_nothing() {
    let Some(lab) = lab_or_skip("thousand_launches_of_each_launcher_leak_nothing") else {
        return;
    };
    let x = host::cpu::random::f32s(1 << 16, 5);
    let input = lab.upload(&x).unwrap();
    let output = lab.upload(&x).unwrap();
    let bump = lab.function(host::Backend::Llvm, "bump").unwrap();
    for backend in lab.backends() {
        let versions: Vec<&Kernel> = reductions().filter(|v| v.carried_by(backend)).collect();
        let variants: Vec<&Kernel> = transposes().filter(|v| v.carried_by(backend)).collect();
        let n = leaked(&lab, || {
            for i in 0..1000 {
                // Each call allocates and frees its result buffer.
                lab.reduce(backend, versions[i % versions.len()], &input)
                    .unwrap();
                let v = variants[i % variants.len()];
                lab.launch_transpose(backend, v, &input, &output, 256, 256, &lab.stream)
                    .unwrap();
            }
        });
        assert_eq!(
            n, 0,
            "[{backend}] 1000 reduce + transpose launches leaked {n} bytes"
        );
    }
    let n = leaked(&lab, || {
        for _ in 0..1000 {
            lab.launch_bump(
                host::Backend::Llvm,
                &bump,
                &output.index(0..4096),
                &lab.stream,
            )
            .unwrap();
        }
    });
    assert_eq!(n, 0, "1000 bump launches leaked {n} bytes");
    // Error paths: refused launches allocate nothing and free everything they took.
    let n = leaked(&lab, || {
        for _ in 0..1000 {
            let e = lab.launch_transpose(
                host::Backend::Llvm,
                transposes().nth(1).expect("a second tiled transpose"),
                &input,
                &output,
                1 << 20,
                1 << 20,
                &lab.stream,
            );
            assert!(matches!(e, Err(HostError::Invalid { .. })));
            assert!(lab.upload(&[0u8; 1]).is_ok());
        }
    });
    assert_eq!(n, 0, "1000 refused launches leaked {n} bytes");
    println!(
        "no leaks: 1000 launches of reduce, transpose and bump per backend, and 1000 refusals"
    );
}
