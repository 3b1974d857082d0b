//! `cargo xtask rows-table` on the committed table of record: its files give back the committed
//! table line for line, and `--schedule` takes another schedule's rows or refuses a name that
//! is none.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

const RECORD: &str = "results/rows/b11491a";
const ROWS: &str = "rows-nvidia-h200-custom-20261205T033335Z.json";

fn rows_table(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(root())
        .arg("rows-table")
        .arg(format!("{RECORD}/{ROWS}"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_committed_table_reproduces_from_its_files() {
    let out = rows_table(&["--peers", &format!("{RECORD}/peers.json")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = std::fs::read_to_string(root().join(RECORD).join("rows-table.txt")).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
}

#[test]
fn another_schedules_rows_are_taken_where_asked() {
    let out = rows_table(&["--schedule", "wide"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Rust: the slower of the two compilers, the wide schedule"),
        "{text}"
    );
    // The wide block holds rows of up to 32768 f32 (65536 bf16): no row past them.
    assert!(text.contains("4096 x 32768"), "{text}");
    assert!(!text.contains("131072"), "{text}");
    let out = rows_table(&["--schedule", "nope"]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("not a schedule: use one of narrow, warp, block, wide, cluster, streamed"),
        "{err}"
    );
}
