//! `cargo xtask compare` end to end with a stand-in for lab (a shell script that answers
//! `lab bench --kernel K` with the H200's row of K from a committed results file): the rounds
//! run and stop, the files land in the output folder, no ncu is one line, and no GPU, like an
//! unknown kernel, ends the command with one clear line and a non-zero exit.

use crate::harness::{Sandbox, last_line, xtask};
use std::path::Path;
use std::process::Output;

const FAKE_LAB: &str = r#"#!/bin/bash
# lab bench --kernel K ... --out DIR: prints FAKE_DIR/K.json (as --format json does) and writes
# it into DIR. FAKE_MODE=nodriver fails as lab does without the CUDA driver (the loader, before
# lab runs); nodevice as it does with a driver but no GPU (after making the --out folder).
echo "$@" >> "$FAKE_LOG"
if [ "$FAKE_MODE" = "nodriver" ]; then
  echo "$0: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory" >&2
  exit 127
fi
kernel=""; out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernel=$2; shift;;
    --out) out=$2; shift;;
  esac
  shift
done
mkdir -p "$out"
if [ "$FAKE_MODE" = "nodevice" ]; then
  echo "error: no CUDA device found (the driver loaded but reports none): run on a machine with an NVIDIA GPU" >&2
  exit 1
fi
cp "$FAKE_DIR/$kernel.json" "$out/nvidia-h200-custom-fake.json"
echo "wrote $out/nvidia-h200-custom-fake.json" >&2
cat "$FAKE_DIR/$kernel.json"
"#;

/// A sandbox with the fake lab and, per kernel, the H200 default run cut to that kernel's
/// llvm f32 row (and the read ceiling, as a real run has).
fn sandbox(name: &str) -> Sandbox {
    let sb = Sandbox::new(&format!("compare-{name}"), &[("lab", FAKE_LAB)]);
    let results = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../results/bench/nvidia-h200-default-20261130T092735Z.json");
    let full: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results).unwrap()).unwrap();
    for kernel in ["reduce_v3", "reduce_v5"] {
        let mut r = full.clone();
        let rows: Vec<serde_json::Value> = full["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| {
                (x["kernel"] == kernel || x["kernel"] == "read_stream")
                    && x["backend"] == "llvm"
                    && x["dtype"] == "f32"
            })
            .cloned()
            .collect();
        r["rows"] = serde_json::Value::Array(rows);
        std::fs::write(sb.path(&format!("{kernel}.json")), r.to_string()).unwrap();
    }
    sb
}

impl Sandbox {
    fn compare_xtask(&self, mode: &str, args: &[&str]) -> Output {
        xtask()
            .arg("compare")
            .args(["--lab", &self.arg("lab")])
            .args(["--log", &self.arg("log.csv")])
            .args(args)
            .env("FAKE_DIR", &self.dir)
            .env("FAKE_LOG", self.path("lab-args.log"))
            .env("FAKE_MODE", mode)
            .env("NCU", self.path("no-ncu-here"))
            .output()
            .unwrap()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn live_rounds_run_until_the_verdict_repeats_and_land_in_the_folder() {
    let s = sandbox("live");
    let out = s.out().display().to_string();
    let o = s.compare_xtask(
        "",
        &[
            "reduce_v3",
            "reduce_v5",
            "--output",
            &out,
            "--",
            "--warmup",
            "5",
        ],
    );
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{stderr}");
    // Two rounds, B first in the second: the same answer twice settles it.
    let calls = std::fs::read_to_string(s.dir.join("lab-args.log")).unwrap();
    let kernels: Vec<&str> = calls
        .lines()
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(
        kernels,
        ["reduce_v3", "reduce_v5", "reduce_v5", "reduce_v3"],
        "{calls}"
    );
    let first = calls.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "bench --kernel reduce_v3 --backend llvm --dtype f32 --reps 20 --warmup 5 --format json --quiet --out {out}/round-01-a"
        )
    );
    assert!(
        s.out()
            .join("round-02-b/nvidia-h200-custom-fake.json")
            .is_file()
    );
    assert!(
        stdout.contains("# live: 2 round(s) of lab bench"),
        "{stdout}"
    );
    assert!(
        stdout.contains("every verdict held twice in a row"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| reduce_v3 → reduce_v5 [llvm] f32 2^28"))
        .expect("the pair's row");
    assert!(
        row.contains("FASTER") && row.contains("faster, faster"),
        "{row}"
    );
    // No ncu: one line among the notes, and the verdict still stands.
    let ncu: Vec<&str> = stdout.lines().filter(|l| l.contains("counters:")).collect();
    assert_eq!(ncu.len(), 1, "{stdout}");
    assert!(ncu[0].contains("is not an executable file"), "{}", ncu[0]);
    for f in ["compare.txt", "compare.json", "compare.csv"] {
        assert!(s.out().join(f).is_file(), "{f}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.out().join("compare.json")).unwrap())
            .unwrap();
    assert_eq!(json["source"]["kind"], "live");
    assert_eq!(json["source"]["rounds"], 2);
    assert_eq!(json["time"][0]["verdict"], "faster");
    assert!(
        stderr.contains("compare: round 1: reduce_v3 → reduce_v5 [llvm] f32 2^28 faster"),
        "{stderr}"
    );
}

#[test]
fn one_kernel_on_two_compilers_asks_for_both() {
    let s = sandbox("backends");
    let o = s.compare_xtask("", &["reduce_v4", "--no-ncu"]);
    assert!(!o.status.success());
    assert_eq!(
        last_line(&o),
        "error: compare reduce_v4 with one kernel compares two compilers: add --backend llvm,nvcc (or name two kernels)"
    );
    assert!(
        !s.dir.join("lab-args.log").exists(),
        "refused before running anything"
    );
}

#[test]
fn no_gpu_and_unknown_kernels_end_in_one_line() {
    let s = sandbox("refusals");
    let out = s.out().display().to_string();
    let o = s.compare_xtask("nodriver", &["reduce_v3", "reduce_v5", "--output", &out]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = text(&o.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].starts_with("error: no CUDA driver on this machine (lab cannot load libcuda.so.1): compare runs the kernels on a GPU"),
        "{}",
        errors[0]
    );
    assert!(text(&o.stdout).is_empty(), "nothing printed as if measured");
    assert!(
        !s.out().exists(),
        "nothing half-written, no empty folder left"
    );

    let o = s.compare_xtask("nodevice", &["reduce_v3", "reduce_v5", "--output", &out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        last_line(&o).starts_with("error: no CUDA device found: compare runs the kernels on a GPU; without one, compare two results files"),
        "{}",
        last_line(&o)
    );
    assert!(!s.out().exists(), "the empty round folder lab made is gone");

    let o = s.compare_xtask("", &["reduce_v99", "reduce_v5"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        last_line(&o).starts_with("error: 'reduce_v99' matches no kernel; valid:"),
        "{}",
        last_line(&o)
    );
    assert_eq!(text(&o.stderr).lines().count(), 1, "{}", text(&o.stderr));
}
