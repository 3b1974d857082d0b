//! The profiling subcommands end to end, with stand-ins for ncu, nsys and lab (small shell
//! scripts that answer like the real tools, from the fixtures): what gets run, what gets
//! written where, and the one clear line each known failure ends with.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const FAKE_LAB: &str = r#"#!/bin/bash
# lab run --plan: the canned plan; lab run ... --manifest F: the canned manifest of its backend.
plan=0; manifest=""; backend=""; kernel=""
while [ $# -gt 0 ]; do
  case "$1" in
    --plan) plan=1;;
    --manifest) manifest=$2; shift;;
    --backend) backend=$2; shift;;
    --kernel) kernel=$2; shift;;
  esac
  shift
done
if [ "$kernel" = "nope" ]; then
  echo "error: --kernel: 'nope' matches no kernel; valid names: all, reductions, transposes, reduce_v1" >&2
  exit 1
fi
if [ $plan = 1 ]; then cat "$FAKE_PLAN"; exit 0; fi
[ -n "$manifest" ] && cp "$FAKE_DIR/synthetic-$FAKE_BASE-$backend.launches.json" "$manifest"
echo "lab run (fake): $kernel [$backend]"
"#;

const FAKE_NCU: &str = r#"#!/bin/bash
if [ "$1" = "--version" ]; then
  echo "NVIDIA (R) Nsight Compute Command Line Profiler"; echo "Version 2025.3.1.0 (fake)"; exit 0
fi
if [ "$1" = "--import" ]; then cat "$2"; exit 0; fi
case "$FAKE_NCU_MODE" in
  perm) echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0."; exit 1;;
  none) echo "==WARNING== No kernels were profiled."; exit 0;;
  noreport) exit 0;;
esac
echo "$@" >> "$FAKE_LOG"
out=""; app=()
while [ $# -gt 0 ]; do
  case "$1" in
    --export) out=$2; shift;;
    --force-overwrite) shift; app=("$@"); break;;
  esac
  shift
done
"${app[@]}"
b=""
for ((i = 0; i < ${#app[@]}; i++)); do [ "${app[$i]}" = "--backend" ] && b=${app[$((i + 1))]}; done
cp "$FAKE_DIR/synthetic-$FAKE_BASE-$b.raw.csv" "$out.ncu-rep"
echo "==PROF== Report: $out.ncu-rep"
"#;

const FAKE_NSYS: &str = r#"#!/bin/bash
cmd=$1; shift
out=""
if [ "$cmd" = "profile" ]; then
  if [ "$FAKE_NSYS_MODE" = "libdw" ]; then
    echo "QdstrmImporter: error while loading shared libraries: libdw.so.1: cannot open shared object file: No such file or directory"
    exit 1
  fi
  while [ $# -gt 0 ]; do
    case "$1" in --output) out=$2; shift;; --*) ;; *) break;; esac
    shift
  done
  "$@"
  touch "$out.nsys-rep"
  exit 0
fi
if [ "$cmd" = "stats" ]; then
  while [ $# -gt 0 ]; do case "$1" in --output) out=$2; shift;; esac; shift; done
  for r in nvtx_sum cuda_api_sum cuda_gpu_kern_sum; do
    cp "$FAKE_NSYS_DIR/synthetic-nsys-launch-gap_$r.csv" "${out}_$r.csv"
  done
fi
"#;

struct Sandbox {
    dir: PathBuf,
}

impl Sandbox {
    fn new(name: &str) -> Sandbox {
        let dir = std::env::temp_dir().join(format!("xtask-profile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        for (file, body) in [
            ("lab", FAKE_LAB),
            ("bin/ncu", FAKE_NCU),
            ("bin/nsys", FAKE_NSYS),
        ] {
            let p = dir.join(file);
            std::fs::write(&p, body).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Sandbox { dir }
    }

    fn out(&self) -> PathBuf {
        self.dir.join("out")
    }

    /// `xtask <args>` with the stand-ins: NCU/NSYS point at them, PATH has no real profiler.
    fn xtask(&self, base: &str, plan: &str, args: &[&str]) -> Output {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(args)
            .env("NCU", self.dir.join("bin/ncu"))
            .env("NSYS", self.dir.join("bin/nsys"))
            .env("PATH", "/usr/bin:/bin")
            .env("FAKE_DIR", fixtures.join("ncu"))
            .env("FAKE_NSYS_DIR", fixtures.join("nsys"))
            .env("FAKE_PLAN", fixtures.join("ncu").join(plan))
            .env("FAKE_BASE", base)
            .env("FAKE_LOG", self.dir.join("ncu-args.log"))
            .env_remove("CARGO")
            .output()
            .unwrap()
    }

    fn lab(&self) -> String {
        self.dir.join("lab").display().to_string()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn last_stderr_line(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .last()
        .unwrap_or("")
        .to_string()
}

#[test]
fn ncu_table_runs_one_ncu_per_backend_and_writes_every_file() {
    let sb = Sandbox::new("table");
    let out = sb.out();
    let o = sb.xtask(
        "ncu-table",
        "synthetic-plan-reductions.json",
        &[
            "ncu-table",
            "--lab",
            &sb.lab(),
            "--output",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    assert!(
        text.contains("reduce_v1 [llvm]") && text.contains("reduce_v1 [nvvm]"),
        "{text}"
    );
    assert!(text.contains("104.0 (88)!"), "{text}");
    assert!(
        text.contains("ncu") && text.contains("--clock-control none --cache-control all"),
        "{text}"
    );
    for b in ["llvm", "nvvm"] {
        for ext in ["ncu-rep", "raw.csv", "launches.json", "ncu.log"] {
            assert!(
                out.join(format!("ncu-table-{b}.{ext}")).is_file(),
                "missing {b}.{ext}"
            );
        }
    }
    for ext in ["txt", "json", "csv"] {
        assert!(out.join(format!("ncu-table.{ext}")).is_file());
    }
    let leftovers: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    // Two ncu runs, each selecting the NVTX range and naming its backend.
    let log = std::fs::read_to_string(sb.dir.join("ncu-args.log")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    assert!(
        log.lines()
            .all(|l| l.contains("--nvtx --nvtx-include kernel-lab@profile/"))
    );
    assert!(
        log.contains("--backend nvvm --size 16777216 --manifest"),
        "{log}"
    );
}

#[test]
fn launch_skip_runs_one_ncu_per_kernel() {
    let sb = Sandbox::new("skip");
    let out = sb.out();
    let o = sb.xtask(
        "ncu-transpose",
        "synthetic-plan-transposes.json",
        &[
            "ncu-transpose",
            "--lab",
            &sb.lab(),
            "--output",
            out.to_str().unwrap(),
            "--select",
            "launch-skip",
            "--format",
            "csv",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let log = std::fs::read_to_string(sb.dir.join("ncu-args.log")).unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    assert!(
        log.contains("--kernel-name transpose_naive_f32 --launch-skip 1 --launch-count 1"),
        "{log}"
    );
    assert!(
        out.join("ncu-transpose-transpose_padded-llvm.raw.csv")
            .is_file()
    );
    // The stand-in's report holds all three kernels: each job keeps only its own.
    let rows = stdout(&o)
        .lines()
        .filter(|l| {
            l.starts_with("ncu-transpose,transpose_tiled [llvm],transpose_tiled,llvm,sh_ld_req,")
        })
        .count();
    assert_eq!(rows, 1);
}

#[test]
fn csv_and_json_formats_come_from_the_same_report() {
    let sb = Sandbox::new("formats");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ncu");
    let csv = fixtures.join("synthetic-ncu-transpose-llvm.raw.csv");
    let o = sb.xtask(
        "x",
        "x",
        &[
            "ncu-transpose",
            "--from",
            csv.to_str().unwrap(),
            "--format",
            "csv",
        ],
    );
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(
        text.starts_with("table,label,kernel,backend,column,value,expected,status"),
        "{text}"
    );
    assert!(
        text.contains(
            "ncu-transpose,transpose_tiled [llvm],transpose_tiled,llvm,sh_ld_conflicts,16252928,"
        ),
        "{text}"
    );
    let o = sb.xtask(
        "x",
        "x",
        &[
            "ncu-transpose",
            "--from",
            csv.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["kind"], "ncu-transpose");
    // Read back without --output: nothing written.
    assert!(!sb.out().exists());
}

#[test]
fn counter_permission_is_one_clear_line() {
    let sb = Sandbox::new("perm");
    let o = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args([
            "profile",
            "--kernel",
            "reduce_v3",
            "--lab",
            &sb.lab(),
            "--output",
        ])
        .arg(sb.out())
        .env("NCU", sb.dir.join("bin/ncu"))
        .env("PATH", "/usr/bin:/bin")
        .env(
            "FAKE_PLAN",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/ncu/synthetic-plan-reductions.json"),
        )
        .env("FAKE_NCU_MODE", "perm")
        .env_remove("CARGO")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let line = last_stderr_line(&o);
    assert!(
        line.starts_with(
            "error: ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM)"
        ),
        "{line}"
    );
    assert!(
        line.contains("NVreg_RestrictProfilingToAdminUsers=0"),
        "{line}"
    );
}

#[test]
fn nothing_profiled_and_no_report_are_clear_errors() {
    for (mode, want) in [
        ("none", "ncu profiled no kernel"),
        ("noreport", "ncu wrote no report"),
    ] {
        let sb = Sandbox::new(mode);
        let o = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(["ncu-table", "--lab", &sb.lab(), "--output"])
            .arg(sb.out())
            .env("NCU", sb.dir.join("bin/ncu"))
            .env(
                "FAKE_PLAN",
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/ncu/synthetic-plan-reductions.json"),
            )
            .env("FAKE_NCU_MODE", mode)
            .env_remove("CARGO")
            .output()
            .unwrap();
        assert!(!o.status.success());
        let line = last_stderr_line(&o);
        assert!(
            line.starts_with(&format!("error: {want}")),
            "{mode}: {line}"
        );
        if mode == "none" {
            assert!(line.contains("retry with --select launch-skip"), "{line}");
        }
    }
}

#[test]
fn missing_profiler_is_one_clear_line() {
    let sb = Sandbox::new("missing");
    let o = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["ncu-table", "--lab", &sb.lab()])
        .env_remove("NCU")
        .env("PATH", "/usr/bin:/bin")
        .env(
            "FAKE_PLAN",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/ncu/synthetic-plan-reductions.json"),
        )
        .env_remove("CARGO")
        .output()
        .unwrap();
    if Path::new("/opt/nvidia/nsight-compute").exists() {
        return; // a real ncu is installed where xtask looks: nothing to test here
    }
    assert!(!o.status.success());
    let line = last_stderr_line(&o);
    assert!(
        line.starts_with(
            "error: ncu (Nsight Compute) not found on PATH nor in /opt/nvidia/nsight-compute/*/ncu"
        ),
        "{line}"
    );
    assert!(line.contains("set NCU=/path/to/ncu"), "{line}");
}

#[test]
fn a_wrong_kernel_name_lists_the_valid_ones() {
    let sb = Sandbox::new("name");
    let o = sb.xtask(
        "x",
        "synthetic-plan-reductions.json",
        &["profile", "--kernel", "nope", "--lab", &sb.lab()],
    );
    assert!(!o.status.success());
    let line = last_stderr_line(&o);
    assert!(
        line.contains("'nope' matches no kernel; valid names: all, reductions"),
        "{line}"
    );
}

#[test]
fn a_missing_lab_binary_says_how_to_build_it() {
    let sb = Sandbox::new("nolab");
    let o = sb.xtask("x", "x", &["ncu-table", "--lab", "/nonexistent/lab"]);
    assert!(!o.status.success());
    let line = last_stderr_line(&o);
    assert!(
        line.contains("the lab binary is not at /nonexistent/lab"),
        "{line}"
    );
}

#[test]
fn nsys_traces_and_prints_the_three_tables() {
    let sb = Sandbox::new("nsys");
    let out = sb.out();
    let o = sb.xtask(
        "x",
        "x",
        &[
            "nsys",
            "--what",
            "launch-gap",
            "--lab",
            &sb.lab(),
            "--output",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    for r in [
        "nvtx_sum:",
        "cuda_api_sum:",
        "cuda_gpu_kern_sum:",
        "cuLaunchKernel: 2,000 calls",
    ] {
        assert!(text.contains(r), "{r}: {text}");
    }
    for r in ["nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum"] {
        assert!(out.join(format!("nsys-launch-gap_{r}.csv")).is_file());
    }
    assert!(out.join("nsys-launch-gap.nsys-rep").is_file());
    assert!(out.join("nsys.txt").is_file());
}

#[test]
fn nsys_importer_without_libdw_is_one_clear_line() {
    let sb = Sandbox::new("libdw");
    let o = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["nsys", "--what", "bench", "--lab", &sb.lab(), "--output"])
        .arg(sb.out())
        .env("NSYS", sb.dir.join("bin/nsys"))
        .env("FAKE_NSYS_MODE", "libdw")
        .env_remove("CARGO")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let line = last_stderr_line(&o);
    assert!(
        line.contains("cannot load libdw.so.1") && line.contains("LD_LIBRARY_PATH"),
        "{line}"
    );
}

#[test]
fn nsys_reads_back_captured_tables() {
    let sb = Sandbox::new("nsysfrom");
    let prefix =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nsys/synthetic-nsys-launch-gap");
    let o = sb.xtask("x", "x", &["nsys", "--from", prefix.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("kernel bump: 3,000 launches"));
}

#[test]
fn profile_summarises_a_full_report() {
    let sb = Sandbox::new("profile");
    let csv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ncu/synthetic-profile-reduce_v3-llvm.raw.csv");
    let o = sb.xtask("x", "x", &["profile", "--from", csv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    for want in [
        "== reduce_v3 [llvm]",
        "Speed of Light   compute (SM) 50.2 %  memory 55.1 %",
        "Occupancy        achieved 92.2 % of theoretical 100.0 %; limiter: warps",
        "[regime] latency-bound",
        "[stall] dominant stall: barrier",
        "not a speed",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    let o = sb.xtask("x", "x", &["profile", "--rules"]);
    assert!(stdout(&o).contains("[tail]"));
}
