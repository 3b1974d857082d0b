//! Bad flags and bad sizes: one clear line naming the value and the valid choices, a non-zero
//! exit, and no GPU needed to say so.

use std::process::Command;

/// Runs `lab ARGS`; returns (exit code, stderr).
fn lab(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(args)
        .output()
        .expect("run lab");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[track_caller]
fn refused(args: &[&str], needle: &str) {
    let (code, err) = lab(args);
    assert_ne!(code, 0, "lab {args:?} must fail; stderr: {err}");
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error:"),
        "lab {args:?}: first line should be the error: {err}"
    );
    assert!(
        err.contains(needle),
        "lab {args:?}: expected '{needle}' in: {err}"
    );
    assert!(!err.contains("panicked"), "lab {args:?} panicked: {err}");
}

#[test]
fn bad_sizes_are_refused_with_the_value() {
    refused(&["bench", "--size", "0"], "'0'");
    refused(&["bench", "--size", "abc"], "'abc'");
    refused(&["bench", "--size", "2^x"], "2^x");
    refused(&["bench", "--reps", "0"], "--reps");
    refused(
        &["run", "--kernel", "reduce_v3", "--offset", "4"],
        "--offset",
    );
}

#[test]
fn unknown_kernel_lists_the_valid_names() {
    // Checked before any GPU work, so this runs on machines without a GPU too.
    refused(
        &["run", "--kernel", "reduce_v9"],
        "valid: all, ceiling, reduce, transpose, launch_gap, faults, rows, or a kernel: reduce_v1",
    );
}

#[test]
fn unknown_flags_and_subcommands_are_refused() {
    refused(&["bench", "--sizes", "2^20"], "--sizes");
    refused(&["frobnicate"], "frobnicate");
}

/// An `--out` folder that cannot be written is refused before the GPU is touched (so also on
/// machines without one) and before anything is measured: one error line, no table.
#[test]
fn an_unwritable_out_folder_is_refused_before_measuring() {
    let out = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["bench", "--out", "/proc/nope"])
        .output()
        .expect("run lab");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "must fail: {err}");
    assert!(
        err.starts_with("error: --out: cannot write into '/proc/nope'"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        out.stdout.is_empty(),
        "measured before refusing: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}
