//! The nsys side of `cargo xtask nsys` (`profiler::nsys`): `nsys stats --format csv` tables,
//! parsed and printed, on the real H200 capture (`gpu/profile.sh`, nsys 2025.3.1, binaries of commit c7486e2,
//! 2026-11-30): the launch-gap demo
//! (`lab bench --kernel launch_gap`) and the whole bench (`lab bench`).
//!
//! Fixtures in `xtask/tests/fixtures/nsys/` (see its README): `nsys-launch-gap_<report>.csv`,
//! `nsys-bench_<report>.csv`, and `synthetic-nsys-empty_nvtx_sum.csv` (a report nsys skips,
//! which the real capture does not contain).
//!
//! The verdicts ("where the time goes", per NVTX range) and the importer check run on the
//! later H200 capture in `xtask/tests/fixtures/nsys/capture/` (its README: commit cd42150, nsys
//! 2025.3.1): `nsys-launchgap_*` and `nsys-bench_*` (the bench of reduce_v6, reduce_v7 and
//! CUB at 2^28) with the three event lists, and what nsys, its importer and `xtask nsys`
//! printed on a machine without `libdw.so.1`. `cargo xtask nsys` end to end, with a stand-in
//! nsys: `xtask/tests/it/nsys_cli.rs`.

use crate::lab_fixtures;
use crate::nsys_capture::capture;
use profiler::nsys::csv::{self as nsys_csv, StatsTable, TABLES};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    lab_fixtures().join("nsys")
}

fn text(prefix: &str, report: &str) -> String {
    let path = fixtures().join(format!("{prefix}_{report}.csv"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn table(prefix: &str, report: &str) -> StatsTable {
    nsys_csv::parse_stats(report, &text(prefix, report)).unwrap()
}

/// A numeric cell of the row whose name (last column) is exactly `name`.
fn cell(t: &StatsTable, name: &str, column: &str) -> f64 {
    let row = t
        .rows
        .iter()
        .position(|r| r.last().map(String::as_str) == Some(name))
        .unwrap_or_else(|| panic!("{}: no row {name}", t.report));
    let col = t
        .column(column)
        .unwrap_or_else(|| panic!("{}: no column {column}", t.report));
    t.num(row, col)
        .unwrap_or_else(|| panic!("{}: {name} {column} is not a number", t.report))
}

/// The launch-gap demo's shape (host/src/bench/measure.rs): per backend, 1000 `bump`
/// launches three ways, each way run 3 times untimed then 20 times timed.
const LAUNCHES: f64 = 1000.0;
const BACKENDS: [&str; 3] = ["llvm", "nvvm", "nvcc"];
const N_BACKENDS: f64 = BACKENDS.len() as f64;
const WARMUP: f64 = 3.0;
const REPS: f64 = 20.0;
const WAYS: f64 = 3.0; // A sync after each, B back-to-back, C graph

#[test]
fn every_real_table_parses_with_its_columns() {
    for prefix in ["nsys-launch-gap", "nsys-bench"] {
        for report in TABLES {
            let t = table(prefix, report);
            assert!(!t.rows.is_empty(), "{prefix} {report}: no rows");
            assert_eq!(t.note, None, "{prefix} {report}");
            assert_eq!(t.headers[0], "Time (%)");
            let name = if report == "nvtx_sum" {
                "Range"
            } else {
                "Name"
            };
            assert_eq!(t.headers.last().unwrap(), name, "{prefix} {report}");
            for c in ["Total Time", "Avg", "Med", "Min", "Max", "StdDev"] {
                assert!(t.column(c).is_some(), "{prefix} {report}: {c}");
            }
            // Every row as wide as the header (quoted names with commas stay one cell).
            assert!(
                t.rows.iter().all(|r| r.len() == t.headers.len()),
                "{prefix} {report}"
            );
        }
    }
}

/// cuda_api_sum of the launch-gap demo, call by call: what each way costs in API calls.
#[test]
fn launch_gap_api_calls_per_variant() {
    let api = table("nsys-launch-gap", "cuda_api_sum");
    let calls = |name: &str| cell(&api, name, "Num Calls");
    let runs = N_BACKENDS * (WARMUP + REPS); // of each way
    // A and B launch 1000 kernels per run; C's capture records 1000 more launches once per
    // backend, and each run of C is one graph launch.
    let a_launches = runs * LAUNCHES;
    let b_launches = runs * LAUNCHES;
    let c_captured = N_BACKENDS * LAUNCHES;
    assert_eq!(
        calls("cuLaunchKernel"),
        a_launches + b_launches + c_captured
    );
    assert_eq!(calls("cuLaunchKernel"), 141_000.0);
    assert_eq!(calls("cuGraphLaunch"), runs);
    assert_eq!(calls("cuStreamBeginCapture_v2"), N_BACKENDS);
    assert_eq!(calls("cuGraphInstantiateWithFlags"), N_BACKENDS);
    // A synchronizes after every launch; each way's warm-up ends with one more.
    assert_eq!(
        calls("cuStreamSynchronize"),
        runs * LAUNCHES + N_BACKENDS * WAYS
    );
    assert_eq!(calls("cuStreamSynchronize"), 69_009.0);
    // Timed runs are bracketed by two events and waited on once; every run is reset first.
    assert_eq!(calls("cuEventSynchronize"), N_BACKENDS * WAYS * REPS);
    assert_eq!(calls("cuEventRecord"), 2.0 * N_BACKENDS * WAYS * REPS);
    assert_eq!(
        calls("cuMemsetD32Async"),
        N_BACKENDS * WAYS * (WARMUP + REPS)
    );
    // CPU cost per call (ns): a launch and a synchronize each cost microseconds, one graph
    // launch of 1000 kernels under a millisecond.
    assert_eq!(cell(&api, "cuLaunchKernel", "Avg"), 3874.6);
    assert_eq!(cell(&api, "cuStreamSynchronize", "Avg"), 5449.9);
    assert_eq!(cell(&api, "cuGraphLaunch", "Avg"), 719_987.5);
    // Launching is the largest cost of the demo.
    assert_eq!(api.rows[0].last().unwrap(), "cuLaunchKernel");
}

/// Graphs traced per node (`--cuda-graph-trace=node`): the graph's 1000 kernels appear one by
/// one, so every way's every run shows up as kernels, each under a microsecond of GPU time.
#[test]
fn launch_gap_kernels_are_traced_per_graph_node() {
    let k = table("nsys-launch-gap", "cuda_gpu_kern_sum");
    assert_eq!(k.rows.len(), 1);
    assert_eq!(
        cell(&k, "bump", "Instances"),
        N_BACKENDS * WAYS * (WARMUP + REPS) * LAUNCHES
    );
    assert_eq!(cell(&k, "bump", "Instances"), 207_000.0);
    assert_eq!(cell(&k, "bump", "Avg"), 935.0);
    assert!(cell(&k, "bump", "Max") < 2000.0);
}

/// nvtx_sum: the three ways in order of cost, on every backend. A (sync after each) takes
/// the longest, then B (back-to-back), then C (one graph launch).
#[test]
fn launch_gap_ranges_order_the_three_ways() {
    let nvtx = table("nsys-launch-gap", "nvtx_sum");
    let total = |range: &str| cell(&nvtx, &format!("kernel-lab:{range}"), "Total Time");
    assert_eq!(total("launch gap A: sync after each [llvm]"), 217_983_692.0);
    for b in BACKENDS {
        let a = total(&format!("launch gap A: sync after each [{b}]"));
        let bb = total(&format!("launch gap B: back-to-back [{b}]"));
        let c = total(&format!("launch gap C: CUDA graph [{b}]"));
        assert!(a > 2.0 * bb && bb > c, "{b}: {a} {bb} {c}");
        let timed = |row: &str| total(&format!("{row} [{b}] f32 1000x4096: timed"));
        assert!(timed("bump_sync_each") > timed("bump_back_to_back"));
        assert!(timed("bump_back_to_back") > timed("bump_graph"));
        // The capture lies inside C's range.
        assert!(total(&format!("launch gap C: capture + instantiate [{b}]")) < c);
    }
    // Every range is one push/pop.
    let inst = nvtx.column("Instances").unwrap();
    assert!((0..nvtx.rows.len()).all(|r| nvtx.num(r, inst) == Some(1.0)));
    assert!(nvtx.rows.iter().all(|r| r[r.len() - 2] == "PushPop"));
}

/// "Launch overhead at a glance", as `cargo xtask nsys` prints it for the demo.
#[test]
fn launch_summary_of_the_launch_gap_demo() {
    let tables: Vec<StatsTable> = TABLES.iter().map(|r| table("nsys-launch-gap", r)).collect();
    assert_eq!(
        nsys_csv::launch_summary(&tables),
        [
            "cuLaunchKernel: 141,000 calls, 3.87 µs of CPU time each",
            "cuGraphLaunch: 69 calls, 719.99 µs of CPU time each",
            "cuStreamSynchronize: 69,009 calls, 5.45 µs of CPU time each",
            "cuEventSynchronize: 180 calls, 355.89 µs of CPU time each",
            "kernel bump: 207,000 launches, 0.94 µs of GPU time each",
        ]
    );
}

/// What the bench launches besides its rows (host/src/placement.rs): before the reductions it
/// ranks the result word's 64 candidate slots with v4 [llvm] f32 2^28, one untimed and five
/// timed launches per slot.
const PLACEMENT_LAUNCHES: f64 = 64.0 * (1.0 + 5.0);

/// The whole bench: where its GPU time goes, and CUB's kernels under their full names.
#[test]
fn bench_kernel_and_api_tables() {
    let k = table("nsys-bench", "cuda_gpu_kern_sum");
    // The workflow's step 2 ("pick the kernel with the largest total time"): in the bench
    // that is the FMA ceiling kernel, then the launch-gap demo's 207,000 bumps.
    assert_eq!(k.rows[0].last().unwrap(), "fma_peak_f32");
    assert_eq!(k.rows[1].last().unwrap(), "bump");
    assert_eq!(cell(&k, "bump", "Instances"), 207_000.0);
    let instances = |name: &str| cell(&k, name, "Instances");
    let runs = N_BACKENDS * (WARMUP + REPS);
    // v7 and transpose_v4 are Rust only (no nvcc twin).
    let rust = N_BACKENDS - 1.0;
    let rust_runs = rust * (WARMUP + REPS);
    // Each f32 row runs once more per backend, on the input whose sum is exact.
    for v in [1, 2, 3, 5, 6] {
        assert_eq!(instances(&format!("reduce_v{v}_f32")), runs + N_BACKENDS);
    }
    assert_eq!(
        instances("reduce_v4_f32"),
        runs + N_BACKENDS + PLACEMENT_LAUNCHES
    );
    assert_eq!(instances("reduce_v7_f32"), rust_runs + rust);
    for v in 1..=6 {
        assert_eq!(instances(&format!("reduce_v{v}_i32")), runs);
    }
    assert_eq!(instances("reduce_v7_i32"), rust_runs);
    // Transposes at two sizes.
    assert_eq!(instances("transpose_tiled_f32"), 2.0 * runs);
    assert_eq!(instances("transpose_v4_f32"), 2.0 * rust_runs);
    // CUB: a tile kernel and a single-block finish per call, f32 (23 runs and the exact-sum
    // one) and i32 (23), one backend.
    let cub: Vec<&Vec<String>> = k
        .rows
        .iter()
        .filter(|r| r.last().unwrap().starts_with("void cub::"))
        .collect();
    assert_eq!(cub.len(), 4);
    for r in &cub {
        let name = r.last().unwrap();
        let want = if name.contains("policy_hub<float,") {
            "24"
        } else {
            assert!(name.contains("policy_hub<int,"), "{name}");
            "23"
        };
        assert_eq!(r[2], want, "{name}");
    }
    assert_eq!(
        cub.iter()
            .filter(|r| r.last().unwrap().contains("DeviceReduceSingleTileKernel<"))
            .count(),
        2
    );
    // v1, v2 and v3 (f32) take the same GPU time, within 0.1 %: the chapter's point.
    let avg = |name: &str| cell(&k, name, "Avg");
    let v3 = avg("reduce_v3_f32");
    for v in ["reduce_v1_f32", "reduce_v2_f32"] {
        assert!((avg(v) / v3 - 1.0).abs() < 0.001, "{v}");
    }
    // CUB's four kernels go through the runtime (cudaLaunchKernel), ours through the driver.
    let api = table("nsys-bench", "cuda_api_sum");
    assert_eq!(
        cell(&api, "cudaLaunchKernel", "Num Calls"),
        2.0 * (24.0 + 23.0)
    );
    assert_eq!(cell(&api, "cuLaunchKernel", "Num Calls"), 143_106.0);
}

#[test]
fn render_shows_microseconds_and_matches_the_committed_text() {
    let committed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/nsys/c7486e2/nsys.txt"),
    )
    .unwrap();
    for prefix in ["nsys-launch-gap", "nsys-bench"] {
        for report in TABLES {
            let rendered = table(prefix, report).render();
            assert!(
                committed.contains(&rendered),
                "{prefix} {report} not in results/nsys/c7486e2/nsys.txt:\n{rendered}"
            );
        }
    }
    let t = table("nsys-launch-gap", "nvtx_sum").render();
    assert!(t.contains("Total Time (µs)"), "{t}");
    assert!(t.contains("217983.69"), "{t}");
    assert!(
        t.contains("kernel-lab:launch gap C: CUDA graph [llvm]"),
        "{t}"
    );
}

/// nsys may print notices above a table (on the console it does: `Generating SQLite file`);
/// the parser skips to the header.
#[test]
fn notices_before_the_header_are_skipped() {
    let real = text("nsys-launch-gap", "cuda_api_sum");
    let noisy = format!(
        "Generating SQLite file nsys-launch-gap.sqlite from nsys-launch-gap.nsys-rep\n\
         Processing [nsys-launch-gap.sqlite] with [cuda_api_sum.py]... PROCESSED\n{real}"
    );
    let t = nsys_csv::parse_stats("cuda_api_sum", &noisy).unwrap();
    let clean = table("nsys-launch-gap", "cuda_api_sum");
    assert_eq!(t.headers, clean.headers);
    assert_eq!(t.rows, clean.rows);
}

/// nsys skips a report that has no data; the real capture has none, so this one is made.
#[test]
fn a_skipped_report_is_an_empty_table_that_says_why() {
    let t = table("synthetic-nsys-empty", "nvtx_sum");
    assert!(t.rows.is_empty());
    assert!(
        t.note
            .as_deref()
            .unwrap()
            .contains("does not contain NV Tools Extension")
    );
    assert!(t.render().contains("(empty: SKIPPED"));
    // Printed summary of an empty set: nothing to say.
    assert!(nsys_csv::launch_summary(&[t]).is_empty());
}

// ---- Where the time goes: the verdicts on the 2026-11-30 capture --------------------------

use profiler::nsys::csv::{ApiCall, GpuOp, NvtxRange};
use profiler::nsys::{self, verdict};
use profiler::tools;
use std::os::unix::fs::PermissionsExt;
use verdict::{Kind, RangeVerdict, Timeline};

/// The verdicts of the capture's `<prefix>_*`, as `xtask nsys --from` computes them.
fn verdicts(prefix: &str) -> Vec<RangeVerdict> {
    let t = nsys::read_back(&capture().join(prefix)).unwrap();
    assert_eq!(t.verdict_note, None);
    t.verdicts
}

/// The verdict of the range named `kernel-lab:<range>` (exactly one).
fn range<'a>(vs: &'a [RangeVerdict], range: &str) -> &'a RangeVerdict {
    let name = format!("kernel-lab:{range}");
    let found: Vec<&RangeVerdict> = vs.iter().filter(|v| v.range == name).collect();
    assert_eq!(found.len(), 1, "{name}");
    found[0]
}

/// A (synchronize after each launch) and B (back to back) are dispatch-bound on every
/// backend, A more so: the GPU idles between 0.9 µs kernels for a median 8.4-10.4 µs in A,
/// 2.9-3.1 µs in B.
#[test]
fn launch_gap_a_and_b_read_dispatch_bound() {
    let vs = verdicts("nsys-launchgap");
    for b in BACKENDS {
        let a = range(&vs, &format!("launch gap A: sync after each [{b}]"));
        let bb = range(&vs, &format!("launch gap B: back-to-back [{b}]"));
        for v in [a, bb] {
            assert_eq!(v.kind, Kind::DispatchBound, "{v:?}");
            assert!(
                v.diagnosis.contains("graphs, fewer launches, fusion"),
                "{v:?}"
            );
            // Every run's kernels and its reset copy, and the verify copy.
            assert_eq!(v.ops, 23_024, "{}", v.range);
        }
        assert!(a.busy_share() < 0.10 && a.dispatch_share() > 0.89, "{a:?}");
        assert!(bb.busy_share() > 0.2 && bb.busy_share() < 0.25, "{bb:?}");
        assert!(bb.dispatch_share() > 0.75 && bb.dispatch_share() < a.dispatch_share());
        let (ma, mb) = (a.median_gap_ns.unwrap(), bb.median_gap_ns.unwrap());
        assert!((8_000.0..11_000.0).contains(&ma) && (2_500.0..3_500.0).contains(&mb));
        for (row, way) in [("bump_sync_each", a), ("bump_back_to_back", bb)] {
            for phase in ["warm-up", "timed"] {
                let v = range(&vs, &format!("{row} [{b}] f32 1000x4096: {phase}"));
                assert_eq!(v.kind, Kind::DispatchBound, "{v:?}");
                assert_eq!(v.level, 1);
            }
            // Verify: one small copy back and the CPU's check.
            let v = range(&vs, &format!("{row} [{b}] f32 1000x4096: verify"));
            assert_eq!((v.kind, v.ops), (Kind::HostBound, 1), "{v:?}");
            assert!(way.wall_ns > v.wall_ns);
        }
    }
    // The process's first half second: context and modules, no GPU work.
    let setup = range(&vs, "setup: CUDA context and modules");
    assert_eq!(
        (setup.kind, setup.ops, setup.busy_ns),
        (Kind::HostBound, 0, 0)
    );
}

/// This capture traced graphs as a whole (its `nsys profile` had no `--cuda-graph-trace=node`,
/// README): C's 1000-kernel replays are in none of the stats reports, only the copies that
/// reset the data are. So C cannot be judged, and says so instead of reading host-bound at
/// 0.1 % busy. `cargo xtask nsys` traces graphs per node.
#[test]
fn launch_gap_graph_traced_as_a_whole_is_unknown_not_host_bound() {
    let vs = verdicts("nsys-launchgap");
    for b in BACKENDS {
        let c = range(&vs, &format!("launch gap C: CUDA graph [{b}]"));
        assert_eq!(
            (c.kind, c.untraced_graph_launches),
            (Kind::Unknown, 23),
            "{c:?}"
        );
        assert!(c.busy_share() < 0.01, "{c:?}");
        assert!(c.diagnosis.contains("--cuda-graph-trace=node"), "{c:?}");
        let timed = range(&vs, &format!("bump_graph [{b}] f32 1000x4096: timed"));
        assert_eq!(timed.untraced_graph_launches, 20);
        let warm = range(&vs, &format!("bump_graph [{b}] f32 1000x4096: warm-up"));
        assert_eq!(warm.untraced_graph_launches, 3);
        // Capturing and instantiating the graph runs nothing on the GPU.
        let cap = range(&vs, &format!("launch gap C: capture + instantiate [{b}]"));
        assert_eq!((cap.kind, cap.ops), (Kind::HostBound, 0));
    }
    // 3 backends × 23 replays, so the whole run is unknown too.
    let whole = &vs[0];
    assert_eq!(whole.range, verdict::WHOLE_RUN);
    assert_eq!(
        (whole.kind, whole.untraced_graph_launches),
        (Kind::Unknown, 69)
    );
    // Every bump the capture holds (A and B: 3 × 2 × 23 × 1000) is inside the whole run.
    let kern = nsys_csv::parse_stats(
        "cuda_gpu_kern_sum",
        &std::fs::read_to_string(capture().join("nsys-launchgap_cuda_gpu_kern_sum.csv")).unwrap(),
    )
    .unwrap();
    assert_eq!(cell(&kern, "bump", "Instances"), 138_000.0);
    assert_eq!(whole.ops, 138_219);
}

/// The bench of reduce_v6, reduce_v7 and CUB at 2^28: every warm-up and timed range is
/// kernel-bound and names its own kernel; the f32 verify relaunches the kernel on the input
/// whose sum is exact (kernel-bound too), the i32 verify only copies the result back and
/// checks it on the CPU (host-bound).
#[test]
fn bench_rows_at_2p28_read_kernel_bound() {
    let vs = verdicts("nsys-bench");
    let rows = [
        ("reduce_v6", &["llvm", "nvvm", "nvcc"][..], "reduce_v6"),
        ("reduce_v7", &["llvm", "nvvm"][..], "reduce_v7"),
        ("cub_reduce_sum", &["cub"][..], "DeviceReduceKernel"),
    ];
    let mut judged = 0;
    for (row, backends, kernel) in rows {
        for b in backends {
            for dtype in ["f32", "i32"] {
                let name = |phase: &str| format!("{row} [{b}] {dtype} 2^28: {phase}");
                let want = if kernel == "DeviceReduceKernel" {
                    kernel.to_string()
                } else {
                    format!("{kernel}_{dtype}")
                };
                for phase in ["warm-up", "timed"] {
                    let v = range(&vs, &name(phase));
                    assert_eq!(v.kind, Kind::KernelBound, "{v:?}");
                    assert!(v.busy_share() > 0.89, "{v:?}");
                    assert!(
                        v.diagnosis
                            .starts_with(&format!("kernel-bound → ncu on {want} (")),
                        "{v:?}"
                    );
                    judged += 1;
                }
                let verify = range(&vs, &name("verify"));
                let want_kind = if dtype == "f32" {
                    Kind::KernelBound
                } else {
                    Kind::HostBound
                };
                assert_eq!(verify.kind, want_kind, "{verify:?}");
            }
        }
    }
    assert_eq!(judged, 2 * 2 * (3 + 2 + 1));
    // The run as a whole is not in a kernel: 5.4 s of random inputs, the CPU references, a
    // 1 GiB copy to pageable host memory.
    assert_eq!(vs[0].kind, Kind::HostBound);
    assert!(vs[0].busy_share() < 0.25, "{:?}", vs[0]);
    assert_eq!(
        range(&vs, "setup: random inputs, 2^28").kind,
        Kind::HostBound
    );
}

/// One range by hand, from `nsys-bench_nvtx_pushpop_trace.csv` and
/// `nsys-bench_cuda_gpu_trace.csv.gz`: `reduce_v6 [llvm] f32 2^28: verify` runs from
/// 8,194,630,176 to 8,194,936,075 ns (305,899 ns), and four operations start inside it:
///
/// | start (ns)    | duration | what |
/// |---------------|---------:|------|
/// | 8,194,648,215 |    1,824 | memcpy Device-to-Host |
/// | 8,194,667,063 |      736 | memcpy Host-to-Device |
/// | 8,194,674,455 |  239,104 | reduce_v6_f32 |
/// | 8,194,924,599 |    1,408 | memcpy Device-to-Host |
///
/// Busy 243,072 ns (79.46 %); gaps 17,024, 6,656 and 11,040 ns (median 11,040, largest
/// 17,024, all ≤ 100 µs: 34,720 ns); 18,039 ns idle before the first operation and 10,068
/// after the last. 79.46 % ≥ 75 %: kernel-bound, reduce_v6_f32 with 239,104 / 243,072 = 98 %
/// of the GPU time.
#[test]
fn one_range_by_hand() {
    let vs = verdicts("nsys-bench");
    let v = range(&vs, "reduce_v6 [llvm] f32 2^28: verify");
    assert_eq!((v.start_ns, v.wall_ns), (8_194_630_176, 305_899));
    assert_eq!((v.busy_ns, v.ops, v.gaps), (243_072, 4, 3));
    assert_eq!(
        (v.median_gap_ns, v.max_gap_ns),
        (Some(11_040.0), Some(17_024))
    );
    assert_eq!(v.dispatch_gap_ns, 34_720);
    assert_eq!(v.busy_ns + v.dispatch_gap_ns + 18_039 + 10_068, v.wall_ns);
    assert_eq!(v.top, Some(("reduce_v6_f32".to_string(), 239_104)));
    assert_eq!(v.kind, Kind::KernelBound);
    assert_eq!(
        v.diagnosis,
        "kernel-bound → ncu on reduce_v6_f32 (98 % of GPU time)"
    );
}

/// An asynchronous program (PyTorch's eager mode): range `gemm` launches `gemm_kernel`, which
/// runs after the range ends, while the `copy_kernel` that range `copy` launched before fills
/// the GPU during it. The kernel to profile for `gemm` is its own, not the one that happened to
/// run meanwhile; a range that launched nothing keeps what ran inside it.
#[test]
fn an_asynchronous_range_names_the_kernel_it_launched() {
    let range = |name: &str, start, end| NvtxRange {
        name: name.into(),
        start,
        end,
        level: 0,
        tid: 1,
    };
    let call = |start, corr| ApiCall {
        start,
        end: start + 5,
        corr,
        tid: 1,
        graph_launch: false,
    };
    let op = |start, end, corr, name| GpuOp {
        start,
        end,
        corr,
        name,
    };
    let names = vec![
        "copy_kernel".to_string(),
        "void at::gemm_kernel<float>(float *)".to_string(),
    ];
    let t = Timeline::new(
        vec![
            range("copy", 0, 100),
            range("gemm", 100, 200),
            range("idle", 400, 500),
        ],
        // The copy runs 50..250, the gemm 250..350.
        vec![op(50, 250, 7, 0), op(250, 350, 8, 1)],
        names,
        vec![call(10, 7), call(110, 8)],
    );
    let vs = t.verdicts();
    let of = |r: &str| vs.iter().find(|v| v.range == r).unwrap();
    let gemm = of("gemm");
    assert_eq!(gemm.kind, Kind::KernelBound, "{gemm:?}");
    assert_eq!(
        gemm.top.as_ref().unwrap().0,
        "void at::gemm_kernel<float>(float *)"
    );
    // It ran after the range: its share of the launched work (all of it) of the busy time.
    assert_eq!(gemm.top.as_ref().unwrap().1, 100);
    assert_eq!(
        gemm.diagnosis,
        "kernel-bound → ncu on gemm_kernel (100 % of GPU time)"
    );
    // The copy range launched the copy and saw it run for 50 ns of its wall.
    let copy = of("copy");
    assert_eq!(copy.top, Some(("copy_kernel".to_string(), 50)));
    assert_eq!(of("idle").kind, Kind::HostBound);
}

/// PyTorch on the H200 (`fixtures/nsys/torch/`): each op of the profiled step names the kernel
/// its range launched, though the kernel runs after the range has ended.
#[test]
fn pytorchs_ops_name_their_own_kernels() {
    let dir = lab_fixtures().join("nsys/torch");
    let t = nsys::read_back(&dir.join("nsys-torch_lab")).unwrap();
    let step: Vec<&RangeVerdict> = t.verdicts.iter().filter(|v| v.level == 1).collect();
    let named: Vec<(&str, String)> = step
        .iter()
        .filter(|v| v.kind == Kind::KernelBound)
        .map(|v| {
            let top = v.top.as_ref().unwrap();
            (v.range.as_str(), profiler::names::function(&top.0))
        })
        .collect();
    assert_eq!(
        named,
        [
            (
                ":gemm bf16",
                "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT".to_string()
            ),
            (":softmax", "cunn_SoftMaxForwardReg".to_string()),
            (":layer norm", "vectorized_layer_norm_kernel".to_string()),
            (":sum", "reduce_kernel".to_string()),
            (":transpose copy", "elementwise_kernel".to_string()),
        ],
        "{step:#?}"
    );
}

/// As `xtask nsys` prints them: the table after the three tables and the launch summary,
/// with the thresholds (from the constants) under it.
#[test]
fn verdict_table_is_printed_first_with_its_thresholds_then_the_kernels_and_tables() {
    let t = nsys::read_back(&capture().join("nsys-bench")).unwrap();
    let (text, json, csv) = nsys::render(&[t], None).unwrap();
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("no {s} in\n{text}"));
    // The answer first: the verdicts, then the kernels worth opening, then nsys's tables.
    assert!(at("Where the time goes") < at("Top kernels by GPU time"));
    assert!(at("Top kernels by GPU time") < at("Launch overhead at a glance"));
    assert!(at("Launch overhead at a glance") < at("cuda_gpu_kern_sum:"));
    let rules = verdict::rules_text();
    assert!(at(&rules) < at("Top kernels by GPU time"));
    let busy = format!("≥ {:.0} %", 100.0 * verdict::KERNEL_BOUND_BUSY);
    let gap = format!("≤ {} µs", verdict::DISPATCH_GAP_NS / 1000);
    assert!(rules.contains(&busy) && rules.contains(&gap), "{rules}");
    let line = text
        .lines()
        .find(|l| l.starts_with("kernel-lab:reduce_v6 [llvm] f32 2^28: verify "))
        .unwrap();
    let cells: Vec<&str> = line
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cells[1..],
        [
            "0.306",
            "0.243",
            "79.5",
            "4",
            "11.04",
            "17.02",
            "kernel-bound → ncu on reduce_v6_f32 (98 % of GPU time)"
        ]
    );
    assert!(json.contains("\"kind\": \"kernel-bound\""));
    assert!(csv.contains(
        "nsys-bench,verdict,kernel-lab:reduce_v6 [llvm] f32 2^28: verify,0,8194630176,305899,\
         243072,79.5,4,3,11040,17024,34720,kernel-bound,"
    ));
}

/// A prefix captured before the traces were (the fixtures above): the tables as before, and
/// one line saying why there are no verdicts.
#[test]
fn tables_without_traces_say_why_there_are_no_verdicts() {
    let t = nsys::read_back(&fixtures().join("nsys-launch-gap")).unwrap();
    assert!(t.verdicts.is_empty());
    let note = t.verdict_note.clone().unwrap();
    assert!(
        note.contains("nsys-launch-gap_nvtx_pushpop_trace.csv (or .csv.gz) is missing"),
        "{note}"
    );
    let (text, _, _) = nsys::render(&[t], None).unwrap();
    assert!(text.contains(&format!("  ({note})\n")));
}

// ---- The rules on timelines made for the purpose ------------------------------------------

/// One range [0, 1 ms) on thread 1 and the operations given as (start, end, correlation id,
/// name index into `["k", "[CUDA memset]", "k2"]`); `graph_launch`: one cuGraphLaunch (id 7) at
/// 10 ns.
fn one_range(ops: &[(u64, u64, u64, usize)], graph_launch: bool) -> RangeVerdict {
    let ranges = vec![NvtxRange {
        name: "r".into(),
        start: 0,
        end: 1_000_000,
        level: 0,
        tid: 1,
    }];
    let mut ops: Vec<GpuOp> = ops
        .iter()
        .map(|&(start, end, corr, name)| GpuOp {
            start,
            end,
            corr,
            name,
        })
        .collect();
    ops.sort_by_key(|o| o.start);
    // Every non-graph operation's launch call: ids below 7 are direct launches.
    let mut calls: Vec<ApiCall> = (0..7)
        .map(|corr| ApiCall {
            start: 5,
            end: 6,
            corr,
            tid: 1,
            graph_launch: false,
        })
        .collect();
    if graph_launch {
        calls.push(ApiCall {
            start: 10,
            end: 20,
            corr: 7,
            tid: 1,
            graph_launch: true,
        });
    }
    let names = ["k", "[CUDA memset]", "k2"].map(String::from).to_vec();
    let t = Timeline::new(ranges, ops, names, calls);
    t.verdicts().pop().unwrap()
}

/// Kernels of `len` ns every `every` ns from 0 to 1 ms, with correlation id `corr`.
fn train(len: u64, every: u64, corr: u64) -> Vec<(u64, u64, u64, usize)> {
    (0..1_000_000 / every)
        .map(|i| (i * every, i * every + len, corr, 0))
        .collect()
}

#[test]
fn kernel_bound_from_three_quarters_busy() {
    let v = one_range(&train(750, 1000, 0), false);
    assert_eq!(v.busy_ns, 750_000);
    assert_eq!(v.kind, Kind::KernelBound);
    assert_eq!(v.diagnosis, "kernel-bound → ncu on k (100 % of GPU time)");
    let v = one_range(&train(749, 1000, 0), false);
    assert_eq!(v.kind, Kind::DispatchBound, "{v:?}");
    // Busy with copies: not a kernel to give ncu.
    let copies: Vec<_> = train(900, 1000, 0)
        .into_iter()
        .map(|(s, e, c, _)| (s, e, c, 1))
        .collect();
    assert_eq!(one_range(&copies, false).kind, Kind::CopyBound);
    // The largest single operation is a memset, but the kernels together take longer.
    let v = one_range(
        &[
            (0, 400_000, 0, 1),
            (400_000, 720_000, 1, 0),
            (720_000, 1_000_000, 2, 2),
        ],
        false,
    );
    assert_eq!((v.kernel_ns, v.copy_ns), (600_000, 400_000));
    assert_eq!(v.diagnosis, "kernel-bound → ncu on k (32 % of GPU time)");
}

#[test]
fn dispatch_gaps_end_at_100_us_and_must_hold_half_the_idle_time() {
    // Ten 1 µs kernels 100 µs apart: nine gaps of exactly 100 µs (dispatch), then idle to
    // the end of the range (about 9 % of the idle time is dispatch: host-bound).
    let spaced: Vec<_> = (0..10u64)
        .map(|i| (i * 101_000, i * 101_000 + 1000, 0, 0))
        .collect();
    let v = one_range(&spaced, false);
    assert_eq!((v.gaps, v.dispatch_gap_ns), (9, 900_000));
    assert_eq!(v.kind, Kind::DispatchBound, "{v:?}");
    // 1 ns more per gap and none counts.
    let wider: Vec<_> = (0..10u64)
        .map(|i| (i * 101_001, i * 101_001 + 1000, 0, 0))
        .collect();
    let v = one_range(&wider, false);
    assert_eq!((v.dispatch_gap_ns, v.kind), (0, Kind::HostBound));
    // Short gaps, but most of the range idle before the work starts.
    let late: Vec<_> = (0..100u64)
        .map(|i| (600_000 + i * 4000, 600_000 + i * 4000 + 1000, 0, 0))
        .collect();
    let v = one_range(&late, false);
    assert!(v.dispatch_gap_ns < (v.wall_ns - v.busy_ns) / 2);
    assert_eq!(v.kind, Kind::HostBound);
    assert!(
        v.diagnosis
            .starts_with("host-bound: the GPU waits on the CPU ")
    );
    // Nothing on the GPU at all.
    let v = one_range(&[], false);
    assert_eq!((v.kind, v.median_gap_ns), (Kind::HostBound, None));
}

/// A graph traced per node counts as traced whatever correlation id its kernels carry (the
/// graph launch's, or one no API call has); traced as a whole, nothing of it is there.
#[test]
fn graph_launches_need_their_kernels_in_the_trace() {
    for corr in [7, 1_000_000] {
        let v = one_range(&train(900, 1000, corr), true);
        assert_eq!((v.untraced_graph_launches, v.kind), (0, Kind::KernelBound));
    }
    // Only the reset memset (a direct call, id 3) in the range: unknown.
    let v = one_range(&[(0, 1000, 3, 1)], true);
    assert_eq!((v.untraced_graph_launches, v.kind), (1, Kind::Unknown));
    assert_eq!(
        v.diagnosis,
        "unknown: 1 graph launch not in the trace (trace with --cuda-graph-trace=node)"
    );
}

#[test]
fn kernel_names_as_ncu_matches_them() {
    let k = nsys_csv::parse_stats(
        "cuda_gpu_kern_sum",
        &std::fs::read_to_string(capture().join("nsys-bench_cuda_gpu_kern_sum.csv")).unwrap(),
    )
    .unwrap();
    let mut bases: Vec<String> = k
        .rows
        .iter()
        .map(|r| profiler::names::function(r.last().unwrap()))
        .collect();
    bases.sort();
    bases.dedup();
    assert_eq!(
        bases,
        [
            "DeviceReduceKernel",
            "DeviceReduceSingleTileKernel",
            "fma_peak_f32",
            "read_stream_f32",
            "reduce_v4_f32",
            "reduce_v6_f32",
            "reduce_v6_i32",
            "reduce_v7_f32",
            "reduce_v7_i32",
        ]
    );
}

// ---- nsys's importer without libdw.so.1 ------------------------------------------------------

/// What the importer printed on the H200 machine before libdw1 was installed.
fn importer_text() -> String {
    std::fs::read_to_string(capture().join("importer-nolibdw.txt")).unwrap()
}

const REMEDY: &str = "apt-get install libdw1 (or, without root, `apt-get download libdw1 \
                      libelf1`, `dpkg -x` them and put their usr/lib/x86_64-linux-gnu on \
                      LD_LIBRARY_PATH)";

#[test]
fn the_importers_own_message_names_the_library_and_the_remedy() {
    let text = importer_text();
    assert_eq!(tools::missing_library(&text), Some("libdw.so.1"));
    let importer = Path::new(
        "/opt/nvidia/nsight-compute/2025.3.1/host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter",
    );
    let line = tools::importer_diagnosis(importer, &text, false).unwrap();
    assert_eq!(
        line,
        format!(
            "nsys's importer ({}) cannot load libdw.so.1: {REMEDY}",
            importer.display()
        )
    );
    assert!(!line.contains('\n'));
    // With libdw1 installed it prints its version and succeeds: nothing to say.
    let ok = std::fs::read_to_string(capture().join("importer-withlibdw.txt")).unwrap();
    assert_eq!(tools::missing_library(&ok), None);
    assert_eq!(tools::importer_diagnosis(importer, &ok, true), None);
    assert_eq!(tools::library_remedy("libdw.so.1"), REMEDY);
}

/// nsys's own log names no library: the reason the console check alone never fired and the
/// importer has to be asked.
#[test]
fn nsys_itself_does_not_name_the_missing_library() {
    let log =
        std::fs::read_to_string(capture().join("nsys-nolibdw/nsys-launch-gap.nsys.log")).unwrap();
    assert!(log.contains("Importer error status: An unknown error occurred."));
    assert_eq!(tools::missing_library(&log), None);
    assert_eq!(tools::known_problem("nsys", &log), None);
    // What `xtask nsys` printed then, and the file it left behind.
    let printed = std::fs::read_to_string(capture().join("nsys-nolibdw.txt")).unwrap();
    assert!(
        printed.contains("error: nsys wrote no report ("),
        "{printed}"
    );
    assert!(printed.contains(".nsys-launch-gap.tmp471.qdstrm"));
}

/// The importer beside nsys, in Nsight Compute's layout and in Nsight Systems'.
#[test]
fn the_importer_is_found_beside_nsys() {
    let root = std::env::temp_dir().join(format!("xtask-importer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let exe = |p: &Path| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    let ncu = root.join("nsight-compute/2025.3.1/host");
    exe(&ncu.join("target-linux-x64/nsys"));
    exe(&ncu.join("linux-desktop-glibc_2_11_3-x64/QdstrmImporter"));
    let nsys = root.join("nsight-systems/2025.5.1");
    exe(&nsys.join("bin/nsys"));
    exe(&nsys.join("target-linux-x64/nsys"));
    exe(&nsys.join("host-linux-x64/QdstrmImporter"));
    let found = |p: PathBuf| tools::nsys_importer(&p).map(|i| i.canonicalize().unwrap());
    let canon = |p: PathBuf| Some(p.canonicalize().unwrap());
    assert_eq!(
        found(ncu.join("target-linux-x64/nsys")),
        canon(ncu.join("linux-desktop-glibc_2_11_3-x64/QdstrmImporter"))
    );
    for n in ["bin/nsys", "target-linux-x64/nsys"] {
        assert_eq!(
            found(nsys.join(n)),
            canon(nsys.join("host-linux-x64/QdstrmImporter"))
        );
    }
    assert_eq!(tools::nsys_importer(&root.join("nowhere/nsys")), None);
    std::fs::remove_dir_all(&root).unwrap();
}
