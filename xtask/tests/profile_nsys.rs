//! The nsys side of `cargo xtask nsys`: `nsys stats --format csv` tables, parsed and printed,
//! on the real H200 capture (`gpu/profile.sh`, nsys 2025.3.1, binaries of commit c7486e2,
//! 2026-11-30): the launch-gap demo
//! (`lab bench --kernel launch_gap`) and the whole bench (`lab bench`).
//!
//! Fixtures in `tests/fixtures/nsys/` (see its README): `nsys-launch-gap_<report>.csv`,
//! `nsys-bench_<report>.csv`, and `synthetic-nsys-empty_nvtx_sum.csv` (a report nsys skips,
//! which the real capture does not contain).

use std::path::{Path, PathBuf};
use xtask::profiler::nsys_csv::{self, REPORTS, StatsTable};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nsys")
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
        for report in REPORTS {
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
    let tables: Vec<StatsTable> = REPORTS
        .iter()
        .map(|r| table("nsys-launch-gap", r))
        .collect();
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
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/profile/nsys.txt"),
    )
    .unwrap();
    for prefix in ["nsys-launch-gap", "nsys-bench"] {
        for report in REPORTS {
            let rendered = table(prefix, report).render();
            assert!(
                committed.contains(&rendered),
                "{prefix} {report} not in results/profile/nsys.txt:\n{rendered}"
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
