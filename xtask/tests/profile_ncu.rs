//! The ncu side of `cargo xtask profile` / `ncu-table` / `ncu-transpose`, on captured output:
//! the raw-page parser, the chapter's predictions, the diagnosis rules, and the metric names.
//!
//! Fixtures in `tests/fixtures/ncu/`: files named `synthetic-*` are hand-made in ncu's real
//! formats, to be joined by the H200 capture of `gpu/profile.sh` (same names without the
//! prefix). Tests on synthetic files check exact values; tests on real files, when present,
//! check that every planned kernel and every requested metric came back.

#[allow(dead_code)]
#[path = "../src/profiler/mod.rs"]
mod profiler;

use profiler::capture;
use profiler::diagnose::{self, RULES};
use profiler::metrics::{self as m, Row};
use profiler::ncu_csv::{self, Profiled, Value};
use profiler::predict::{self, Expect, Status, Tol};
use profiler::report::TableReport;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ncu")
}

fn read(name: &str) -> Vec<Row> {
    capture::read_capture(&[fixtures().join(name)]).unwrap()
}

/// A row with just these metrics, for one rule at a time.
fn row(metrics: &[(&str, f64)]) -> Row {
    let mut p = Profiled {
        kernel: "k".into(),
        ..Profiled::default()
    };
    for (name, v) in metrics {
        p.metrics.insert(name.to_string(), Value::Num(*v));
    }
    Row::new(p, "llvm")
}

fn rules_fired(r: &Row) -> Vec<&'static str> {
    diagnose::diagnose(r).iter().map(|f| f.rule).collect()
}

// ---------------------------------------------------------------------------------------------
// Parser

#[test]
fn raw_page_parses_ids_units_separators_and_text() {
    let rows = read("synthetic-ncu-table-llvm.raw.csv");
    assert_eq!(rows.len(), 6);
    let v1 = &rows[0];
    assert_eq!(v1.profiled.kernel, "reduce_v1_f32");
    assert_eq!(v1.label, "reduce_v1 [llvm]");
    assert_eq!(v1.profiled.block, "(256, 1, 1)");
    assert_eq!(v1.profiled.id, 0);
    // "54,525,952" with separators.
    assert_eq!(v1.m(m::INST), Some(54_525_952.0));
    assert_eq!(v1.m(m::DURATION), Some(58_112.0));
    assert_eq!(v1.profiled.units[m::DURATION], "ns");
    assert_eq!(
        v1.profiled.metrics["launch__func_cache_config"],
        Value::Text("CachePreferNone".into())
    );
    // From the manifest beside the CSV.
    assert_eq!(v1.verified, Some(true));
    assert_eq!(v1.manifest_blocks, Some(65536.0));
}

#[test]
fn scaled_units_are_normalised_and_prof_lines_skipped() {
    // The nvvm fixture writes durations in usecond after a ==PROF== line.
    let rows = read("synthetic-ncu-table-nvvm.raw.csv");
    assert_eq!(rows.len(), 6);
    let v1 = &rows[0];
    assert_eq!(v1.backend, "nvvm");
    assert!((v1.m(m::DURATION).unwrap() - 58_460.0).abs() < 1e-6);
    assert_eq!(v1.profiled.units[m::DURATION], "ns");
}

#[test]
fn not_a_raw_page_is_an_error_and_an_empty_one_is_empty() {
    assert!(ncu_csv::parse_raw("hello,world\n1,2\n").is_err());
    assert!(
        ncu_csv::parse_raw("==WARNING== No kernels were profiled.\n")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn na_values_are_text_not_numbers() {
    let rows = read("synthetic-profile-reduce_v3-llvm.raw.csv");
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(
        r.m("sm__sass_thread_inst_executed_op_fadd_pred_on.sum"),
        None
    );
    assert_eq!(r.m("launch__registers_per_thread"), Some(16.0));
}

#[test]
fn function_names_are_cut_from_any_kernel_name_base() {
    assert_eq!(m::function_name("reduce_v3_f32"), "reduce_v3_f32");
    assert_eq!(m::function_name("reduce_v3_f32()"), "reduce_v3_f32");
    assert_eq!(
        m::function_name(
            "void cub::CUB_300000_SM_900::DeviceReduceKernel<Policy, float*>(float*, int)"
        ),
        "DeviceReduceKernel"
    );
    assert_eq!(m::kernel_name("transpose_tiled_f32"), "transpose_tiled");
    assert_eq!(m::kernel_name("reduce_v3_i32"), "reduce_v3_i32");
}

// ---------------------------------------------------------------------------------------------
// Capture plumbing (no GPU: the pieces that decide what ncu is asked and how rows are matched)

fn planned(kernel: &str, entry: &str, backend: &str) -> capture::Planned {
    capture::Planned {
        kernel: kernel.into(),
        entry: entry.into(),
        backend: backend.into(),
    }
}

#[test]
fn nvtx_jobs_group_by_backend_and_launch_skip_jobs_are_per_kernel() {
    let plan = vec![
        planned("reduce_v1", "reduce_v1_f32", "llvm"),
        planned("reduce_v1", "reduce_v1_f32", "nvvm"),
        planned("reduce_v2", "reduce_v2_f32", "llvm"),
        planned("reduce_v2", "reduce_v2_f32", "nvvm"),
    ];
    let jobs = capture::jobs("ncu-table", &plan, capture::Select::Nvtx);
    let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["ncu-table-llvm", "ncu-table-nvvm"]);
    assert_eq!(jobs[0].launches.len(), 2);
    let jobs = capture::jobs("ncu-table", &plan, capture::Select::LaunchSkip);
    assert_eq!(jobs.len(), 4);
    assert_eq!(jobs[1].name, "ncu-table-reduce_v1-nvvm");
}

fn settings(select: capture::Select) -> capture::Settings {
    capture::Settings {
        ncu: "ncu".into(),
        lab: "dist/lab".into(),
        clock_control: "none".into(),
        cache_control: "all".into(),
        select,
        out_dir: "results/profile".into(),
        collect: capture::Collect {
            set: None,
            sections: vec!["LaunchStats"],
            metrics: vec![m::DURATION.into(), m::INST.into()],
        },
        size_args: vec!["--size".into(), "16777216".into()],
    }
}

fn args(cmd: &std::process::Command) -> Vec<String> {
    cmd.get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn ncu_command_selects_the_profile_range_or_skips_the_warm_up() {
    let job = capture::Job {
        name: "ncu-table-llvm".into(),
        backend: "llvm".into(),
        launches: vec![planned("reduce_v3", "reduce_v3_f32", "llvm")],
    };
    let a = args(&capture::ncu_command(
        &settings(capture::Select::Nvtx),
        &job,
        Path::new("out/r"),
        Path::new("out/m.json"),
    ));
    let s = a.join(" ");
    assert!(
        s.starts_with("--clock-control none --cache-control all"),
        "{s}"
    );
    assert!(
        s.contains("--nvtx --nvtx-include kernel-lab@profile/"),
        "{s}"
    );
    assert!(
        s.contains(
            "--section LaunchStats --metrics gpu__time_duration.sum,smsp__inst_executed.sum"
        ),
        "{s}"
    );
    assert!(
        s.ends_with(
            "dist/lab run --kernel reduce_v3 --backend llvm --size 16777216 --manifest out/m.json"
        ),
        "{s}"
    );
    let s = args(&capture::ncu_command(
        &settings(capture::Select::LaunchSkip),
        &job,
        Path::new("out/r"),
        Path::new("out/m.json"),
    ))
    .join(" ");
    assert!(
        s.contains("--kernel-name reduce_v3_f32 --launch-skip 1 --launch-count 1"),
        "{s}"
    );
    assert!(!s.contains("--nvtx"), "{s}");
}

#[test]
fn cub_is_always_selected_by_its_nvtx_range() {
    let job = capture::Job {
        name: "ncu-table-cub".into(),
        backend: "cub".into(),
        launches: vec![planned("cub", "cub::DeviceReduce::Sum", "cub")],
    };
    let s = args(&capture::ncu_command(
        &settings(capture::Select::LaunchSkip),
        &job,
        Path::new("r"),
        Path::new("m"),
    ))
    .join(" ");
    assert!(s.contains("--nvtx-include kernel-lab@profile/"), "{s}");
    assert!(s.contains("run --kernel cub --backend both"), "{s}");
}

#[test]
fn rows_must_match_the_plan_once_each() {
    let job = capture::Job {
        name: "t".into(),
        backend: "llvm".into(),
        launches: vec![
            planned("reduce_v1", "reduce_v1_f32", "llvm"),
            planned("reduce_v2", "reduce_v2_f32", "llvm"),
        ],
    };
    let p = |k: &str| Profiled {
        kernel: k.into(),
        ..Profiled::default()
    };
    let ok = capture::match_rows(&job, vec![p("reduce_v1_f32"), p("reduce_v2_f32")], None).unwrap();
    assert_eq!(ok[1].label, "reduce_v2 [llvm]");
    let e = capture::match_rows(&job, vec![p("reduce_v1_f32")], None).unwrap_err();
    assert!(e.to_string().contains("lacks reduce_v2_f32"), "{e}");
    let e = capture::match_rows(
        &job,
        vec![p("reduce_v1_f32"), p("reduce_v1_f32"), p("reduce_v2_f32")],
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("2 times"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Predictions

fn reductions() -> Vec<Row> {
    capture::read_capture(&[
        fixtures().join("synthetic-ncu-table-llvm.raw.csv"),
        fixtures().join("synthetic-ncu-table-nvvm.raw.csv"),
    ])
    .unwrap()
}

#[test]
fn reduction_predictions_on_the_synthetic_capture() {
    let rows = reductions();
    // Kernel by kernel, backends side by side.
    assert_eq!(rows[0].label, "reduce_v1 [llvm]");
    assert_eq!(rows[1].label, "reduce_v1 [nvvm]");
    let checks = predict::evaluate(&rows, &m::reduction_columns(), &predict::reductions());
    let find = |label: &str, col: &str| {
        checks
            .iter()
            .find(|c| c.label == label && c.column == col)
            .unwrap_or_else(|| panic!("no check {label} {col}"))
    };
    // 95 = the chapter's 94 plus thread 0's final s[0] read: inside the ±2 tolerance.
    assert_eq!(
        find("reduce_v1 [llvm]", "sh_ld_req_per_block").status,
        Status::Held
    );
    assert_eq!(
        find("reduce_v1 [llvm]", "sh_ld_req_per_block").measured,
        Some(95.0)
    );
    assert_eq!(
        find("reduce_v2 [llvm]", "sh_ld_conflicts_per_block").status,
        Status::Held
    );
    assert_eq!(find("reduce_v2 [llvm]", "top_stall").status, Status::Held);
    assert_eq!(find("reduce_v4 [llvm]", "inst").status, Status::Held);
    assert_eq!(find("reduce_v6 [nvvm]", "inst").status, Status::Held);
    // The synthetic capture puts the instructions per warp at 103-121: off, with the reason.
    let off = find("reduce_v1 [nvvm]", "inst_per_warp");
    assert_eq!(off.status, Status::Off);
    assert_eq!(off.expected, "88 ±15%");
    assert!(off.reason.as_deref().unwrap().contains("nvcc's SASS"));
    let (held, off, missing) = predict::tally(&checks);
    assert_eq!((held, off, missing), (50, 6, 0));
}

#[test]
fn a_relation_to_a_missing_kernel_is_not_measured_rather_than_off() {
    let rows: Vec<Row> = reductions()
        .into_iter()
        .filter(|r| r.kernel != "reduce_v3")
        .collect();
    let checks = predict::evaluate(&rows, &m::reduction_columns(), &predict::reductions());
    let c = checks
        .iter()
        .find(|c| c.label == "reduce_v1 [llvm]" && c.column == "inst")
        .unwrap();
    assert_eq!(c.status, Status::Missing);
}

#[test]
fn tolerances_are_applied_as_stated() {
    let mut r = row(&[(m::CTAS, 10.0), (m::SH_LD_REQ, 970.0)]);
    r.kernel = "reduce_v1".into();
    r.label = "reduce_v1 [llvm]".into();
    let pred = |v, tol| predict::Prediction {
        kernel: "reduce_v1",
        column: "sh_ld_req_per_block",
        expect: Expect::Near(v, tol),
        source: "test",
        if_off: Some("why"),
    };
    let cols = m::reduction_columns();
    let status = |p| predict::evaluate(std::slice::from_ref(&r), &cols, &[p])[0].status;
    assert_eq!(status(pred(94.0, Tol::Abs(3.0))), Status::Held); // 97 vs 94 ±3
    assert_eq!(status(pred(94.0, Tol::Abs(2.0))), Status::Off);
    assert_eq!(status(pred(90.0, Tol::Rel(0.1))), Status::Held);
    assert_eq!(status(pred(80.0, Tol::Rel(0.1))), Status::Off);
}

#[test]
fn transpose_predictions_scale_with_the_matrix() {
    let p = predict::transposes(4096, 4096);
    let conflicts = p
        .iter()
        .find(|p| p.kernel == "transpose_tiled" && p.column == "sh_ld_conflicts")
        .unwrap();
    assert_eq!(conflicts.expect, Expect::Near(16_252_928.0, Tol::Rel(0.05)));
    let requests = p
        .iter()
        .find(|p| p.kernel == "transpose_padded" && p.column == "sh_ld_req")
        .unwrap();
    assert_eq!(requests.expect, Expect::Near(524_288.0, Tol::Rel(0.01)));
    let rows = read("synthetic-ncu-transpose-llvm.raw.csv");
    let checks = predict::evaluate(&rows, &m::transpose_columns(), &p);
    assert!(
        checks.iter().all(|c| c.status == Status::Held),
        "{checks:#?}"
    );
    assert_eq!(checks.len(), 16);
}

#[test]
fn table_report_marks_deviations_and_prints_every_format() {
    let rows = reductions();
    let preds = predict::reductions();
    let report = TableReport::build(
        "ncu-table",
        "t".into(),
        vec![],
        &rows,
        &m::reduction_columns(),
        &preds,
    );
    let text = report.text(&preds);
    assert!(text.contains("104.0 (88)!"), "{text}");
    assert!(text.contains("95.0 (94)"), "{text}");
    assert!(text.contains("50 held, 6 off"), "{text}");
    let csv = report.csv();
    assert!(
        csv.starts_with("table,label,kernel,backend,column,value,expected,status,source,reason")
    );
    assert!(
        csv.contains("ncu-table,reduce_v1 [nvvm],reduce_v1,nvvm,inst_per_warp,120,88 ±15%,OFF,")
    );
    let json: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), 12);
    assert_eq!(json["rows"][0]["regime"], "latency-bound");
}

// ---------------------------------------------------------------------------------------------
// Diagnosis rules, one at a time

#[test]
fn regime_quadrants() {
    let regime = |sm, mem, dram| {
        diagnose::regime_of(&row(&[
            (m::SM_PCT, sm),
            (m::MEM_PCT, mem),
            (m::DRAM_PCT, dram),
        ]))
        .unwrap()
    };
    assert_eq!(regime(85.0, 30.0, 20.0), "compute-bound");
    assert_eq!(regime(20.0, 90.0, 88.0), "memory-bound (DRAM)");
    assert_eq!(
        regime(20.0, 90.0, 30.0),
        "memory-bound (L1/L2, DRAM well below)"
    );
    assert_eq!(regime(30.0, 40.0, 35.0), "latency-bound");
    assert_eq!(regime(80.0, 80.0, 75.0), "roofline crossover");
    assert_eq!(diagnose::regime_of(&row(&[])), None);
    let f = &diagnose::diagnose(&row(&[(m::SM_PCT, 30.0), (m::MEM_PCT, 40.0)]))[0];
    assert!(
        f.evidence.contains("compute (SM) 30.0 %, memory 40.0 %"),
        "{}",
        f.evidence
    );
}

#[test]
fn coalescing_fires_on_wasted_sectors() {
    let naive = row(&[
        (m::GST_SECTORS, 32.0 * 1000.0),
        (m::GST_REQ, 1000.0),
        (m::GST_BYTES_PER_SECTOR, 4.0),
        (m::GLD_SECTORS, 4000.0),
        (m::GLD_REQ, 1000.0),
        (m::GLD_BYTES_PER_SECTOR, 32.0),
    ]);
    let f = diagnose::diagnose(&naive);
    let c = f.iter().find(|f| f.rule == "coalescing").unwrap();
    assert!(
        c.evidence
            .contains("global stores: 32 sectors/request, 4 of 32 bytes used"),
        "{}",
        c.evidence
    );
    assert!(!c.evidence.contains("loads"));
    // 16-byte vector loads: 16 sectors/request, every byte used. Not a fault.
    let v4 = row(&[
        (m::GLD_SECTORS, 16000.0),
        (m::GLD_REQ, 1000.0),
        (m::GLD_BYTES_PER_SECTOR, 32.0),
    ]);
    assert!(!rules_fired(&v4).contains(&"coalescing"));
    // Without the SASS metric, sectors per request decide.
    let bare = row(&[(m::GST_SECTORS, 32000.0), (m::GST_REQ, 1000.0)]);
    assert!(rules_fired(&bare).contains(&"coalescing"));
}

#[test]
fn bank_conflicts_fire_above_one_and_a_half_wavefronts() {
    let tiled = row(&[
        (m::SH_LD_WAVEFRONTS, 32.0 * 100.0),
        (m::SH_LD_REQ, 100.0),
        (m::SH_LD_CONFLICTS, 3100.0),
    ]);
    let f = diagnose::diagnose(&tiled);
    let b = f.iter().find(|f| f.rule == "bank-conflicts").unwrap();
    assert!(
        b.evidence
            .contains("32 wavefronts/request, 3,100 conflicts"),
        "{}",
        b.evidence
    );
    assert!(b.fix.contains("pad"));
    let padded = row(&[(m::SH_LD_WAVEFRONTS, 100.0), (m::SH_LD_REQ, 100.0)]);
    assert!(!rules_fired(&padded).contains(&"bank-conflicts"));
}

#[test]
fn occupancy_names_the_limiter() {
    let regs = row(&[
        (m::ACHIEVED_OCC, 23.0),
        (m::THEORETICAL_OCC, 25.0),
        ("launch__occupancy_limit_registers", 2.0),
        ("launch__occupancy_limit_shared_mem", 8.0),
        ("launch__occupancy_limit_warps", 8.0),
        ("launch__occupancy_limit_blocks", 32.0),
        (m::REGISTERS, 128.0),
    ]);
    let f = diagnose::diagnose(&regs);
    let o = f.iter().find(|f| f.rule == "occupancy").unwrap();
    assert_eq!(o.verdict, "occupancy capped by registers");
    assert!(
        o.evidence.contains("128 registers/thread"),
        "{}",
        o.evidence
    );
    // Full theoretical occupancy, achieved far below it.
    let uneven = row(&[(m::ACHIEVED_OCC, 40.0), (m::THEORETICAL_OCC, 100.0)]);
    let f = diagnose::diagnose(&uneven);
    assert_eq!(
        f.iter().find(|f| f.rule == "occupancy").unwrap().verdict,
        "achieved occupancy well below theoretical"
    );
    let fine = row(&[(m::ACHIEVED_OCC, 90.0), (m::THEORETICAL_OCC, 100.0)]);
    assert!(!rules_fired(&fine).contains(&"occupancy"));
}

#[test]
fn dominant_stall_with_expected_memory_wait() {
    let s = |r: &str| m::stall_metric(r);
    let bound = row(&[
        (&s("long_scoreboard"), 20.0),
        (&s("barrier"), 1.0),
        (&s("selected"), 30.0),
        (m::DRAM_PCT, 90.0),
    ]);
    let f = diagnose::diagnose(&bound);
    let st = f.iter().find(|f| f.rule == "stall").unwrap();
    // "selected" is issuing, not a stall.
    assert!(
        st.verdict.starts_with("dominant stall: long_scoreboard"),
        "{}",
        st.verdict
    );
    assert!(st.fix.contains("expected"), "{}", st.fix);
    assert!(
        st.evidence.starts_with("95 % of all stalls"),
        "{}",
        st.evidence
    );
    let starved = row(&[(&s("long_scoreboard"), 20.0), (m::DRAM_PCT, 30.0)]);
    let f = diagnose::diagnose(&starved);
    assert!(
        f.iter()
            .find(|f| f.rule == "stall")
            .unwrap()
            .fix
            .contains("loads in flight")
    );
}

#[test]
fn tail_effect_and_undersized_grids() {
    let verdict = |waves| {
        diagnose::diagnose(&row(&[(m::WAVES, waves)]))
            .into_iter()
            .find(|f| f.rule == "tail")
            .map(|f| f.verdict)
    };
    assert_eq!(
        verdict(0.5).as_deref(),
        Some("undersized grid: it cannot fill the GPU")
    );
    assert_eq!(
        verdict(1.1).as_deref(),
        Some("tail effect: the last wave is partial")
    );
    assert_eq!(verdict(1.0), None); // v6: exactly one wave
    assert_eq!(verdict(1.9), None);
    assert_eq!(verdict(62.06), None);
}

#[test]
fn spills_and_divergence() {
    let spill = row(&[(m::LOCAL_LD_BYTES, 4096.0), (m::LOCAL_ST_BYTES, 4096.0)]);
    assert!(rules_fired(&spill).contains(&"spills"));
    let none = row(&[(m::LOCAL_LD_BYTES, 0.0), (m::LOCAL_ST_BYTES, 0.0)]);
    assert!(!rules_fired(&none).contains(&"spills"));
    assert!(rules_fired(&row(&[(m::THREADS_PER_INST, 14.0)])).contains(&"divergence"));
    assert!(!rules_fired(&row(&[(m::THREADS_PER_INST, 31.0)])).contains(&"divergence"));
}

#[test]
fn rules_table_is_in_reading_order_and_complete() {
    let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    assert_eq!(
        ids,
        [
            "regime",
            "coalescing",
            "bank-conflicts",
            "occupancy",
            "stall",
            "tail",
            "spills",
            "divergence"
        ]
    );
    assert!(RULES.iter().all(|r| !r.when.is_empty()));
    let text = diagnose::rules_text();
    assert!(text.contains("[bank-conflicts]") && text.contains("pad the tile"));
}

#[test]
fn diagnosis_of_the_synthetic_captures() {
    let rows = read("synthetic-ncu-transpose-llvm.raw.csv");
    assert!(rules_fired(&rows[0]).contains(&"coalescing")); // naive
    assert!(rules_fired(&rows[1]).contains(&"bank-conflicts")); // tiled
    let padded = rules_fired(&rows[2]);
    assert!(
        !padded.contains(&"bank-conflicts") && !padded.contains(&"coalescing"),
        "{padded:?}"
    );
    let v3 = &read("synthetic-profile-reduce_v3-llvm.raw.csv")[0];
    assert_eq!(rules_fired(v3), ["regime", "stall", "divergence"]);
    let text = profiler::report::profile_text(v3);
    assert!(text.contains("limiter: warps (8 blocks/SM)"), "{text}");
    assert!(
        text.contains("loads 1,638,400 requests, 1 wavefronts/request, 0 conflicts"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// Metric names

/// Every name passed to `--metrics` exists for the H200 (`ncu --query-metrics --chip gh100`).
/// The list is read from `$NCU_METRICS_LIST` or the project's shared reference; without it
/// the test says so and passes.
#[test]
fn requested_metrics_exist_on_gh100() {
    let path = std::env::var_os("NCU_METRICS_LIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../shared/reference/ncu-metrics-gh100.txt")
        });
    let Ok(list) = std::fs::read_to_string(&path) else {
        eprintln!(
            "skipped: no metric list at {} (set NCU_METRICS_LIST)",
            path.display()
        );
        return;
    };
    // First column; some names carry a `Unit.Config.` prefix.
    let known: std::collections::HashSet<&str> = list
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|n| n.rsplit('.').next().unwrap_or(n))
        .collect();
    let mut missing = Vec::new();
    for name in m::diagnosis() {
        let base = name.split('.').next().unwrap();
        if !known.contains(base) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "not in {}: {missing:?}", path.display());
}

// ---------------------------------------------------------------------------------------------
// Real captures from the H200 (gpu/profile.sh), when they have been committed

#[test]
fn real_captures_parse_and_carry_every_requested_metric() {
    let Ok(dir) = std::fs::read_dir(fixtures()) else {
        return;
    };
    let mut seen = 0;
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("synthetic-") || !name.ends_with(".raw.csv") {
            continue;
        }
        seen += 1;
        let rows = capture::read_capture(&[e.path()]).unwrap();
        assert!(!rows.is_empty(), "{name}: no rows");
        let wanted = if name.starts_with("ncu-table") {
            m::reduction_table()
        } else if name.starts_with("ncu-transpose") {
            m::transpose_table()
        } else {
            m::diagnosis()
        };
        for r in &rows {
            for metric in &wanted {
                assert!(
                    r.profiled.metrics.contains_key(metric),
                    "{name}: {} lacks {metric}",
                    r.label
                );
            }
            assert!(
                diagnose::regime_of(r).is_some(),
                "{name}: {} has no regime",
                r.label
            );
            assert_ne!(
                r.verified,
                Some(false),
                "{name}: {} failed verification",
                r.label
            );
        }
        if name.starts_with("ncu-table") {
            let checks = predict::evaluate(&rows, &m::reduction_columns(), &predict::reductions());
            assert!(
                checks.iter().all(|c| c.status != Status::Missing),
                "{name}: {checks:#?}"
            );
        }
    }
    eprintln!("{seen} real capture(s) checked");
}
