//! The profiling subcommands end to end, with stand-ins for ncu, nsys and lab (small shell
//! scripts that answer like the real tools did on the H200: they hand back the real capture
//! in `tests/fixtures/`): what gets run, what gets written where, that the committed tables
//! come out again, and the one clear line each known failure ends with.

use crate::harness::{Sandbox, last_line, stdout, xtask};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const FAKE_LAB: &str = r#"#!/bin/bash
# lab run --plan: the plan the test wrote; lab run --from-plan P --manifest F: the H200
# manifest of the runner P's launches run on (each plan it is given logged beside ncu's).
plan=0; manifest=""; from=""; kernel=""
while [ $# -gt 0 ]; do
  case "$1" in
    --plan) plan=1;;
    --manifest) manifest=$2; shift;;
    --from-plan) from=$2; shift;;
    --kernel) kernel=$2; shift;;
  esac
  shift
done
if [ "$kernel" = "nope" ]; then
  echo "error: --kernel: 'nope' matches no kernel; valid names: all, reductions, transposes, reduce_v1" >&2
  exit 1
fi
if [ $plan = 1 ]; then cat "$FAKE_PLAN"; exit 0; fi
cat "$from" >> "$FAKE_LOG.plans"
backend=$(grep -o '"backend": "[a-z]*"' "$from" | head -1 | cut -d'"' -f4)
[ -n "$manifest" ] && cp "$FAKE_DIR/$FAKE_BASE-$backend.launches.json" "$manifest"
echo "lab run (fake): [$backend]"
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
p=""
for ((i = 0; i < ${#app[@]}; i++)); do
  [ "${app[$i]}" = "--from-plan" ] && p=${app[$((i + 1))]}
done
b=$(grep -o '"backend": "[a-z]*"' "$p" | head -1 | cut -d'"' -f4)
# The "report" is the raw page ncu exported from the real one; --import hands it back.
gzip -dc "$FAKE_DIR/$FAKE_BASE-$b.raw.csv.gz" > "$out.ncu-rep"
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
    cp "$FAKE_NSYS_DIR/nsys-launch-gap_$r.csv" "${out}_$r.csv"
  done
fi
"#;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A committed table, `results/<path>`: `profile/ncu-table.txt`, `nsys/c7486e2/nsys.txt`.
fn committed(path: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../results")
            .join(path),
    )
    .unwrap()
}

/// What `lab run --plan` printed on the H200, rebuilt from the plans kept in the manifests
/// (`<name>.launches.json`), kernel by kernel with the backends side by side.
fn plan_json(names: &[&str]) -> String {
    let mut launches: Vec<serde_json::Value> = Vec::new();
    let mut plan = serde_json::Value::Null;
    for name in names {
        let text =
            std::fs::read_to_string(fixtures().join(format!("ncu/{name}.launches.json"))).unwrap();
        let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        launches.extend(manifest["plan"]["launches"].as_array().unwrap().clone());
        plan = manifest["plan"].clone();
    }
    let mut kernels: Vec<String> = Vec::new();
    for l in &launches {
        let k = l["kernel"].as_str().unwrap().to_string();
        if !kernels.contains(&k) {
            kernels.push(k);
        }
    }
    launches.sort_by_key(|l| {
        kernels
            .iter()
            .position(|k| k == l["kernel"].as_str().unwrap())
    });
    plan["notes"] = serde_json::json!([]);
    plan["launches"] = serde_json::Value::Array(launches);
    plan.to_string()
}

fn reductions_plan() -> String {
    plan_json(&["ncu-table-llvm", "ncu-table-nvvm", "ncu-table-cub"])
}

/// The lines of a printed table from its header row (`kernel …`) on: what does not depend on
/// where and how ncu ran.
fn from_header(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("kernel "))
        .expect("a table header");
    lines[start..].join("\n")
}

/// A sandbox with the stand-in lab, ncu and nsys.
fn sandbox(name: &str) -> Sandbox {
    Sandbox::new(
        &format!("profile-{name}"),
        &[
            ("lab", FAKE_LAB),
            ("bin/ncu", FAKE_NCU),
            ("bin/nsys", FAKE_NSYS),
        ],
    )
}

impl Sandbox {
    /// Writes the plan `lab run --plan` answers with.
    fn plan(&self, json: &str) -> PathBuf {
        let p = self.path("plan.json");
        std::fs::write(&p, json).unwrap();
        p
    }

    /// `xtask <args>` with the stand-ins: NCU/NSYS point at them, PATH has no real profiler,
    /// the fake ncu hands back `<base>-<backend>.raw.csv`, the fake lab `plan`.
    fn profile_command(&self, base: &str, plan: &str, args: &[&str]) -> Command {
        let mut c = xtask();
        c.args(args)
            .env("NCU", self.path("bin/ncu"))
            .env("NSYS", self.path("bin/nsys"))
            .env("PATH", "/usr/bin:/bin")
            .env("FAKE_DIR", fixtures().join("ncu"))
            .env("FAKE_NSYS_DIR", fixtures().join("nsys"))
            .env("FAKE_PLAN", self.plan(plan))
            .env("FAKE_BASE", base)
            .env("FAKE_LOG", self.path("ncu-args.log"));
        c
    }

    fn profile_xtask(&self, base: &str, plan: &str, args: &[&str]) -> Output {
        self.profile_command(base, plan, args).output().unwrap()
    }

    fn lab(&self) -> String {
        self.arg("lab")
    }
}

#[test]
fn ncu_table_runs_one_ncu_per_backend_and_prints_the_committed_table() {
    let sb = sandbox("table");
    let out = sb.out();
    let o = sb.profile_xtask(
        "ncu-table",
        &reductions_plan(),
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
        text.contains("--clock-control none --cache-control all, --select nvtx"),
        "{text}"
    );
    // The H200's table, checks and diagnosis, as committed.
    assert_eq!(
        from_header(&text),
        from_header(&committed("profile/ncu-table.txt"))
    );
    for b in ["llvm", "nvvm", "cub"] {
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
    let leftovers = sb.leftovers();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    // Three ncu runs (llvm, nvvm, CUB), each selecting the NVTX range, the result word in the
    // fast slot (calibrated before the range).
    let log = std::fs::read_to_string(sb.dir.join("ncu-args.log")).unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    assert!(
        log.lines()
            .all(|l| l.contains("--nvtx --nvtx-include kernel-lab@profile/"))
    );
    assert!(
        log.lines()
            .all(|l| l.contains(" run --from-plan ") && l.contains(" --placement fast --manifest ")),
        "{log}"
    );
    // Each run was given its part of the one plan: one runner's launches, at its sizes.
    let plans = std::fs::read_to_string(sb.dir.join("ncu-args.log.plans")).unwrap();
    let plans: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&plans)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let launches = |p: &serde_json::Value| -> Vec<String> {
        p["launches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["label"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(plans.len(), 3);
    assert_eq!(launches(&plans[1]).len(), 7);
    assert!(
        launches(&plans[1]).iter().all(|l| l.ends_with(" [nvvm]")),
        "{:?}",
        launches(&plans[1])
    );
    assert_eq!(launches(&plans[2]), ["cub [cub]"]);
    assert!(plans.iter().all(|p| p["sizes"]["n"] == 16777216));
}

#[test]
fn launch_skip_runs_one_ncu_per_kernel() {
    let sb = sandbox("skip");
    let out = sb.out();
    let o = sb.profile_xtask(
        "ncu-transpose",
        &plan_json(&["ncu-transpose-llvm"]),
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
    assert_eq!(log.lines().count(), 4, "{log}");
    assert!(
        log.contains("--kernel-name transpose_naive_f32 --launch-skip 1 --launch-count 1"),
        "{log}"
    );
    // Calibrating the result word's slot would launch the kernel before the one skipped.
    assert!(
        log.lines()
            .all(|l| l.contains("--placement first --manifest")),
        "{log}"
    );
    assert!(
        out.join("ncu-transpose-transpose_padded-llvm.raw.csv")
            .is_file()
    );
    // The stand-in's report holds all four kernels: each job keeps only its own.
    let rows = stdout(&o)
        .lines()
        .filter(|l| {
            l.starts_with("ncu-transpose,transpose_tiled [llvm],transpose_tiled,llvm,sh_ld_req,")
        })
        .count();
    assert_eq!(rows, 1);
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("ncu also profiled transpose_tiled_f32, which the plan did not launch")
    );
    // A calibrated slot with launch-skip is refused before anything runs.
    let o = sb.profile_xtask(
        "ncu-transpose",
        &plan_json(&["ncu-transpose-llvm"]),
        &[
            "ncu-transpose",
            "--lab",
            &sb.lab(),
            "--select",
            "launch-skip",
            "--placement",
            "fast",
        ],
    );
    assert!(!o.status.success());
    let line = last_line(&o);
    assert!(
        line.starts_with(
            "error: --placement fast calibrates with launches that --select launch-skip would count"
        ),
        "{line}"
    );
    let log = std::fs::read_to_string(sb.dir.join("ncu-args.log")).unwrap();
    assert_eq!(log.lines().count(), 4, "{log}");
}

#[test]
fn csv_and_json_formats_come_from_the_same_report() {
    let sb = sandbox("formats");
    let csv = fixtures().join("ncu/ncu-transpose-llvm.raw.csv.gz");
    let o = sb.profile_xtask(
        "x",
        "{}",
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
            "ncu-transpose,transpose_tiled [llvm],transpose_tiled,llvm,sh_ld_conflicts,16442351,\"16,252,928 ±5%\",held,"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "ncu-transpose,transpose_padded [llvm],transpose_padded,llvm,sh_ld_conflicts,46824,"
        ),
        "{text}"
    );
    let o = sb.profile_xtask(
        "x",
        "{}",
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
    assert_eq!(json["rows"].as_array().unwrap().len(), 4);
    assert_eq!(json["rows"][1]["label"], "transpose_tiled [llvm]");
    assert_eq!(json["rows"][1]["values"]["sh_ld_req"], 524288.0);
    // Read back without --output: nothing written.
    assert!(!sb.out().exists());
}

#[test]
fn ncu_transpose_reads_back_the_committed_table() {
    let sb = sandbox("transposefrom");
    let files: Vec<String> = ["llvm", "nvvm"]
        .iter()
        .map(|b| {
            fixtures()
                .join(format!("ncu/ncu-transpose-{b}.raw.csv.gz"))
                .display()
                .to_string()
        })
        .collect();
    let mut args = vec!["ncu-transpose", "--from"];
    args.extend(files.iter().map(String::as_str));
    let o = sb.profile_xtask("x", "{}", &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    assert_eq!(
        from_header(&text),
        from_header(&committed("profile/ncu-transpose.txt"))
    );
    assert!(text.contains(
        "transpose_tiled [llvm]: memory-bound in L1/shared (L1 87.9 %); first fix: shared-memory bank conflicts"
    ));
    // The table's capture lacks some rules' metrics: the healthy verdict says which.
    assert!(text.contains(
        "transpose_v4 [llvm]: memory-bound in L2 (L2 87.4 %, DRAM 69.4 %): the L2 is the bottleneck, not DRAM; not judged: atomics"
    ));
}

#[test]
fn counter_permission_is_one_clear_line() {
    let sb = sandbox("perm");
    let o = sb
        .profile_command(
            "ncu-table",
            &reductions_plan(),
            &[
                "profile",
                "--kernel",
                "reduce_v3",
                "--lab",
                &sb.lab(),
                "--output",
                sb.out().to_str().unwrap(),
            ],
        )
        .env("FAKE_NCU_MODE", "perm")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let line = last_line(&o);
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
        let sb = sandbox(mode);
        let o = sb
            .profile_command(
                "ncu-table",
                &reductions_plan(),
                &[
                    "ncu-table",
                    "--lab",
                    &sb.lab(),
                    "--output",
                    sb.out().to_str().unwrap(),
                ],
            )
            .env("FAKE_NCU_MODE", mode)
            .output()
            .unwrap();
        assert!(!o.status.success());
        let line = last_line(&o);
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
    // A real ncu where xtask looks (a GPU machine) would be found: this test needs its absence.
    let installed = ["/opt/nvidia/nsight-compute", "/usr/local/cuda/bin/ncu"]
        .iter()
        .any(|p| Path::new(p).exists())
        || std::fs::read_dir("/usr/local/cuda").is_ok_and(|d| {
            d.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("nsight-compute")
            })
        });
    let sb = sandbox("missing");
    let o = sb
        .profile_command(
            "ncu-table",
            &reductions_plan(),
            &["ncu-table", "--lab", &sb.lab()],
        )
        .env_remove("NCU")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let line = last_line(&o);
    if installed {
        // Found, and run on this machine without the stand-in's answers: it fails otherwise.
        assert!(!line.contains("not found on PATH"), "{line}");
        return;
    }
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
    let sb = sandbox("name");
    let o = sb.profile_xtask(
        "x",
        &reductions_plan(),
        &["profile", "--kernel", "nope", "--lab", &sb.lab()],
    );
    assert!(!o.status.success());
    // The catalogue's rule, checked here before lab (or the GPU) is involved.
    let line = last_line(&o);
    assert!(
        line.starts_with("error: --kernel: 'nope' matches no kernel; valid: all, ceiling, reduce"),
        "{line}"
    );
    assert!(line.contains("reduce_v3"), "{line}");
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
}

#[test]
fn a_missing_lab_binary_says_how_to_build_it() {
    let sb = sandbox("nolab");
    let o = sb.profile_xtask("x", "{}", &["ncu-table", "--lab", "/nonexistent/lab"]);
    assert!(!o.status.success());
    let line = last_line(&o);
    assert!(
        line.contains("the lab binary is not at /nonexistent/lab"),
        "{line}"
    );
}

#[test]
fn nsys_traces_and_prints_the_committed_tables() {
    let sb = sandbox("nsys");
    let out = sb.out();
    let o = sb.profile_xtask(
        "x",
        "{}",
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
    // The launch-gap tables of results/nsys/c7486e2/nsys.txt, word for word; the verdicts
    // need the traces this stand-in does not hand back (profile_nsys.rs runs them end to end).
    let committed = committed("nsys/c7486e2/nsys.txt");
    let gap = &committed[..committed.find("\n== nsys-bench").unwrap()];
    let table = |t: &str, report: &str| {
        let start = t
            .find(&format!("\n{report}:\n"))
            .unwrap_or_else(|| panic!("no {report} in {t}"));
        let rest = &t[start + 1..];
        rest[..rest.find("\n\n").unwrap_or(rest.len())]
            .trim_end()
            .to_string()
    };
    for report in ["nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum"] {
        assert_eq!(table(&text, report), table(gap, report), "{report}");
    }
    assert!(text.contains("(no verdicts: "), "{text}");
    assert!(text.contains("cuLaunchKernel: 141,000 calls"), "{text}");
    for r in ["nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum"] {
        assert!(out.join(format!("nsys-launch-gap_{r}.csv")).is_file());
    }
    assert!(out.join("nsys-launch-gap.nsys-rep").is_file());
    assert!(out.join("nsys-launch-gap.nsys.log").is_file());
    assert!(out.join("nsys.txt").is_file());
}

#[test]
fn nsys_importer_without_libdw_is_one_clear_line() {
    let sb = sandbox("libdw");
    let o = sb
        .profile_command(
            "x",
            "{}",
            &[
                "nsys",
                "--what",
                "bench",
                "--lab",
                &sb.lab(),
                "--output",
                sb.out().to_str().unwrap(),
            ],
        )
        .env("FAKE_NSYS_MODE", "libdw")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let line = last_line(&o);
    assert!(
        line.contains("cannot load libdw.so.1") && line.contains("LD_LIBRARY_PATH"),
        "{line}"
    );
}

#[test]
fn nsys_reads_back_captured_tables() {
    let sb = sandbox("nsysfrom");
    let prefix = |p: &str| fixtures().join("nsys").join(p).display().to_string();
    let (gap, bench) = (prefix("nsys-launch-gap"), prefix("nsys-bench"));
    let o = sb.profile_xtask("x", "{}", &["nsys", "--from", &gap, &bench]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    assert!(
        text.contains("== nsys-launch-gap (read back from"),
        "{text}"
    );
    assert!(text.contains("kernel bump: 207,000 launches, 0.94 µs of GPU time each"));
    assert!(text.contains("cudaLaunchKernel: 94 calls"), "{text}");
    let o = sb.profile_xtask("x", "{}", &["nsys", "--from", &gap, "--format", "csv"]);
    let csv = stdout(&o);
    assert!(
        csv.contains("nsys-launch-gap,cuda_api_sum,51.3,546311600,141000,"),
        "{csv}"
    );
}

#[test]
fn profile_summarises_the_full_reports() {
    let sb = sandbox("profile");
    let csv = |b: &str| {
        fixtures()
            .join(format!("ncu/profile-reduce_v3-{b}.raw.csv.gz"))
            .display()
            .to_string()
    };
    let (llvm, nvvm) = (csv("llvm"), csv("nvvm"));
    let o = sb.profile_xtask("x", "{}", &["profile", "--from", &llvm, &nvvm]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    let committed = committed("profile/profile-reduce_v3.txt");
    for want in [
        "== reduce_v3 [llvm]  (reduce_v3_f32: grid (65536, 1, 1), block (256, 1, 1), 16 registers/thread)",
        "  Speed of Light   compute (SM) 46.4 %  memory 50.3 %  DRAM 12.3 %  L1 53.3 %  L2 15.1 %",
        "  Occupancy        achieved 87.7 % of theoretical 100.0 %; limiter: warps (8 blocks/SM)",
        "  Warp stalls      long_scoreboard 19.22, barrier 14.15, short_scoreboard 6.27, wait 2.09 (warps stalled per issued instruction)",
        "== reduce_v3 [nvvm]",
        "  Warp stalls      barrier 21.78, long_scoreboard 8.98, wait 2.82, branch_resolving 1.87 (warps stalled per issued instruction)",
        "  Verdict          atomic-bound (one address); first fix: same-address atomics set the pace",
        "    [regime] bound atomic-bound (one address)",
        "    [atomics] 47 % same-address atomics set the pace",
        "pile onto few slices: the busiest slice's atomic unit is 32.6 % busy",
        "    [stall] dominant stall: barrier",
        "  Negligible       under 10 % of the time left to them: latency (0 %), divergence (0 %)",
        "not a speed",
    ] {
        assert!(text.contains(want), "{want}: {text}");
        assert!(committed.contains(want), "{want} not committed");
    }
    // Word for word, from the first kernel on (the first line names the files read).
    let from_first = |t: &str| t[t.find("\n== ").unwrap()..].trim_end().to_string();
    assert_eq!(from_first(&text), from_first(&committed));
    // One atomic per block and no global store: ncu's store ratio reads 0, not a fault.
    assert!(!text.contains("[coalescing]"), "{text}");
    let o = sb.profile_xtask("x", "{}", &["profile", "--rules"]);
    assert!(stdout(&o).contains("[tail]"));
}
