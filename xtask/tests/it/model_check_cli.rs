//! `cargo xtask model-check` on a committed H200 results file reproduces the committed check,
//! line for line after the first (which names the file where it was read on the GPU machine):
//! a change to the counts, the roofs or the rule that moves any prediction shows here.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn the_committed_h200_check_reproduces_from_its_results_file() {
    let results = "results/bench/nvidia-h200-custom-20261130T135724Z.json.gz";
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(root())
        .args(["model-check", results])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = String::from_utf8(out.stdout).unwrap();
    let want =
        std::fs::read_to_string(root().join("results/model-check/h200-5804b21.txt")).unwrap();
    let tail = |s: &str| s.lines().skip(1).map(String::from).collect::<Vec<_>>();
    assert_eq!(tail(&got), tail(&want));
    assert!(
        got.contains("all: 215 of 226 rows within 10% (95.1%)"),
        "{got}"
    );
}
