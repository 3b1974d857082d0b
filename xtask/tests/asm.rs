//! `cargo xtask asm`, run as a user would: the compiled xtask binary on the real PTX from
//! `cargo xtask ptx` (never skipped: a missing PTX or missing CUDA tools fail the test with
//! the command that fixes it).
//!
//! - `check_*`: `--check` (the PTX and SASS checks that keep the chapter's claims true) on
//!   each backend;
//! - `stats_*`, `sass_*`, `diff_*`: the subcommand's outputs;
//! - `source_*`, `cli_*`: line info and argument errors, on small PTX files written here.

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

#[test]
fn stats_text_is_one_table_with_a_header() {
    let out = asm_ok(&["--kernel", "all", "--stats", "--backend", "llvm"]);
    assert!(out.starts_with("# cargo xtask asm"), "{out}");
    assert!(out.contains("# date ") && out.contains("commit "), "{out}");
    assert!(out.contains("ptxas -arch=sm_90"), "{out}");
    assert!(out.contains("| reduce_v1_f32 [llvm]"), "{out}");
    assert!(out.contains("| transpose_padded_f32 [llvm]"), "{out}");
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
    let out = asm(&[
        "--ptx",
        path.to_str().unwrap(),
        "--kernel",
        "bump",
        "--source",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no line info in"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn cli_unknown_kernel_names_it() {
    let path = tiny_ptx("unknown-kernel.ptx", false);
    let out = asm(&["--ptx", path.to_str().unwrap(), "--kernel", "reduce_v9"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no kernel matches 'reduce_v9'"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn cli_unknown_backend_names_it() {
    let out = asm(&["--backend", "cuda"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("'cuda'"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn cli_diff_of_one_kernel_needs_two_backends() {
    let path = tiny_ptx("one-backend.ptx", false);
    let out = asm(&["--ptx", path.to_str().unwrap(), "--diff", "bump"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--backend llvm,nvvm"),
        "{}",
        text(&out.stderr)
    );
}
