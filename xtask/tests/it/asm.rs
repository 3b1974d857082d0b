//! `cargo xtask asm`, run as a user would: the compiled xtask binary on the real PTX from
//! `cargo xtask ptx` (never skipped: a missing PTX or missing CUDA tools fail the test with
//! the command that fixes it).
//!
//! - `check_*`: `--check` (the PTX and SASS checks that keep the chapter's claims true) on
//!   each backend;
//! - `stats_*`, `sass_*`, `diff_*`, `live_*`: the subcommand's outputs;
//! - `source_*`: line info, on the real PTX of each backend and on small PTX files written
//!   here; `cli_*`: argument errors.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs `xtask asm <args>` from the repository root.
fn asm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(root())
        .arg("asm")
        .args(args)
        .output()
        .expect("run the xtask binary")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs and requires success; on failure the message carries the tool's own error line
/// (e.g. "run cargo xtask ptx --backend nvvm", "run scripts/setup.sh").
fn asm_ok(args: &[&str]) -> String {
    let out = asm(args);
    assert!(
        out.status.success(),
        "xtask asm {} failed:\n{}\n{}",
        args.join(" "),
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Runs and requires failure; returns the tool's stderr (its one error line).
fn asm_err(args: &[&str]) -> String {
    let out = asm(args);
    assert!(
        !out.status.success(),
        "xtask asm {} succeeded:\n{}",
        args.join(" "),
        text(&out.stdout)
    );
    text(&out.stderr)
}

fn check(backend: &str) {
    let out = asm_ok(&["--check", "--backend", backend]);
    assert!(out.contains("0 failed"), "{out}");
    assert!(!out.contains("FAIL"), "{out}");
}

#[test]
fn check_llvm() {
    check("llvm");
}

#[test]
fn check_nvvm() {
    check("nvvm");
}

#[test]
fn check_nvcc() {
    check("nvcc");
}

/// The generic-shared-access check runs on every backend and passes on today's kernels.
#[test]
fn check_finds_no_generic_shared_access() {
    let out = asm_ok(&["--check", "--format", "json"]);
    let v: Value = serde_json::from_str(&out).expect("check JSON");
    let checks: Vec<&Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "no generic shared access")
        .collect();
    assert_eq!(checks.len(), 3, "one per backend: {checks:?}");
    for c in checks {
        assert_eq!(c["ok"], true, "{c}");
        // The reductions and the tiled transposes at least.
        let users: u64 = c["detail"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(users >= 14, "{c}");
    }
}

/// The fault catalogue's faults are in the SASS of both Rust compilers (`faults planted`):
/// the check runs on each and passes, and the listing shows the planted instructions.
#[test]
fn check_finds_every_planted_fault() {
    let out = asm_ok(&["--check", "--format", "json", "--backend", "llvm,nvvm"]);
    let v: Value = serde_json::from_str(&out).expect("check JSON");
    let checks: Vec<&Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "faults planted")
        .collect();
    assert_eq!(checks.len(), 2, "one per Rust backend: {checks:?}");
    for c in checks {
        assert_eq!(c["ok"], true, "{c}");
        let d = c["detail"].as_str().unwrap();
        for want in [
            "tensor_cores_fixed: HMMA",
            "spills_fault: LDL",
            "sfu_fault: MUFU.SIN",
        ] {
            assert!(d.contains(want), "{want} not in {d}");
        }
    }
    for b in ["llvm", "nvvm"] {
        let sass = asm_ok(&["--kernel", "spills_fault", "--sass", "--backend", b]);
        assert!(sass.contains("STL") && sass.contains("LDL"), "{b}: {sass}");
        let sass = asm_ok(&["--kernel", "async_stages_fixed", "--sass", "--backend", b]);
        assert!(
            sass.contains("LDGSTS") && sass.contains("DEPBAR"),
            "{b}: {sass}"
        );
    }
}

/// Rows of `--kernel all --stats --format json` for one backend, by kernel name.
fn stats(backend: &str) -> Vec<Value> {
    let out = asm_ok(&[
        "--kernel",
        "all",
        "--stats",
        "--format",
        "json",
        "--backend",
        backend,
    ]);
    let v: Value = serde_json::from_str(&out).expect("stats JSON");
    assert_eq!(v["schema_version"], 1);
    v["kernels"].as_array().expect("kernels array").clone()
}

fn row<'a>(rows: &'a [Value], kernel: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["kernel"] == kernel)
        .unwrap_or_else(|| panic!("no row for {kernel}"))
}

#[test]
fn stats_json_has_every_kernel_with_counts_and_resources() {
    let rows = stats("llvm");
    for k in [
        "reduce_v1_f32",
        "reduce_v6_i32",
        "transpose_naive_f32",
        "transpose_tiled_f32",
        "transpose_padded_f32",
        "bump",
    ] {
        let r = row(&rows, k);
        assert_eq!(r["backend"], "llvm");
        assert!(r["sass"]["total"].as_u64().unwrap() > 0, "{k}: {r}");
        assert!(r["ptx"]["total"].as_u64().unwrap() > 0, "{k}: {r}");
        assert!(
            r["resources"]["registers"].as_u64().unwrap() > 0,
            "{k}: {r}"
        );
    }
    // The chapter's v1: fully unrolled, predicated shared loads, a barrier per level + load.
    let v1 = row(&rows, "reduce_v1_f32");
    assert_eq!(v1["unrolled"], true);
    assert_eq!(v1["sass"]["barriers"], 9);
    assert!(v1["sass"]["shared_ld_predicated"].as_u64().unwrap() >= 8);
    // v6: the 16-byte load is in the SASS.
    assert!(
        row(&rows, "reduce_v6_f32")["sass"]["global_ld"]["128"]
            .as_u64()
            .unwrap()
            >= 1
    );
}

/// Every SASS and PTX instruction is in exactly one class: the mix adds up to the total.
#[test]
fn stats_mix_counts_every_instruction_once() {
    for backend in ["llvm", "nvvm", "nvcc"] {
        for r in stats(backend) {
            for side in ["sass", "ptx"] {
                let c = &r[side];
                let n = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("{k} in {c}"));
                let widths = |k: &str| -> u64 {
                    c[k].as_object()
                        .unwrap()
                        .values()
                        .map(|v| v.as_u64().unwrap())
                        .sum()
                };
                let sum: u64 = [
                    "shared_ld",
                    "shared_st",
                    "local_ld",
                    "local_st",
                    "generic_ld",
                    "generic_st",
                    "barriers",
                    "shuffles",
                    "atomics",
                    "branches",
                    "int",
                    "float",
                    "tensor",
                    "convert",
                    "moves",
                    "constants",
                    "predicate_logic",
                    "control",
                    "warp",
                    "fences",
                    "other",
                ]
                .iter()
                .map(|k| n(k))
                .sum::<u64>()
                    + widths("global_ld")
                    + widths("global_st");
                assert_eq!(sum, n("total"), "{backend} {} {side}: {c}", r["kernel"]);
            }
            // Only SASS opcodes nobody classified land in `other`.
            assert_eq!(r["sass"]["other"], 0, "{backend}: {r}");
        }
    }
}

#[test]
fn stats_peak_live_registers_fit_in_the_allocation() {
    for r in stats("llvm") {
        let live = r["live_peak"]["gpr"].as_u64().unwrap();
        let regs = r["resources"]["registers"].as_u64().unwrap();
        assert!(
            live > 0 && live <= regs,
            "{}: {live} live, {regs} allocated",
            r["kernel"]
        );
    }
}

#[test]
fn stats_text_is_one_table_with_a_header() {
    let out = asm_ok(&["--kernel", "all", "--stats", "--backend", "llvm"]);
    assert!(out.starts_with("# cargo xtask asm"), "{out}");
    assert!(out.contains("# date ") && out.contains("commit "), "{out}");
    assert!(out.contains("ptxas -arch=sm_90"), "{out}");
    assert!(out.contains("| reduce_v1_f32 [llvm]"), "{out}");
    assert!(out.contains("| transpose_padded_f32 [llvm]"), "{out}");
    assert!(out.contains("| regs | live |"), "{out}");
    assert!(
        out.contains("SASS, the rest of the instruction mix"),
        "{out}"
    );
    // Column widths follow the widest count; the names and their order are the contract.
    let folded = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        folded.contains("| int | fp | tensor | cvt | mov | const/SR | pred | ctrl |"),
        "{out}"
    );
}

#[test]
fn stats_csv_has_one_row_per_kernel_and_backend() {
    let out = asm_ok(&[
        "--kernel",
        "reduce_v1",
        "--stats",
        "--format",
        "csv",
        "--backend",
        "llvm",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("kernel,backend,sass_insts,"), "{out}");
    assert_eq!(lines.len(), 3, "header + f32 + i32: {out}");
    assert!(lines[1].starts_with("reduce_v1_f32,llvm,"), "{out}");
}

#[test]
fn sass_shows_the_chapters_v1_pattern() {
    let out = asm_ok(&["--kernel", "reduce_v1_f32", "--sass", "--backend", "llvm"]);
    // `tid % 2` as a mask into a predicate, then predicated shared loads.
    let mask = regex::Regex::new(r"LOP3\.LUT P\d, RZ, R\d+(\.reuse)?, 0x1, RZ, 0xc0, !PT").unwrap();
    assert!(mask.is_match(&out), "{out}");
    assert!(
        regex::Regex::new(r"@!P\d LDS R\d+, \[R\d+\+0x4\]")
            .unwrap()
            .is_match(&out),
        "{out}"
    );
    assert!(out.contains("BAR.SYNC.DEFER_BLOCKING 0x0"), "{out}");
    assert!(!out.contains(" NOP"), "padding is dropped: {out}");
}

#[test]
fn diff_two_kernels_lists_differing_counts_and_a_unified_diff() {
    let out = asm_ok(&[
        "--diff",
        "reduce_v4_f32",
        "reduce_v5_f32",
        "--sass",
        "--backend",
        "llvm",
    ]);
    assert!(
        out.contains("## reduce_v4_f32 [llvm] vs reduce_v5_f32 [llvm]"),
        "{out}"
    );
    // v5 is v4 plus shuffles: fewer barriers, the same global loads (not listed: equal).
    let barriers = regex::Regex::new(r"\| SASS barriers +\| +9 \| +3 \|").unwrap();
    assert!(barriers.is_match(&out), "{out}");
    assert!(!out.contains("| SASS global loads"), "{out}");
    assert!(
        out.contains("--- reduce_v4_f32 [llvm]") && out.contains("+++ reduce_v5_f32 [llvm]"),
        "{out}"
    );
    assert!(out.contains("+SHFL.DOWN"), "{out}");
    // The mix is compared too: v5's shorter tree needs fewer address computations.
    assert!(out.contains("| SASS int arithmetic"), "{out}");
}

#[test]
fn diff_one_kernel_across_backends() {
    let out = asm_ok(&[
        "--diff",
        "reduce_v6_f32",
        "--backend",
        "llvm,nvvm",
        "--stats",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&out).expect("diff JSON");
    assert_eq!(v["schema_version"], 1);
    let d = &v["diffs"][0];
    assert_eq!(d["a"]["backend"], "llvm");
    assert_eq!(d["b"]["backend"], "nvvm");
    assert_eq!(d["a"]["kernel"], "reduce_v6_f32");
    assert!(d.get("listing_diff").is_none(), "--stats: counts only");
}

/// `--live`: one number per instruction, and the peak is the largest of them.
#[test]
fn live_lists_registers_per_instruction_and_the_peak() {
    let out = asm_ok(&[
        "--kernel",
        "reduce_v6_f32",
        "--live",
        "--backend",
        "llvm",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&out).expect("listing JSON");
    let l = &v["listings"][0];
    assert_eq!(l["kind"], "sass");
    let row = regex::Regex::new(r"^\s+/\*([0-9a-f]{4})\*/ +(\d+) ").unwrap();
    let insts: Vec<(String, u64)> = l["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| {
            let c = row.captures(s.as_str()?)?;
            Some((c[1].to_string(), c[2].parse().unwrap()))
        })
        .collect();
    let live = &l["live"];
    let n = live["instructions"].as_u64().unwrap();
    assert_eq!(insts.len() as u64, n, "a count on every instruction");
    let peak = live["peak"]["gpr"].as_u64().unwrap();
    assert_eq!(insts.iter().map(|i| i.1).max(), Some(peak));
    let at = format!("{:04x}", live["peak"]["addr"].as_u64().unwrap());
    assert_eq!(insts.iter().find(|i| i.1 == peak).unwrap().0, at);
    assert!(peak <= live["registers"].as_u64().unwrap(), "{live}");
    let mix: u64 = live["mix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[1].as_u64().unwrap())
        .sum();
    assert_eq!(mix, n, "{live}");
    // v6's 16-byte load is in the mix by its width.
    assert!(
        live["mix"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e[0] == "LDG.128"),
        "{live}"
    );
}

#[test]
fn live_text_ends_with_the_peak_and_mix_on_every_backend() {
    let out = asm_ok(&[
        "--kernel",
        "reduce_v6_f32",
        "--live",
        "--backend",
        "llvm,nvvm,nvcc",
    ]);
    for b in ["llvm", "nvvm", "nvcc"] {
        assert!(
            out.contains(&format!("// ===== reduce_v6_f32 [{b}] SASS")),
            "{out}"
        );
    }
    let peak = regex::Regex::new(
        r"// peak: \d+ registers live at /\*[0-9a-f]{4}\*/ \S+.* \(ptxas allocates \d+\)",
    )
    .unwrap();
    assert_eq!(peak.find_iter(&out).count(), 3, "{out}");
    assert_eq!(out.matches("// mix of ").count(), 3, "{out}");
}

/// The line of `needle` in a source file (1-based), for expectations that follow the source.
fn line_of(path: &str, needle: &str, after: &str) -> usize {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let start = text
        .lines()
        .position(|l| l.contains(after))
        .unwrap_or_else(|| panic!("{after} not in {path}"));
    start
        + 1
        + text
            .lines()
            .skip(start)
            .position(|l| l.trim() == needle)
            .unwrap_or_else(|| panic!("{needle} not after {after} in {path}"))
}

/// The barrier comes from `core::arch` through the device layer: it is charged to the kernel's
/// `sync_threads();` in v3's tree, with the inner lines beneath.
#[test]
fn source_charges_core_to_the_kernel_line_that_inlined_it() {
    let out = asm_ok(&[
        "--kernel",
        "reduce_v3_f32",
        "--sass",
        "--source",
        "--backend",
        "llvm",
    ]);
    let tree = line_of("gpu-kernels/src/reduce.rs", "sync_threads();", "fn tree_v3");
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| {
            l.contains(&format!(
                "//> gpu-kernels/src/reduce.rs:{tree}  sync_threads();"
            ))
        })
        .unwrap_or_else(|| panic!("no reduce.rs:{tree}:\n{out}"));
    assert!(
        lines[at + 1].contains("↳ gpu-kernels/src/device/llvm.rs:"),
        "{}",
        lines[at + 1]
    );
    assert!(
        lines[at + 2].contains("↳ core_arch/src/nvptx/mod.rs:"),
        "{}",
        lines[at + 2]
    );
    assert!(lines[at + 3].contains("BAR.SYNC"), "{}", lines[at + 3]);
    no_library_lines_charged_and_every_line_exists(&out);
}

/// No instruction is charged to library code (core, the CUDA headers) when a kernel line
/// inlined it, and every line named exists in its file (a frame given the wrong file, as
/// nvdisasm does at times, would not).
fn no_library_lines_charged_and_every_line_exists(out: &str) {
    let frame = regex::Regex::new(r"(//>|↳) (\S+):(\d+)  (.*)$").unwrap();
    let mut n = 0;
    for l in out.lines() {
        let Some(c) = frame.captures(l) else { continue };
        n += 1;
        if &c[1] == "//>" {
            assert!(
                !c[2].starts_with("core") && !c[2].starts_with("include/"),
                "{l}"
            );
        }
        assert!(!c[4].trim().is_empty(), "no such line: {l}");
    }
    assert!(n > 0, "{out}");
}

/// The first command a new user tries: the llvm listing with Rust lines, the nvvm listing
/// without them and one line saying why, and nothing stops.
#[test]
fn source_shows_what_each_backend_has() {
    let out = asm(&["--kernel", "reduce_v3", "--sass", "--source"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("// ===== reduce_v3_f32 [llvm] SASS\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("// ===== reduce_v3_f32 [nvvm] SASS (no line info)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("//> gpu-kernels/src/reduce.rs:"),
        "{stdout}"
    );
    let stderr = text(&out.stderr);
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("no line info"))
        .collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(
        notes[0].contains("nvvm") && notes[0].contains("libnvvm 11.8"),
        "{}",
        notes[0]
    );
}

/// nvcc's PTX carries the `.cu` lines, so C++ and Rust sit side by side.
#[test]
fn source_shows_the_cu_lines_for_nvcc() {
    let out = asm_ok(&[
        "--kernel",
        "reduce_v3_f32",
        "--sass",
        "--source",
        "--backend",
        "llvm,nvcc",
    ]);
    let cu = "gpu-kernels/cuda/kernels.cu";
    let sync = line_of(cu, "__syncthreads();", "if (tid < stride)");
    let nvcc = out
        .split("// ===== reduce_v3_f32 [nvcc] SASS")
        .nth(1)
        .expect(&out);
    let at = nvcc
        .find(&format!("//> {cu}:{sync}  __syncthreads();"))
        .unwrap_or_else(|| panic!("no {cu}:{sync}:\n{nvcc}"));
    let next = nvcc[at..].lines().nth(1).unwrap();
    assert!(next.contains("BAR.SYNC"), "{next}");
    assert!(out.contains("//> gpu-kernels/src/reduce.rs:"), "{out}");
    // Every kernel of both, with CUDA's headers (nvcc's shuffles, atomics) charged to the
    // .cu lines.
    let all = asm_ok(&[
        "--kernel",
        "all",
        "--sass",
        "--source",
        "--backend",
        "llvm,nvcc",
    ]);
    no_library_lines_charged_and_every_line_exists(&all);
    assert!(
        all.contains("↳ include/sm_30_intrinsics.hpp:"),
        "nvcc's __shfl_down_sync"
    );
}

/// The PTX listing rebuilds the same chains from `.loc … inlined_at`.
#[test]
fn source_in_ptx_follows_inlined_at() {
    let out = asm_ok(&["--kernel", "reduce_v3_f32", "--source", "--backend", "llvm"]);
    let tree = line_of("gpu-kernels/src/reduce.rs", "sync_threads();", "fn tree_v3");
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| {
            l.contains(&format!(
                "//> gpu-kernels/src/reduce.rs:{tree}  sync_threads();"
            ))
        })
        .unwrap_or_else(|| panic!("no reduce.rs:{tree}:\n{out}"));
    assert!(
        lines[at + 2].contains("↳ core_arch/src/nvptx/mod.rs:"),
        "{out}"
    );
    assert!(lines[at + 3].trim_start().starts_with("bar.sync"), "{out}");
    assert!(!out.contains(".loc"), "{out}");
}

#[test]
fn source_on_nvvm_alone_says_what_it_lacks() {
    let stderr = asm_err(&[
        "--kernel",
        "reduce_v3_f32",
        "--sass",
        "--source",
        "--backend",
        "nvvm",
    ]);
    assert!(
        stderr.contains("no line info in") && stderr.contains("libnvvm 11.8 rejects"),
        "{stderr}"
    );
}

/// A two-instruction kernel whose line info points at `gpu-kernels/src/bump.rs`.
fn tiny_ptx(name: &str, line_info: bool) -> PathBuf {
    let bump = root().join("gpu-kernels/src/bump.rs");
    let (file, loc) = if line_info {
        (
            format!(".file 1 \"{}\"\n", bump.display()),
            "\t.loc 1 16 0\n",
        )
    } else {
        (String::new(), "")
    };
    let ptx = format!(
        "//\n// Generated by LLVM NVPTX Back-End\n//\n.version 7.8\n.target sm_90\n.address_size 64\n\
         .visible .entry bump(\n\t.param .u64 bump_param_0,\n\t.param .u32 bump_param_1\n)\n{{\n\
         {loc}\tld.param.b64 %rd1, [bump_param_0];\n\tret;\n}}\n{file}"
    );
    write_ptx(name, &ptx)
}

/// Writes `ptx` to `target/xtask-tests/<name>`; returns its path.
fn write_ptx(name: &str, ptx: &str) -> PathBuf {
    let dir = root().join("target/xtask-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, ptx).unwrap();
    path
}

#[test]
fn source_interleaves_rust_lines_from_loc() {
    let path = tiny_ptx("with-lines.ptx", true);
    let out = asm_ok(&[
        "--ptx",
        path.to_str().unwrap(),
        "--kernel",
        "bump",
        "--source",
    ]);
    let want = std::fs::read_to_string(root().join("gpu-kernels/src/bump.rs")).unwrap();
    let line16 = want.lines().nth(15).unwrap().trim();
    assert!(
        out.contains(&format!("//> gpu-kernels/src/bump.rs:16  {line16}")),
        "{out}"
    );
    assert!(!out.contains(".loc"), "{out}");
}

#[test]
fn source_without_line_info_is_a_clear_error() {
    let path = tiny_ptx("without-lines.ptx", false);
    let err = asm_err(&[
        "--ptx",
        path.to_str().unwrap(),
        "--kernel",
        "bump",
        "--source",
    ]);
    assert!(err.contains("no line info in"), "{err}");
}

/// A kernel `bump` for `target` that stores 7 through its pointer `stores` times.
fn store_kernel(target: &str, stores: usize) -> String {
    let body = "\tst.global.u32 [%rd2], %r1;\n".repeat(stores);
    format!(
        "//\n// Generated by LLVM NVPTX Back-End\n//\n.version 8.0\n.target {target}\n\
         .address_size 64\n.visible .entry bump(\n\t.param .u64 bump_param_0\n)\n{{\n\
         \t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [bump_param_0];\n\
         \tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, 7;\n{body}\tret;\n}}\n"
    )
}

/// PTX for sm_90a (Triton's and CUTLASS's Hopper kernels), which ptxas assembles for sm_90a
/// alone, is assembled for it, and the header says so.
#[test]
fn sm_90a_ptx_is_assembled_for_sm_90a() {
    let ptx = store_kernel("sm_90a", 1);
    let path = write_ptx("sm90a.ptx", &ptx);
    let p = path.to_str().unwrap();
    let sass = asm_ok(&["--ptx", p, "--kernel", "bump", "--sass"]);
    assert!(sass.contains("EXIT"), "{sass}");
    let stats = asm_ok(&["--ptx", p, "--kernel", "bump", "--stats"]);
    assert!(stats.contains("# ptxas -arch=sm_90a "), "{stats}");
}

/// A kernel of 255 registers (300 loads held, then stored in reverse), which nvdisasm cannot
/// count live registers for ("Invalid register count"): `--stats` and `--sass` go on without
/// the counts, saying so once; `--live`, which asks for them, is refused with the reason.
#[test]
fn a_kernel_nvdisasm_cannot_count_live_registers_for_still_lists() {
    let n = 300;
    let mut ptx = String::from(
        "//\n// Generated by LLVM NVPTX Back-End\n//\n.version 8.0\n.target sm_90\n\
         .address_size 64\n.visible .entry hog(\n\t.param .u64 hog_param_0\n)\n{\n",
    );
    ptx += &format!("\t.reg .b32 %f<{}>;\n\t.reg .b64 %rd<3>;\n", n + 2);
    ptx += "\tld.param.u64 %rd1, [hog_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n";
    for i in 0..n {
        ptx += &format!("\tld.global.volatile.f32 %f{}, [%rd2+{}];\n", i + 1, 4 * i);
    }
    for i in 0..n {
        ptx += &format!(
            "\tst.global.volatile.f32 [%rd2+{}], %f{};\n",
            4 * (n + i),
            n - i
        );
    }
    ptx += "\tret;\n}\n";
    let path = write_ptx("hog.ptx", &ptx);
    let p = path.to_str().unwrap();
    let out = asm(&["--ptx", p, "--kernel", "hog", "--stats"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let row = stdout.lines().find(|l| l.starts_with("| hog")).unwrap();
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert_eq!(cells[cells.len() - 7], "255", "{row}");
    assert_eq!(cells[cells.len() - 6], "-", "{row}");
    assert!(stderr.contains("note: no live-register counts"), "{stderr}");
    let err = asm_err(&["--ptx", p, "--kernel", "hog", "--live"]);
    assert!(
        err.contains("error: no live-register counts for hog"),
        "{err}"
    );
}

/// Two PTX files side by side (a kernel before and after a change): `--diff KERNEL` with two
/// `--ptx`, each side labelled by its file.
#[test]
fn diff_of_one_kernel_across_two_ptx_files() {
    let version = |name: &str, stores: usize| write_ptx(name, &store_kernel("sm_90", stores));
    let (old, new) = (version("before.ptx", 1), version("after.ptx", 2));
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let out = asm_ok(&["--ptx", old, "--ptx", new, "--diff", "bump", "--stats"]);
    assert!(
        out.contains("## bump [llvm: before.ptx] vs bump [llvm: after.ptx]"),
        "{out}"
    );
    assert!(out.contains("PTX global stores"), "{out}");
    let err = asm_err(&["--ptx", old, "--ptx", new, "--ptx", old]);
    assert!(err.contains("--ptx takes one file, or two"), "{err}");
}

#[test]
fn cli_unknown_kernel_names_it() {
    let path = tiny_ptx("unknown-kernel.ptx", false);
    let err = asm_err(&["--ptx", path.to_str().unwrap(), "--kernel", "reduce_v9"]);
    assert!(err.contains("no kernel matches 'reduce_v9'"), "{err}");
}

#[test]
fn cli_unknown_backend_names_it() {
    let err = asm_err(&["--backend", "cuda"]);
    assert!(err.contains("'cuda'"), "{err}");
}

#[test]
fn cli_diff_of_one_kernel_needs_two_backends() {
    let path = tiny_ptx("one-backend.ptx", false);
    let err = asm_err(&["--ptx", path.to_str().unwrap(), "--diff", "bump"]);
    assert!(err.contains("--backend llvm,nvvm"), "{err}");
}
