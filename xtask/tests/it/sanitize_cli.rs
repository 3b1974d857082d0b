//! `xtask sanitize` end to end with stand-ins for compute-sanitizer and lab (shell scripts):
//! the canaries run first, each under its own tool; a canary that comes back clean stops the
//! command with one line naming it before any kernel is checked.
//!
//! The stand-in's flagged reports are the H200's, one fixture file per tool
//! (`tests/fixtures/sanitize/`, whose README says where they come from); its clean closing
//! lines are the H200's too (results/sanitize/54d9599/sanitize.log.gz).

use crate::harness::{Sandbox, stderr, stdout, xtask};
use std::process::Command;

const FAKE_LAB: &str = r#"#!/bin/bash
case "$1" in
  canary)
    case "$2" in
      memcheck) k=canary_oob_write;; racecheck) k=canary_shared_race;;
      synccheck) k=canary_warp_sync_mask;; initcheck) k=canary_uninit_read;;
    esac
    echo "canary: $k ran; it is wrong on purpose, for compute-sanitizer to flag";;
  run)
    echo "bump [llvm]              grid 1×1  block 256×1  smem 0 B  ok (0 of 1 elements are not start + 1)";;
  bench) echo "lab bench (fake)";;
esac
"#;

/// `compute-sanitizer --tool T ... LAB ARGS...`: runs LAB and reports it clean, except a
/// canary whose tool is not `$FAKE_CLEAN_TOOL`: for that one it prints, instead of running LAB,
/// the H200's report `$FAKE_FIXTURES/canary-T.txt`, whose `error:` line (the lab's, when the
/// tool stopped the canary's kernel) goes to stderr, where the lab printed it.
const FAKE_SANITIZER: &str = r#"#!/bin/bash
tool=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) tool=$2; shift;;
    --error-exitcode|--print-limit|--leak-check) shift;;
    *) break;;
  esac
  shift
done
echo "$tool $*" >> "$FAKE_LOG"
if [ "$2" = "canary" ] && [ "$tool" != "$FAKE_CLEAN_TOOL" ]; then
  report="$FAKE_FIXTURES/canary-$tool.txt"
  [ -f "$report" ] || { echo "fake compute-sanitizer: no $report" >&2; exit 2; }
  sed '/^error: /d' "$report"
  sed -n '/^error: /p' "$report" >&2
  exit 86
fi
echo "========= COMPUTE-SANITIZER"
case "$tool" in
  memcheck)
    "$@"
    echo "========= LEAK SUMMARY: 0 bytes leaked in 0 allocations"
    echo "========= ERROR SUMMARY: 0 errors";;
  racecheck)
    "$@"
    echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)";;
  *)
    "$@"
    echo "========= ERROR SUMMARY: 0 errors";;
esac
"#;

/// A sandbox with the stand-in lab and compute-sanitizer.
fn sandbox(name: &str) -> Sandbox {
    Sandbox::new(
        &format!("sanitize-{name}"),
        &[("lab", FAKE_LAB), ("bin/compute-sanitizer", FAKE_SANITIZER)],
    )
}

impl Sandbox {
    fn sanitize_command(&self, args: &[&str]) -> Command {
        let mut c = xtask();
        c.arg("sanitize")
            .args(args)
            .arg("--lab")
            .arg(self.path("lab"))
            .arg("--output")
            .arg(self.out())
            .env("COMPUTE_SANITIZER", self.path("bin/compute-sanitizer"))
            .env("FAKE_LOG", self.path("calls.log"))
            .env(
                "FAKE_FIXTURES",
                concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sanitize"),
            )
            .env_remove("FAKE_CLEAN_TOOL");
        c
    }

    /// The sanitizer's calls: `tool lab-args`, one a line, in the order they ran.
    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.path("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }
}

const FLAGGED: [&str; 4] = [
    "canary memcheck: flagged (9 errors) — expected (canary_oob_write: Invalid __global__ write of size 4 bytes)",
    "canary racecheck: flagged (1 error) — expected (canary_shared_race: Error: Race reported between Write access)",
    "canary synccheck: flagged (17 errors) — expected (canary_warp_sync_mask: Barrier error detected. Invalid arguments.)",
    "canary initcheck: flagged (256 errors) — expected (canary_uninit_read: Uninitialized __global__ memory read of size 4 bytes)",
];

#[test]
fn canaries_only_runs_each_canary_under_its_own_tool() {
    let s = sandbox("only");
    let o = s.sanitize_command(&["--canaries-only"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().skip(1).map(String::from).collect();
    assert_eq!(lines, FLAGGED);
    let mut calls = s.calls();
    calls.sort();
    let lab = s.dir.join("lab").display().to_string();
    assert_eq!(
        calls,
        ["initcheck", "memcheck", "racecheck", "synccheck"]
            .map(|t| format!("{t} {lab} canary {t}"))
    );
    let log = std::fs::read_to_string(s.out().join("canaries.log")).unwrap();
    assert!(
        log.contains("===== memcheck · canary canary_oob_write\n"),
        "{log}"
    );
    assert!(log.contains("========= ERROR SUMMARY: 256 errors"), "{log}");
    assert!(!s.out().join("sanitize.txt").exists());
}

#[test]
fn a_clean_canary_stops_sanitize_with_one_line_naming_it() {
    let s = sandbox("clean");
    let o = s
        .sanitize_command(&[])
        .env("FAKE_CLEAN_TOOL", "racecheck")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let last = stderr(&o).lines().last().unwrap_or("").to_string();
    assert_eq!(
        last,
        format!(
            "error: canary racecheck came back clean: racecheck did not flag canary_shared_race (a shared-memory race), so its clean results would prove nothing (see {})",
            s.out().join("canaries.log").display()
        )
    );
    // Only the canaries ran: no kernel was checked, no summary written.
    assert_eq!(s.calls().len(), 4, "{:?}", s.calls());
    assert!(s.calls().iter().all(|c| c.contains(" canary ")));
    assert!(!s.out().join("sanitize.txt").exists());
}

#[test]
fn the_report_lists_the_canaries_before_the_kernels() {
    let s = sandbox("full");
    let o = s
        .sanitize_command(&["--tool", "memcheck,racecheck"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let calls = s.calls();
    // The two canaries first, then the kernels' runs under the same two tools.
    assert!(
        calls[..2].iter().all(|c| c.contains(" canary ")),
        "{calls:?}"
    );
    assert!(
        calls[2..].iter().all(|c| !c.contains(" canary ")),
        "{calls:?}"
    );
    assert!(calls.len() > 2, "{calls:?}");
    let summary = std::fs::read_to_string(s.out().join("sanitize.txt")).unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    assert!(
        lines[0].starts_with("# cargo xtask sanitize — "),
        "{summary}"
    );
    assert!(lines[1].starts_with("# cases: "), "{summary}");
    assert_eq!(lines[2..4], FLAGGED[..2], "{summary}");
    assert_eq!(
        lines[4].split_whitespace().collect::<Vec<_>>(),
        ["reduce_v1", "memcheck", "clean"]
    );
    assert_eq!(lines.last(), Some(&"0 finding(s)"), "{summary}");
    assert_eq!(stdout(&o), summary);
}
