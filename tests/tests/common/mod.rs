//! Helpers shared by the integration tests.
#![allow(dead_code)]

use host::{HostError, Lab};

/// The GPU, or `None` after printing a visible skip line when this machine has none.
/// Any other failure (a driver that loads but breaks, a bad PTX) fails the test.
pub fn lab_or_skip(test: &str) -> Option<Lab> {
    match Lab::new() {
        Ok(lab) => Some(lab),
        Err(HostError::NoDevice) => {
            println!("skipped: no CUDA device ({test})");
            eprintln!("skipped: no CUDA device ({test})");
            None
        }
        Err(e) => panic!("{test}: {e}"),
    }
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
