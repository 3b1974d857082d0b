//! Repeated launches must not leak device memory, on success and on error paths.
//!
//! Free device memory is read device-wide, so the count runs alone: in a child process of this
//! binary, where no other test allocates meanwhile.

use crate::common::lab_or_skip;
use host::launchers::{reductions, transposes};
use host::{HostError, Kernel};
use std::process::Command;

/// Device memory a run of `f` leaves behind, in bytes.
fn leaked(lab: &host::Lab, f: impl FnOnce()) -> i64 {
    lab.sync().unwrap();
    let before = lab.memory().unwrap().0 as i64;
    f();
    lab.sync().unwrap();
    before - lab.memory().unwrap().0 as i64
}

/// Runs `test`, an ignored test of this module, alone in a child process of this binary (with
/// this process's environment, `LAB_REQUIRE_GPU` included), and passes on what it printed.
fn alone(test: &str) {
    // Its name in this binary: the module path without the crate's name.
    let module = module_path!().split_once("::").expect("a module path").1;
    let name = format!("{module}::{test}");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .expect("run this test binary");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{name}, run alone, failed");
}

#[test]
fn thousand_launches_of_each_launcher_leak_nothing() {
    alone("count_leaks");
}

#[test]
#[ignore = "run alone in a child process by thousand_launches_of_each_launcher_leak_nothing"]
fn count_leaks() {
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
