//! `LAB_REQUIRE_GPU=1` turns "no CUDA device" from a skip into a failure, so a GPU machine
//! whose driver lost the device cannot pass the GPU tests by skipping them all.

use crate::common::{REQUIRE_GPU_ENV, lab_or_skip, no_device};
use std::process::Command;

#[test]
fn no_device_fails_when_a_gpu_is_required() {
    let e = no_device(true, "no_device_fails_when_a_gpu_is_required").unwrap_err();
    assert!(
        e.ends_with("LAB_REQUIRE_GPU=1 says this machine must have one"),
        "{e}"
    );
}

#[test]
fn no_device_skips_when_no_gpu_is_required() {
    assert_eq!(
        no_device(false, "no_device_skips_when_no_gpu_is_required"),
        Ok(())
    );
}

/// `lab_or_skip` in a child process under each value of the variable: with 1 it passes only
/// where there is a GPU; with 0 it passes everywhere; any other value is refused.
#[test]
fn lab_or_skip_obeys_lab_require_gpu() {
    let has_gpu = match host::Lab::new() {
        Ok(_) => true,
        Err(host::HostError::NoDevice) => false,
        Err(e) => panic!("{e}"),
    };
    for (value, passes, says) in [
        ("1", has_gpu, "LAB_REQUIRE_GPU=1 says"),
        ("0", true, "skipped: no CUDA device"),
        ("yes", false, "LAB_REQUIRE_GPU='yes'"),
    ] {
        // The probe's test name in this binary: its module path without the crate's name.
        let probe = concat!(module_path!(), "::probe_lab_or_skip")
            .split_once("::")
            .expect("a module path")
            .1;
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", probe, "--ignored", "--nocapture"])
            .env(REQUIRE_GPU_ENV, value)
            .output()
            .expect("run this test binary");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            out.status.success(),
            passes,
            "{REQUIRE_GPU_ENV}={value}: {text}"
        );
        if !has_gpu || !passes {
            assert!(text.contains(says), "{REQUIRE_GPU_ENV}={value}: {text}");
        }
    }
}

#[test]
#[ignore = "run as a child process by lab_or_skip_obeys_lab_require_gpu"]
fn probe_lab_or_skip() {
    let _ = lab_or_skip("probe_lab_or_skip");
}
