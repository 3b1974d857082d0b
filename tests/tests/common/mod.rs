//! Helpers shared by the integration tests.
#![allow(dead_code)]

use host::{HostError, Lab};

/// Set to 1 on a GPU machine (`gpu/test.sh` does): a missing CUDA device then fails the GPU
/// tests instead of skipping them, so a run that tested nothing cannot pass.
pub const REQUIRE_GPU_ENV: &str = "LAB_REQUIRE_GPU";

/// The GPU, or `None` after printing a visible skip line when this machine has none (a
/// failure under `LAB_REQUIRE_GPU=1`). Any other failure (a driver that loads but breaks, a
/// bad PTX) fails the test.
pub fn lab_or_skip(test: &str) -> Option<Lab> {
    // Read first, so a mistyped value fails on every machine, with or without a GPU.
    let required = require_gpu();
    match Lab::new() {
        Ok(lab) => Some(lab),
        Err(HostError::NoDevice) => {
            skip_or_fail(required, test);
            None
        }
        Err(e) => panic!("{test}: {e}"),
    }
}

/// Whether `LAB_REQUIRE_GPU` asks for a GPU: `1` yes; unset, empty or `0` no.
pub fn require_gpu() -> bool {
    match std::env::var(REQUIRE_GPU_ENV).as_deref() {
        Err(_) | Ok("" | "0") => false,
        Ok("1") => true,
        Ok(v) => panic!("{REQUIRE_GPU_ENV}='{v}': set it to 1 (GPU required) or 0"),
    }
}

/// What a test does without a CUDA device: fails when a GPU is `required`, else prints a
/// visible skip line and returns.
pub fn skip_or_fail(required: bool, test: &str) {
    if let Err(why) = no_device(required, test) {
        panic!("{why}");
    }
}

/// Without a CUDA device: an error when a GPU is `required`, else the skip line, printed once.
pub fn no_device(required: bool, test: &str) -> Result<(), String> {
    if required {
        return Err(format!(
            "{test}: no CUDA device, and {REQUIRE_GPU_ENV}=1 says this machine must have one"
        ));
    }
    println!("skipped: no CUDA device ({test})");
    Ok(())
}

/// A fresh seed per run (printed, so a failure can be replayed with LAB_SEED=…).
pub fn seed() -> u64 {
    let seed = std::env::var("LAB_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("LAB_SEED={seed}");
    seed
}

/// Fails with every collected case line (not just the first), so one run shows all that broke.
#[track_caller]
pub fn assert_no_failures(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
