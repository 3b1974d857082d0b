//! `profile --source` as a command, on the H200 capture in `tests/fixtures/ncu/capture/` (see
//! its README): read back with `--from`, and live with stand-ins for lab and ncu that hand
//! the capture back. What the lines are: `studies`' `profile_source` tests.

use crate::harness;
use profiler::source::{self, lines};
use std::path::{Path, PathBuf};
use std::process::Command;

fn capture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ncu/capture")
}

/// One of the capture's files (`src-<backend>.<page>`, kept as `.gz`), unpacked.
fn page_text(name: &str) -> String {
    profiler::gzip::read_text(&capture().join(format!("{name}.gz"))).unwrap()
}

/// The capture of `backends` in one fresh folder, as `profile --source` leaves it: each
/// backend's raw page, two Source pages and line map.
fn staged(backends: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xtask-source-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for b in backends {
        for suffix in [
            "raw.csv.gz",
            "source-sass.csv.gz",
            "source-cuda-sass.csv.gz",
            "source-lines.json.gz",
        ] {
            let name = format!("src-{b}.{suffix}");
            std::fs::copy(capture().join(&name), dir.join(&name)).unwrap();
        }
    }
    dir
}

/// `profile --source --from DIR` reads a capture back: the summary, the diagnosis at its line,
/// Rust and C++ blocks in `--backend`'s order, and no file written.
#[test]
fn profile_source_from_a_capture_folder() {
    let dir = staged(&["llvm", "nvcc"]);
    let before: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args([
            "profile",
            "--kernel",
            "reduce_v3",
            "--source",
            "--backend",
            "nvcc,llvm",
            "--from",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nvcc = text.find("== reduce_v3 [nvcc]").expect("nvcc block");
    let llvm = text.find("== reduce_v3 [llvm]").expect("llvm block");
    assert!(nvcc < llvm, "in --backend's order");
    assert!(
        !text.contains("reduce_v6"),
        "--kernel filters what is read back"
    );
    assert!(
        text.contains("at: long_scoreboard stalls: 100 % at reduce.rs:78 (`s.set(`)"),
        "{text}"
    );
    assert!(
        text.contains("at: long_scoreboard stalls: 100 % at kernels.cu:54"),
        "{text}"
    );
    assert!(
        text.contains("gpu-kernels/src/reduce.rs:86  sync_threads();"),
        "{text}"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before.len());

    // Without the Source pages, one line says how to collect them.
    std::fs::remove_file(dir.join("src-nvcc.source-sass.csv.gz")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["profile", "--source", "--backend", "nvcc", "--from"])
        .arg(dir.join("src-nvcc.raw.csv.gz"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Source lines     none: no source page")
            && text.contains("profile with --source to collect it"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

const FAKE_LAB: &str = r#"#!/bin/bash
# lab run --plan: reduce_v3 on every backend; a profiled run: nothing to do.
for a in "$@"; do [ "$a" = "--plan" ] && { cat "$FAKE_PLAN"; exit 0; }; done
echo "lab run (fake)"
"#;

const FAKE_NCU: &str = r#"#!/bin/bash
# ncu stand-in: the "report" names its backend; --import hands back the H200 capture's pages.
if [ "$1" = "--version" ]; then echo "Version 2025.3.1.0 (fake)"; exit 0; fi
if [ "$1" = "--import" ]; then
  b=$(cat "$2")
  case "$*" in
    *"--print-source sass"*) gzip -dc "$FAKE_CAPTURE/src-$b.source-sass.csv.gz";;
    *"--print-source cuda,sass"*) gzip -dc "$FAKE_CAPTURE/src-$b.source-cuda-sass.csv.gz";;
    *) gzip -dc "$FAKE_CAPTURE/src-$b.raw.csv.gz";;
  esac
  exit 0
fi
echo "$@" >> "$FAKE_LOG"
out=""; plan=""; prev=""
for a in "$@"; do
  [ "$prev" = "--export" ] && out=$a
  [ "$prev" = "--from-plan" ] && plan=$a
  prev=$a
done
grep -o '"backend": "[a-z]*"' "$plan" | head -1 | cut -d'"' -f4 > "$out.ncu-rep"
"#;

/// `profile --source` on a GPU machine, with stand-ins for lab and ncu that hand back the
/// capture: ncu runs once per listed backend (not for nvvm, which `--backend llvm,nvcc`
/// leaves out) with `--import-source yes`, and both Source pages land beside the raw page.
#[test]
fn profile_source_captures_the_source_pages() {
    let sb = harness::Sandbox::new("source-live", &[("lab", FAKE_LAB), ("ncu", FAKE_NCU)]);
    let dir = &sb.dir;
    let launch = |b: &str| {
        format!(
            r#"{{"label":"reduce_v3 [{b}]","kernel":"reduce_v3","entry":"reduce_v3_f32","family":"reduction","backend":"{b}","elements":16777216}}"#
        )
    };
    let plan = format!(
        r#"{{"sizes":{{"n":16777216,"rows":4096,"cols":4096,"offset":0}},"backends_built":["llvm","nvvm","nvcc"],"notes":[],"nvtx_filter":"kernel-lab@profile/","launches":[{},{},{}]}}"#,
        launch("llvm"),
        launch("nvvm"),
        launch("nvcc")
    );
    std::fs::write(dir.join("plan.json"), plan).unwrap();
    let out = dir.join("out");
    let o = harness::xtask()
        .args([
            "profile",
            "--kernel",
            "reduce_v3",
            "--source",
            "--backend",
            "llvm,nvcc",
        ])
        .arg("--lab")
        .arg(dir.join("lab"))
        .arg("--output")
        .arg(&out)
        .env("NCU", dir.join("ncu"))
        .env("FAKE_PLAN", dir.join("plan.json"))
        .env("FAKE_CAPTURE", capture())
        .env("FAKE_LOG", dir.join("ncu-args.log"))
        .output()
        .unwrap();
    let text = harness::stdout(&o);
    assert!(o.status.success(), "{text}\n{}", harness::stderr(&o));
    let runs = std::fs::read_to_string(dir.join("ncu-args.log")).unwrap();
    assert_eq!(runs.lines().count(), 2, "{runs}");
    assert!(
        runs.lines().all(|l| l.contains("--import-source yes")),
        "{runs}"
    );
    assert!(
        runs.lines().all(|l| l.contains(" run --from-plan ")),
        "{runs}"
    );
    assert!(!out.join("profile-reduce_v3-nvvm.ncu-rep").exists());
    for b in ["llvm", "nvcc"] {
        for page in [source::SASS_PAGE, source::CUDA_PAGE] {
            let got =
                std::fs::read_to_string(out.join(format!("profile-reduce_v3-{b}.{page}"))).unwrap();
            let want = page_text(&format!("src-{b}.{page}"));
            assert_eq!(got, want, "{b} {page}");
        }
        let block = &text[text.find(&format!("== reduce_v3 [{b}]")).unwrap()..];
        assert!(
            block.contains("Source lines     reduce_v3_f32: "),
            "{block}"
        );
    }
    assert!(text.contains("(--set full, --source)"), "{text}");
    // The line map is made from this tree's PTX and kept with the capture.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for b in ["llvm", "nvcc"] {
        let map = out.join(format!("profile-reduce_v3-{b}.{}", source::LINE_MAP));
        if root
            .join(format!("target/ptx/{b}/gpu_kernels.ptx"))
            .is_file()
        {
            let m = lines::LineMap::read(&map).unwrap();
            assert!(m.kernels.contains_key("reduce_v3_f32"), "{b}");
        }
    }
}
