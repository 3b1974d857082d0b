//! What a newcomer meets on a machine without a GPU, and at the end of a pipe: one line that
//! says what to do, a non-zero exit, nothing half-written; a closed pipe ends quietly.

use std::process::{Command, Output};

fn xtask() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
}

/// Whether this machine's loader finds a CUDA driver without help (a GPU machine).
fn driver_installed() -> bool {
    Command::new("sh")
        .args(["-c", "ldconfig -p | grep -q 'libcuda\\.so\\.1 '"])
        .status()
        .is_ok_and(|s| s.success())
}

/// `xtask ARGS` as on a machine without the driver: the unpacked stand-in libcuda the tests
/// run with taken off the loader's path.
fn without_driver(args: &[&str]) -> Output {
    xtask()
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run xtask")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn every_gpu_command_says_in_one_line_that_there_is_no_driver() {
    if driver_installed() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let out = std::env::temp_dir().join(format!("no-gpu-{}", std::process::id()));
    let out_arg = out.display().to_string();
    for args in [
        vec!["bench"],
        vec!["bench", "--kernel", "v6", "--size", "2^20"],
        vec!["profile", "--kernel", "reduce_v3", "--output", &out_arg],
        vec!["nsys", "--output", &out_arg],
        vec!["sanitize", "--output", &out_arg],
        vec!["ncu-table", "--output", &out_arg],
    ] {
        let o = without_driver(&args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: no CUDA driver on this machine (libcuda.so.1 does not load)"),
            "{args:?}: {err}"
        );
        assert!(err.contains("cargo xtask dist"), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    assert!(!out.exists(), "nothing written");
}

#[test]
fn flags_kernel_names_and_sizes_are_checked_before_the_driver() {
    for (args, says) in [
        (
            vec!["bench", "--kernel", "nosuch"],
            "error: --kernel: 'nosuch' matches no kernel; valid: all, ceiling, reduce",
        ),
        (
            vec!["bench", "--size", "abc"],
            "error: invalid value 'abc' for '--size <N>': size 'abc' is not 2^k or a whole number",
        ),
        (
            vec!["bench", "--bogus"],
            "error: unexpected argument '--bogus' found",
        ),
        (
            vec!["profile", "--kernel", "nosuch"],
            "error: --kernel: 'nosuch' matches no kernel; valid: all, ceiling, reduce",
        ),
    ] {
        let o = without_driver(&args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with(says), "{args:?}: {err}");
    }
    // The list names every kernel, so the user can pick one.
    let err = stderr(&without_driver(&["bench", "--kernel", "nosuch"]));
    for name in ["reduce_v6", "transpose_padded", "cub_reduce_sum"] {
        assert!(err.contains(name), "{err}");
    }
}

#[test]
fn bench_help_needs_no_driver() {
    let o = without_driver(&["bench", "--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("--roof-rows"), "{help}");
    assert!(help.contains("--record"), "{help}");
}

#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    // The experiment log's table is far more than a pipe holds, so xtask is still writing when
    // `head` quits: its next write meets the closed pipe.
    let whole = xtask().arg("log").output().expect("run xtask log");
    assert!(whole.stdout.len() > 1 << 17, "{}", whole.stdout.len());
    for _ in 0..20 {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "'{}' log | head -c 10 >/dev/null",
                env!("CARGO_BIN_EXE_xtask")
            ))
            .output()
            .expect("run sh");
        let err = stderr(&o);
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{err}"
        );
        assert!(o.status.success(), "{err}");
    }
}
