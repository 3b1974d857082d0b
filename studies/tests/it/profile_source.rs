//! `profile --source` on the real H200 capture (`tests/fixtures/ncu/capture/`, see its README:
//! ncu 2025.3.1 `--set full --import-source yes` of reduce_v3, reduce_v6 and transpose_tiled on
//! llvm, nvcc and nvvm, exported as Source pages): the page parsers, the line map, the lines
//! each instruction is charged to, and the diagnosis pointed at a line (the command itself,
//! live and read back with `--from`: `xtask/tests/it/source_cli.rs`). The capture is kept
//! gzipped, as `profile --source --from` reads it too.
//!
//! The line maps beside the pages (`src-<backend>.source-lines.json.gz`) are what `profile --source` writes beside a
//! capture (`<stem>.source-lines.json`), made from the PTX of the capture's commit (cd42150):
//! `ptxas -arch=sm_90 -lineinfo` and `nvdisasm -c -gi`, call-site files from the PTX. Numbers
//! the tests expect are read off the CSV pages here, by other means than the code under test.

use crate::lab_fixtures;
use profiler::diagnose;
use profiler::source::{self, KernelSource, Origin, lines, page};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use studies::profiles::attribution;
use studies::profiles::metrics::{Profiled, stall_metric};
use studies::profiles::ncu_csv::{Launch, Value};

fn capture() -> PathBuf {
    lab_fixtures().join("ncu/capture")
}

/// One of the capture's files (`src-<backend>.<page>`, kept as `.gz`), unpacked.
fn page_text(name: &str) -> String {
    studies::profiles::capture::read_text(&capture().join(format!("{name}.gz"))).unwrap()
}

/// A folder holding one backend's capture as `profile --source` leaves it: the raw page, the
/// two Source pages and the line map (or `map`, when given, as the line map).
fn staged(backend: &str, map: Option<&str>) -> PathBuf {
    // One folder per call: the tests run at once and each removes its own.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "xtask-source-{backend}-{}-{call}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    for suffix in [
        "raw.csv.gz",
        "source-sass.csv.gz",
        "source-cuda-sass.csv.gz",
    ] {
        let name = format!("src-{backend}.{suffix}");
        std::fs::copy(capture().join(&name), dir.join(&name)).unwrap();
    }
    let json = format!("src-{backend}.source-lines.json");
    match map {
        Some(m) => std::fs::write(dir.join(&json), m).unwrap(),
        None => {
            let packed = format!("{json}.gz");
            std::fs::copy(capture().join(&packed), dir.join(&packed)).unwrap();
        }
    }
    dir
}

fn read(backend: &str) -> Vec<KernelSource> {
    let dir = staged(backend, None);
    let ks = source::read(
        &dir.join(format!("src-{backend}")),
        backend,
        &attribution::lab(),
        false,
    )
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    ks
}

/// The capture reads the same gzipped (as kept here) and unpacked (as `profile --source`
/// writes it): pages, line map and the raw page.
#[test]
fn a_gzipped_capture_reads_as_the_unpacked_one() {
    let packed = staged("nvcc", None);
    let plain = packed.with_extension("plain");
    std::fs::create_dir_all(&plain).unwrap();
    for e in std::fs::read_dir(&packed).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy();
        let text = studies::profiles::capture::read_text(&p).unwrap();
        std::fs::write(plain.join(name.strip_suffix(".gz").unwrap()), text).unwrap();
    }
    let a = source::read(&packed.join("src-nvcc"), "nvcc", &attribution::lab(), false).unwrap();
    let b = source::read(&plain.join("src-nvcc"), "nvcc", &attribution::lab(), false).unwrap();
    assert_eq!(a, b);
    assert!(
        matches!(a[0].origin, Origin::Chains { .. }),
        "{:?}",
        a[0].origin
    );
    let _ = std::fs::remove_dir_all(&packed);
    let _ = std::fs::remove_dir_all(&plain);
}

fn kernel<'a>(ks: &'a [KernelSource], function: &str) -> &'a KernelSource {
    ks.iter().find(|k| k.function == function).unwrap()
}

/// The `sass` page's first block for `function`, as (offset → column → cell), read with the csv
/// crate alone.
fn by_hand(backend: &str, function: &str) -> BTreeMap<u64, BTreeMap<String, String>> {
    let text = page_text(&format!("src-{backend}.source-sass.csv"));
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let rows: Vec<Vec<String>> = r
        .records()
        .map(|x| x.unwrap().iter().map(str::to_string).collect())
        .collect();
    let start = rows
        .iter()
        .position(|x| x[0] == "Kernel Name" && x[1] == function)
        .unwrap();
    let header = &rows[start + 1];
    let mut out = BTreeMap::new();
    let mut base = None;
    for x in &rows[start + 2..] {
        if x[0] == "Kernel Name" {
            break;
        }
        let a = u64::from_str_radix(x[0].trim_start_matches("0x"), 16).unwrap();
        let base = *base.get_or_insert(a);
        out.insert(
            a - base,
            header.iter().cloned().zip(x.iter().cloned()).collect(),
        );
    }
    out
}

fn sum(rows: &BTreeMap<u64, BTreeMap<String, String>>, col: &str, offsets: &[u64]) -> u64 {
    offsets
        .iter()
        .map(|o| rows[o][col].parse::<u64>().unwrap())
        .sum()
}

fn all(rows: &BTreeMap<u64, BTreeMap<String, String>>) -> Vec<u64> {
    rows.keys().copied().collect()
}

#[test]
fn sass_page_holds_each_kernel_once_with_every_instruction() {
    let text = page_text("src-llvm.source-sass.csv");
    let kernels = page::parse_sass(&text).unwrap();
    let names: Vec<&str> = kernels.iter().map(|k| k.function.as_str()).collect();
    // ncu prints every kernel twice; one copy is kept.
    assert_eq!(
        names,
        ["reduce_v3_f32", "reduce_v6_f32", "transpose_tiled_f32"]
    );
    let hand = by_hand("llvm", "reduce_v3_f32");
    let v3 = &kernels[0];
    assert_eq!(v3.insts.len(), hand.len());
    assert_eq!(v3.insts.len(), 88, "73 instructions and 15 of padding");
    let total: u64 = v3.insts.iter().map(|i| i.counts.samples).sum();
    assert_eq!(
        total,
        sum(&hand, "Warp Stall Sampling (All Samples)", &all(&hand))
    );
    assert_eq!(total, 14_253);
    let sts = v3.insts.iter().find(|i| i.offset == 0x140).unwrap();
    assert_eq!(sts.text, "STS [R9], R0");
    assert_eq!(sts.opcode, "STS");
    assert_eq!(sts.counts.stalls["long_scoreboard"], 6_153);
    assert_eq!(sts.counts.executed, 524_288);
    // Every stall column sums to the samples of its instruction.
    for i in &v3.insts {
        assert_eq!(
            i.counts.stalls.values().sum::<u64>(),
            i.counts.samples,
            "{}",
            i.text
        );
    }
}

#[test]
fn cuda_sass_page_gives_lines_and_captured_text() {
    let text = page_text("src-llvm.source-cuda-sass.csv");
    let (lines, no_lines) = page::parse_cuda_sass(&text).unwrap();
    assert!(no_lines.is_empty());
    let v3 = lines
        .iter()
        .find(|l| l.function == "reduce_v3_f32")
        .unwrap();
    let reduce = "/work/main/gpu-kernels/src/reduce.rs".to_string();
    assert_eq!(
        v3.text.get(&(reduce.clone(), 169)).map(String::as_str),
        Some("sync_threads();")
    );
    // A line quoting `asm!("…")` breaks ncu's CSV quoting: its text is not trusted.
    let llvm = "/work/main/gpu-kernels/src/device/llvm.rs".to_string();
    assert!(!v3.text.contains_key(&(llvm, 79)));
    // The first barrier (+0x150) is listed under three lines of its chain, one of them under
    // the wrong file: core::arch's nvptx/mod.rs:57 shows as the device layer's mod.rs:57. The
    // STS at +0x140 only under its innermost line, not under reduce.rs:78 that inlined it.
    let base = 0x7fdde77a1100;
    let device = |f: &str, n: u32| (format!("/work/main/gpu-kernels/src/device/{f}"), n);
    assert_eq!(
        v3.at[&(base + 0x150)],
        [device("llvm.rs", 49), device("mod.rs", 57), (reduce, 86)]
    );
    assert_eq!(v3.at[&(base + 0x140)], [device("mod.rs", 63)]);
    let nvvm = page_text("src-nvvm.source-cuda-sass.csv");
    let (lines, no_lines) = page::parse_cuda_sass(&nvvm).unwrap();
    assert!(lines.is_empty());
    assert_eq!(
        no_lines,
        ["reduce_v3_f32", "reduce_v6_f32", "transpose_tiled_f32"]
    );
}

/// The hottest line of llvm's reduce_v3 is the store of the loaded element into shared memory,
/// `s.set(` at reduce.rs:78 (the STS waits for the global load: long_scoreboard). Its five
/// instructions (+0xe0 … +0x140, from `nvdisasm -gi`: reduce.rs:78 → device/mod.rs:63 →
/// core's `ptr::add`) carry, in the CSV, 7 + 1 + 152 + 33 + 6,186 samples.
#[test]
fn llvm_reduce_v3_hottest_line_is_what_the_csv_says() {
    let ks = read("llvm");
    let v3 = kernel(&ks, "reduce_v3_f32");
    assert!(
        matches!(v3.origin, Origin::Chains { .. }),
        "{:?}",
        v3.origin
    );
    let hand = by_hand("llvm", "reduce_v3_f32");
    let hottest = &v3.lines[0];
    assert_eq!(hottest.at.path, "gpu-kernels/src/reduce.rs");
    assert_eq!((hottest.at.line, hottest.at.text.as_str()), (78, "s.set("));
    let offsets = [0xe0, 0xf0, 0x120, 0x130, 0x140];
    let mine: Vec<u64> = hottest.insts.iter().map(|&i| v3.insts[i].offset).collect();
    assert_eq!(mine, offsets);
    let samples = sum(&hand, "Warp Stall Sampling (All Samples)", &offsets);
    assert_eq!(hottest.totals.samples, samples);
    assert_eq!(samples, 6_379);
    assert_eq!(
        hottest.totals.executed,
        sum(&hand, "Instructions Executed", &offsets)
    );
    assert_eq!(
        v3.totals.samples,
        sum(&hand, "Warp Stall Sampling (All Samples)", &all(&hand))
    );
    // Beneath it, the device layer's `set` and core's `ptr::add` it inlined.
    let inner: Vec<(usize, &str, u32)> = hottest
        .inner
        .iter()
        .map(|x| (x.depth, x.at.path.as_str(), x.at.line))
        .collect();
    assert_eq!(
        inner,
        [
            (1, "gpu-kernels/src/device/mod.rs", 63),
            (2, "core/src/ptr/mut_ptr.rs", 971)
        ]
    );
    let text = source::kernel_text(v3, false);
    assert!(text.contains("44.8 %      6,379"), "{text}");
    assert!(
        text.contains("↳ gpu-kernels/src/device/mod.rs:63"),
        "{text}"
    );
}

/// Barrier samples sit in the CSV on the instructions after each `BAR.SYNC` (none on the
/// barrier itself); the first barrier (+0x150, reduce.rs:86, after the load) takes those of
/// +0x160 … +0x190 before the next barrier at +0x1a0: 3,808 of the kernel's 4,592, 83 %.
#[test]
fn llvm_reduce_v3_barrier_stalls_are_charged_to_sync_threads() {
    let hand = by_hand("llvm", "reduce_v3_f32");
    let on_bars: Vec<u64> = hand
        .iter()
        .filter(|(_, r)| r["Source"].contains("BAR.SYNC"))
        .map(|(o, _)| *o)
        .collect();
    assert_eq!(sum(&hand, "stall_barrier", &on_bars), 0);
    let total = sum(&hand, "stall_barrier", &all(&hand));
    let first = sum(&hand, "stall_barrier", &[0x160, 0x170, 0x180, 0x190]);
    assert_eq!((first, total), (3_808, 4_592));

    let ks = read("llvm");
    let v3 = kernel(&ks, "reduce_v3_f32");
    assert_eq!(v3.moved_barrier, total);
    let line = |n: u32| v3.lines.iter().find(|l| l.at.line == n).unwrap();
    assert_eq!(line(86).at.text, "sync_threads();");
    assert_eq!(line(86).totals.stall("barrier"), first);
    assert_eq!(line(169).at.text, "sync_threads();");
    assert_eq!(
        line(86).totals.stall("barrier") + line(169).totals.stall("barrier"),
        total
    );
    // sync_threads() → the device layer → core::arch, beneath the kernel line.
    let inner: Vec<&str> = line(86).inner.iter().map(|x| x.at.path.as_str()).collect();
    assert_eq!(
        inner,
        [
            "gpu-kernels/src/device/llvm.rs",
            "core_arch/src/nvptx/mod.rs"
        ]
    );

    // A kernel whose dominant stall is the barrier: the diagnosis names the line.
    let mut p = Launch {
        kernel: "reduce_v3_f32".into(),
        ..Launch::default()
    };
    for (reason, v) in [("barrier", 20.0), ("long_scoreboard", 5.0)] {
        p.metrics.insert(stall_metric(reason), Value::Num(v));
    }
    let row = Profiled::new(p, "llvm");
    let mut d = diagnose::diagnose(&row);
    source::locate::locate(&row, &mut d, v3);
    let stall = d.get("stall").unwrap();
    assert_eq!(
        stall.at.as_deref(),
        Some(format!(
            "barrier stalls: {:.0} % at reduce.rs:86 (`sync_threads();`)",
            100.0 * first as f64 / total as f64
        ))
        .as_deref()
    );
    assert!(stall.at.as_deref().unwrap().contains("83 %"));
}

/// The nvcc twins map to `gpu-kernels/cuda/kernels.cu`, the CUDA headers' atomics beneath.
#[test]
fn nvcc_reduce_v3_maps_to_the_cu_lines() {
    let ks = read("nvcc");
    let v3 = kernel(&ks, "reduce_v3_f32");
    assert!(matches!(v3.origin, Origin::Chains { .. }));
    for l in v3.lines.iter().filter(|l| l.at.line > 0) {
        assert_eq!(l.at.path, "gpu-kernels/cuda/kernels.cu", "{l:?}");
    }
    let hand = by_hand("nvcc", "reduce_v3_f32");
    let hottest = &v3.lines[0];
    assert_eq!(
        (hottest.at.line, hottest.at.text.as_str()),
        (54, "s[threadIdx.x] = i < n ? in[i] : T(0);")
    );
    let offsets: Vec<u64> = hottest.insts.iter().map(|&i| v3.insts[i].offset).collect();
    assert_eq!(
        hottest.totals.samples,
        sum(&hand, "Warp Stall Sampling (All Samples)", &offsets)
    );
    let sync = v3.lines.iter().find(|l| l.at.line == 55).unwrap();
    assert_eq!(sync.at.text, "__syncthreads();");
    let total = sum(&hand, "stall_barrier", &all(&hand));
    assert_eq!(v3.totals.stall("barrier"), total);
    let atomic = v3.lines.iter().find(|l| l.at.line == 100).unwrap();
    assert!(
        atomic
            .inner
            .iter()
            .any(|x| x.at.path == "include/sm_20_atomic_functions.hpp"),
        "{:?}",
        atomic.inner
    );
}

/// nvvm's PTX has no line tables: one line says so, and the hottest SASS instructions show.
#[test]
fn nvvm_has_no_lines_and_shows_hot_instructions() {
    let ks = read("nvvm");
    let v3 = kernel(&ks, "reduce_v3_f32");
    match &v3.origin {
        Origin::None { why } => assert!(why.contains("no line tables"), "{why}"),
        o => panic!("{o:?}"),
    }
    assert!(v3.lines.is_empty());
    let text = source::kernel_text(v3, false);
    let first = text
        .lines()
        .find(|l| l.contains('+') && l.contains("  +"))
        .unwrap();
    assert!(first.contains("+0150  STS [R0], R5"), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("no source lines"))
            .count(),
        1
    );
}

/// When the offline cubin differs from what the driver's JIT ran, the chains are not used:
/// each instruction goes to a line ncu lists it under, and the block says why.
#[test]
fn a_line_map_that_disagrees_falls_back_to_ncus_lines() {
    let mut map: lines::LineMap =
        serde_json::from_str(&page_text("src-llvm.source-lines.json")).unwrap();
    map.kernels.get_mut("reduce_v3_f32").unwrap()[3].opcode = "NOP".into();
    let dir = staged("llvm", Some(&map.json()));
    let ks = source::read(&dir.join("src-llvm"), "llvm", &attribution::lab(), false).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let v3 = kernel(&ks, "reduce_v3_f32");
    match &v3.origin {
        Origin::Ncu { why } => assert!(
            why.contains("instruction 3 (+0x30) is ULDC.64 in ncu's SASS but NOP"),
            "{why}"
        ),
        o => panic!("{o:?}"),
    }
    // ncu lists the first barrier (+0x150) under llvm.rs:49, mod.rs:57 and reduce.rs:86: the
    // kernel line; the STS at +0x140 only under the device layer's mod.rs:63.
    let line = |offset: u64| {
        let i = v3.insts.iter().position(|i| i.offset == offset).unwrap();
        let l = v3.line_of(i).unwrap();
        (l.at.path.clone(), l.at.line)
    };
    assert_eq!(line(0x150), ("gpu-kernels/src/reduce.rs".to_string(), 86));
    assert_eq!(
        line(0x140),
        ("gpu-kernels/src/device/mod.rs".to_string(), 63)
    );
    let text = source::kernel_text(v3, false);
    assert_eq!(text.matches("without inline chains").count(), 1, "{text}");
    // The other kernels still match.
    assert!(matches!(
        kernel(&ks, "reduce_v6_f32").origin,
        Origin::Chains { .. }
    ));
}

/// `--source` adds `--import-source yes` to the ncu run (the Source page's text as built).
#[test]
fn the_capture_imports_the_sources() {
    use studies::profiles::capture;
    let settings = |source| capture::Settings {
        ncu: "ncu".into(),
        lab: "dist/lab".into(),
        clock_control: capture::ClockControl::None,
        cache_control: capture::CacheControl::All,
        select: capture::Select::Nvtx,
        out_dir: "results/profile".into(),
        collect: capture::Collect {
            set: Some(profiler::ncu::run::Set::Full),
            sections: Vec::new(),
            metrics: Vec::new(),
        },
        placement: catalog::SlotChoice::Fast,
        source,
    };
    let job = capture::Job {
        name: capture::job_name(
            "profile-reduce_v3",
            capture::Select::Nvtx,
            "reduce_v3",
            catalog::Backend::Llvm.into(),
        ),
        backend: catalog::Backend::Llvm.into(),
        launches: vec![capture::Planned {
            label: "reduce_v3 [llvm]".into(),
            kernel: "reduce_v3".into(),
            entry: "reduce_v3_f32".into(),
            family: catalog::Family::Reduce,
            backend: catalog::Backend::Llvm.into(),
            elements: 1 << 24,
            launches: 1,
        }],
    };
    assert_eq!(job.name, "profile-reduce_v3-llvm");
    let args = |source| -> String {
        let cmd = capture::ncu_command(
            &settings(source),
            &job,
            Path::new("r"),
            Path::new("p"),
            Path::new("m"),
        );
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        args(true).contains("--set full --import-source yes"),
        "{}",
        args(true)
    );
    assert!(!args(false).contains("--import-source"));
}

#[test]
fn backend_lists() {
    use catalog::{Backend, Which};
    use studies::asm::parse_backends;
    use studies::profiles::ncu::parse_which;
    assert_eq!(parse_which("llvm,nvcc"), Ok(Which::All));
    assert_eq!(parse_which("nvvm,llvm"), Ok(Which::Both));
    assert_eq!(parse_which("nvcc"), Ok(Which::Nvcc));
    assert_eq!(parse_which("llvm,nvcc,nvvm"), Ok(Which::All));
    assert_eq!(
        parse_backends("nvcc,llvm"),
        Ok(vec![Backend::Nvcc, Backend::Llvm])
    );
    assert!(parse_which("llvm,gcc").is_err());
}

/// The tiled transpose reads its tile down a column: every extra shared wavefront of the
/// kernel is at that read, transpose.rs:73 (16,252,928 of them in the CSV).
#[test]
fn bank_conflicts_point_at_the_column_read_of_the_tile() {
    use studies::profiles::metrics as m;
    let ks = read("llvm");
    let t = kernel(&ks, "transpose_tiled_f32");
    let hand = by_hand("llvm", "transpose_tiled_f32");
    let extra = sum(&hand, "L1 Wavefronts Shared Excessive", &all(&hand));
    assert_eq!(extra, 16_252_928);
    let line = t
        .lines
        .iter()
        .find(|l| l.totals.shared_excess == Some(extra))
        .unwrap();
    assert_eq!(line.at.line, 73);
    let mut p = Launch {
        kernel: "transpose_tiled_f32".into(),
        ..Launch::default()
    };
    for (name, v) in [
        (m::SH_LD_REQ, 524_288.0),
        (m::SH_LD_WAVEFRONTS, 16_777_216.0),
        (m::SH_LD_CONFLICTS, 16_252_928.0),
    ] {
        p.metrics.insert(name.into(), Value::Num(v));
    }
    let row = Profiled::new(p, "llvm");
    let mut d = diagnose::diagnose(&row);
    source::locate::locate(&row, &mut d, t);
    let bank = d.get("bank-conflicts").unwrap();
    let at = bank.at.as_deref().unwrap();
    assert!(
        at.starts_with("extra shared wavefronts: 100 % at transpose.rs:73 (`*output.add("),
        "{at}"
    );
}
