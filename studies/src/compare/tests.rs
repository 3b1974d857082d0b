//! compare on the committed H200 results files and ncu captures: what is paired, the
//! verdicts, the outputs, the predictions written back, and the one-line refusals.

use super::*;
use crate::compare::verdict::Verdict;

/// A committed results file: `results/bench/<name>`, or, for the runs only these tests read,
/// `xtask/tests/fixtures/bench/<name>.gz`.
fn bench(name: &str) -> String {
    let root = crate::util::root();
    let kept = root.join("results/bench").join(name);
    if kept.is_file() || !name.starts_with("nvidia-h200-") {
        return kept.display().to_string();
    }
    root.join("xtask/tests/fixtures/bench")
        .join(format!("{name}.gz"))
        .display()
        .to_string()
}

fn ncu_fixture(name: &str) -> PathBuf {
    crate::util::root()
        .join("xtask/tests/fixtures/ncu")
        .join(name)
}

/// The newest default run (3ce256b) and the one before it (22f8d10).
const NEWEST: &str = "nvidia-h200-default-20261130T092735Z.json";
const BEFORE: &str = "nvidia-h200-default-20261130T090757Z.json";

fn req(a: &str, b: Option<&str>) -> CompareRequest {
    CompareRequest {
        a: a.into(),
        b: b.map(String::from),
        backends: Vec::new(),
        dtypes: Vec::new(),
        kernels: Vec::new(),
        from: Vec::new(),
        size: None,
        transpose: None,
        reps: 20,
        max_seconds: 60.0,
        no_ncu: false,
        ncu_from: Vec::new(),
        predict: None,
        format: Format::Table,
        svg: None,
        output: None,
        lab: None,
        // No test reads or writes the real log.
        log: Some(std::env::temp_dir().join(format!("compare-no-log-{}.csv", std::process::id()))),
        lab_args: Vec::new(),
    }
}

fn verdicts(r: &Report) -> Vec<Verdict> {
    r.time.iter().map(|t| t.verdict).collect()
}

fn count(r: &Report, v: Verdict) -> usize {
    verdicts(r).into_iter().filter(|x| *x == v).count()
}

#[test]
fn two_runs_of_one_commit_read_the_same_for_most_rows() {
    // 482f9f83: two runs a minute apart of v7, v8, CUB and the ceilings.
    let r = compare(&req(
        &bench("nvidia-h200-custom-20261129T150150Z.json"),
        Some(&bench("nvidia-h200-custom-20261129T150214Z.json")),
    ))
    .unwrap()
    .report;
    assert_eq!(r.time.len(), 45);
    assert!(count(&r, Verdict::Same) >= 40, "{:?}", verdicts(&r));
    assert_eq!(r.axis, Axis::Runs);
    // 54d95997: the transposes run twice; the nvvm transposes move by 1 % between processes,
    // more than one process's range, and say so. Most rows still read the same.
    let r = compare(&req(
        &bench("nvidia-h200-custom-20261129T143836Z.json"),
        Some(&bench("nvidia-h200-custom-20261129T143912Z.json")),
    ))
    .unwrap()
    .report;
    assert!(
        count(&r, Verdict::Same) * 2 > r.time.len(),
        "{:?}",
        verdicts(&r)
    );
    // A file against itself: every row the same.
    let r = compare(&req(&bench(NEWEST), Some(&bench(NEWEST))))
        .unwrap()
        .report;
    let timed = r
        .time
        .iter()
        .filter(|t| t.a.n >= verdict::MIN_SAMPLES)
        .count();
    assert_eq!(count(&r, Verdict::Same), timed);
    // The graph-capture rows are one sample each: no verdict, said as such.
    assert!(
        r.time
            .iter()
            .filter(|t| t.a.n < verdict::MIN_SAMPLES)
            .all(|t| t.verdict == Verdict::NoVerdict && t.label.starts_with("bump_graph_capture"))
    );
}

#[test]
fn v3_against_v6_reads_faster_on_every_compiler_and_type() {
    let mut q = req("reduce_v3", Some("v6"));
    q.from = vec![PathBuf::from(bench(NEWEST))];
    let r = compare(&q).unwrap().report;
    // llvm, nvvm, nvcc × f32, i32 at 2^28.
    assert_eq!(
        r.time.len(),
        6,
        "{:?}",
        r.time.iter().map(|t| &t.label).collect::<Vec<_>>()
    );
    assert!(
        verdicts(&r).iter().all(|v| *v == Verdict::Faster),
        "{:?}",
        verdicts(&r)
    );
    let llvm = r
        .time
        .iter()
        .find(|t| t.label == "reduce_v3 → reduce_v6 [llvm] f32 2^28")
        .unwrap();
    // 1.91 ms against 0.25 ms: v6 about 7.7 times the speed.
    assert!((7.0..8.5).contains(&llvm.speedup), "{}", llvm.speedup);
    assert!(llvm.delta_pct < -85.0);
    assert_eq!((r.a.as_str(), r.b.as_str()), ("reduce_v3", "reduce_v6"));
    // And the other way round, slower.
    let mut q = req("v6", Some("v3"));
    q.from = vec![PathBuf::from(bench(NEWEST))];
    q.backends = vec![Backend::Nvcc];
    q.dtypes = vec![Dtype::I32];
    let r = compare(&q).unwrap().report;
    assert_eq!(verdicts(&r), [Verdict::Slower]);
}

#[test]
fn one_kernel_on_two_compilers_from_a_file() {
    let mut q = req("reduce_v4", None);
    q.backends = vec![Backend::Llvm, Backend::Nvcc];
    q.dtypes = vec![Dtype::F32];
    q.from = vec![PathBuf::from(bench(NEWEST))];
    let r = compare(&q).unwrap().report;
    assert_eq!(r.time.len(), 1);
    assert_eq!(r.time[0].label, "reduce_v4 [llvm → nvcc] f32 2^28");
    // README: 3359 against 3364 GB/s, a fraction of a percent apart.
    assert!(r.time[0].delta_pct.abs() < 1.0, "{:?}", r.time[0]);
    assert!(matches!(r.source, Source::Files { .. }));
}

#[test]
fn results_files_carry_their_commits_into_the_header() {
    let r = compare(&req(&bench(BEFORE), Some(&bench(NEWEST))))
        .unwrap()
        .report;
    let Source::Files { a, b } = &r.source else {
        panic!("files")
    };
    assert!(a.commit.starts_with("22f8d10"), "{a:?}");
    assert!(b.commit.starts_with("3ce256b"), "{b:?}");
    let text = render::text(&r);
    assert!(
        text.contains(
            "# A: xtask/tests/fixtures/bench/nvidia-h200-default-20261130T090757Z.json.gz (commit 22f8d1012a"
        ),
        "{text}"
    );
    assert!(text.contains("# rule: same within noise"), "{text}");
    assert!(
        text.contains("code: the same kernels on both sides"),
        "{text}"
    );
    assert!(
        text.contains("counters: not measured (results files hold times only"),
        "{text}"
    );
}

#[test]
fn json_and_csv_say_the_same_as_the_text() {
    let mut q = req("reduce_v3", Some("reduce_v6"));
    q.from = vec![PathBuf::from(bench(NEWEST))];
    q.backends = vec![Backend::Llvm];
    q.dtypes = vec![Dtype::F32];
    let r = compare(&q).unwrap().report;
    let json: serde_json::Value = serde_json::to_value(&r).unwrap();
    assert_eq!(json["schema_version"], SCHEMA_VERSION);
    assert_eq!(json["axis"]["kind"], "kernels");
    assert_eq!(json["time"][0]["verdict"], "faster");
    assert_eq!(json["time"][0]["rounds"][0]["verdict"], "faster");
    assert!(json["time"][0]["a"]["median_us"].as_f64().unwrap() > 1800.0);
    // The file measured no same-address roof, which v3's counts touch: no prediction, said.
    assert!(json["time"][0].get("predicted_delta_pct").is_none());
    assert!(
        r.notes.iter().any(
            |n| n.starts_with("predicted change: left out for 1 pair(s)") && n.contains("atomic")
        ),
        "{:?}",
        r.notes
    );
    assert_eq!(json["source"]["kind"], "files");
    let csv = render::csv(&r).unwrap();
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(
        rd.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "section",
            "pair",
            "metric",
            "a",
            "b",
            "change_pct",
            "verdict",
            "predicted_change_pct",
            "text"
        ]
    );
    let recs: Vec<csv::StringRecord> = rd.records().map(|x| x.unwrap()).collect();
    let median = recs
        .iter()
        .find(|x| &x[0] == "time" && &x[2] == "median_us")
        .unwrap();
    assert_eq!(&median[1], "reduce_v3 → reduce_v6 [llvm] f32 2^28");
    assert_eq!(&median[6], "faster");
    assert!(median[5].parse::<f64>().unwrap() < -85.0);
    // SASS statistics ride along when this tree's PTX and tools are here (as they are for asm).
    if !r.code.is_empty() {
        assert!(
            recs.iter()
                .any(|x| &x[0] == "sass" && &x[2] == "SASS instructions")
        );
    }
    let text = render::text(&r);
    assert!(
        text.contains("| reduce_v3 → reduce_v6 [llvm] f32 2^28"),
        "{text}"
    );
    assert!(text.contains("FASTER"), "{text}");
    let svg = svg::draw(&r).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("reduce_v3 → reduce_v6 [llvm] f32 2^28"));
    assert!(svg.contains("faster"));
}

#[test]
fn counters_from_the_h200_capture_check_a_prediction() {
    let mut q = req("reduce_v3", Some("reduce_v5"));
    q.from = vec![PathBuf::from(bench(NEWEST))];
    q.backends = vec![Backend::Llvm];
    q.dtypes = vec![Dtype::F32];
    q.ncu_from = vec![ncu_fixture("ncu-table-llvm.raw.csv.gz")];
    q.predict = Some(
        "inst down, smsp__inst_executed_op_shared_ld_pred_on_any.sum down 50%, blocks down 80%, \
         dram__bytes_read.sum down, time same"
            .into(),
    );
    let c = compare(&q).unwrap();
    let r = &c.report;
    assert_eq!(r.counters.len(), 1);
    let inst = r.counters[0].rows.iter().find(|x| x.key == "inst").unwrap();
    assert!(inst.change_pct.unwrap() < -80.0, "{inst:?}");
    assert!(
        r.counters_how
            .as_deref()
            .unwrap()
            .contains("ncu-table-llvm.raw.csv")
    );
    let p = &r.predictions[0];
    assert_eq!(p.source, "--predict");
    use claims::Outcome::*;
    let got: Vec<claims::Outcome> = p.checks.iter().map(|x| x.outcome).collect();
    // v5 at 2^28 is six times v3's speed (an eighth of the blocks, so of the same-address
    // atomics): "time same" misses; the capture has no dram__bytes_read: unmeasured.
    assert_eq!(
        got,
        [Held, Held, Held, Unmeasured, Missed],
        "{:?}",
        p.checks
    );
    assert!(p.summary.starts_with("missed 3/5"), "{}", p.summary);
    assert!(c.outcomes.is_empty(), "--predict is not written to the log");
    let text = render::text(r);
    assert!(text.contains("## Counters (read back from"), "{text}");
    assert!(text.contains("## Predictions"), "{text}");
}

#[test]
fn a_logged_prediction_is_checked_and_its_outcome_written_back() {
    let dir = std::env::temp_dir().join(format!("compare-log-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("log.csv");
    let entry = |backend: &str, file: &str, prediction: &str| Entry {
        date: "2026-11-30T09:27:35Z".into(),
        commit: "3ce256bd1924bad24ddb2fcc25d7198c1f27d003".into(),
        kernel: format!("read_stream f32 [{backend}] 2^28"),
        change: "read_stream: one 16-byte group per thread".into(),
        hypothesis: "a flat grid reads faster".into(),
        result: "-".into(),
        metrics: format!("median_us=1 file={file}"),
        prediction: prediction.into(),
        outcome: String::new(),
    };
    experiment_log::append(
        &log,
        &[
            entry("nvvm", NEWEST, "time down"),
            entry("llvm", NEWEST, "time down 2%"),
            // Another run's entry, and one without a prediction: neither is touched.
            entry("nvcc", BEFORE, "time down"),
            entry("nvcc", NEWEST, ""),
        ],
    )
    .unwrap();
    let mut q = req(&bench(BEFORE), Some(&bench(NEWEST)));
    q.kernels = vec!["read_stream".into()];
    q.log = Some(log.clone());
    q.format = Format::Json;
    run(&q).unwrap();
    let after = experiment_log::read(&log).unwrap();
    // E14 on the H200: the flat read stream is 3.9 % faster on nvvm, the same within noise on
    // llvm.
    assert!(
        after[0]
            .outcome
            .starts_with("held 1/1: time down (held: -3.9%)"),
        "{:?}",
        after[0]
    );
    assert!(
        after[1]
            .outcome
            .starts_with("missed 0/1: time down 2% (missed:"),
        "{:?}",
        after[1]
    );
    assert!(after[0].outcome.contains("(cargo xtask compare, "));
    assert_eq!(
        (after[2].outcome.as_str(), after[3].outcome.as_str()),
        ("", "")
    );
    // Checked once: a second compare finds nothing pending.
    let c = compare(&q).unwrap();
    assert!(c.outcomes.is_empty() && c.report.predictions.is_empty());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_plan_follows_the_arguments() {
    let p = plan(&req("reduce_v3", Some("reduce_v5"))).unwrap();
    let Plan::Live { axis, filter, a, b } = p else {
        panic!("live")
    };
    assert_eq!(
        axis,
        Axis::Kernels {
            a: "reduce_v3".into(),
            b: "reduce_v5".into()
        }
    );
    assert_eq!(
        (a.backends.clone(), b.kernel.as_str()),
        (vec![Backend::Llvm], "reduce_v5")
    );
    assert_eq!(filter.dtypes, [Dtype::F32]);
    let mut q = req("reduce_v4", None);
    q.backends = vec![Backend::Llvm, Backend::Nvcc];
    let Plan::Live { axis, a, b, .. } = plan(&q).unwrap() else {
        panic!("live")
    };
    assert_eq!(
        axis,
        Axis::Backends {
            kernel: "reduce_v4".into(),
            a: Backend::Llvm,
            b: Backend::Nvcc
        }
    );
    assert_eq!(
        (a.backends, b.backends),
        (vec![Backend::Llvm], vec![Backend::Nvcc])
    );
    let q = req(&bench(NEWEST), Some(&bench(BEFORE)));
    assert!(matches!(
        plan(&q).unwrap(),
        Plan::Files {
            axis: Axis::Runs,
            ..
        }
    ));
    // A fault and its twin: one element type each, so no type filter.
    let Plan::Live { filter, a, b, .. } =
        plan(&req("coalescing_fault", Some("coalescing_fixed"))).unwrap()
    else {
        panic!("live")
    };
    assert!(filter.dtypes.is_empty(), "{:?}", filter.dtypes);
    assert_eq!(
        (a.kernel.as_str(), b.kernel.as_str()),
        ("coalescing_fault", "coalescing_fixed")
    );
}

/// Every refusal: one line, saying what to do.
#[test]
fn refusals_are_one_line() {
    let err = |q: CompareRequest| {
        let e = match compare(&q) {
            Ok(_) => panic!("{q:?} was accepted"),
            Err(e) => format!("{e:#}"),
        };
        assert!(!e.contains('\n'), "{e}");
        e
    };
    let e = err(req("reduce_v99", Some("v3")));
    assert!(e.contains("'reduce_v99' matches no kernel; valid:"), "{e}");
    let e = err(req("reduce", Some("v3")));
    assert!(e.contains("'reduce' names"), "{e}");
    let e = err(req("reduce_v3_i32", Some("v5")));
    assert!(
        e.contains("name the kernel (reduce_v3) and pick the type with --dtype"),
        "{e}"
    );
    let e = err(req("reduce_v4", None));
    assert!(e.contains("add --backend llvm,nvcc"), "{e}");
    let mut q = req("reduce_v7", None);
    q.backends = vec![Backend::Llvm, Backend::Nvcc];
    let e = err(q);
    assert!(e.starts_with("reduce_v7 is not compiled by nvcc"), "{e}");
    let e = err(req("v3", Some(&bench(NEWEST))));
    assert!(e.contains("not one of each"), "{e}");
    let e = err(req(&bench(NEWEST), None));
    assert!(e.contains("needs a second results file"), "{e}");
    let mut q = req(&bench(NEWEST), Some(&bench(BEFORE)));
    q.predict = Some("inst sideways".into());
    assert!(err(q).contains("'sideways'"));
    // Mismatched rows: transpose_v5 in one file, not in the other.
    let mut q = req(
        &bench("nvidia-h200-custom-20261129T143836Z.json"),
        Some(&bench(NEWEST)),
    );
    q.kernels = vec!["transpose_v5".into()];
    let e = err(q);
    assert!(
        e.starts_with(
            "nothing to compare: no row of A has a partner in B (A: transpose_v5 [llvm] f32 "
        ),
        "{e}"
    );
    assert!(e.ends_with("; B: none)"), "{e}");
    let mut q = req(&bench(NEWEST), Some(&bench(BEFORE)));
    q.kernels = vec!["reduce_v99".into()];
    let e = err(q);
    assert!(
        e.starts_with("'reduce_v99' names no kernel of these files (they hold bump_back_to_back, "),
        "{e}"
    );
    let e = err(req(&bench("no-such-file.json"), Some(&bench(NEWEST))));
    assert!(e.contains("no-such-file.json"), "{e}");
}

/// The newest default run with the roofs it lacks given (the docs' same-address `red`, one
/// shared wavefront per SM per clock, 3 G empty blocks per second, C++'s 1.03 ns per block for
/// every tree alone; its own read stream, copy, FMA peak and launch), written where compare
/// reads it.
fn with_roofs(name: &str) -> PathBuf {
    let mut r = read(Path::new(&bench(name))).unwrap();
    let mut roofs = catalog::model::check::roofs_of(&r).unwrap().roofs;
    roofs.atomic_same_ns = Some(1.81);
    roofs.shared_wavefronts_per_s = Some(132.0 * 1.98e9);
    roofs.blocks_per_s = Some(3e9);
    for t in catalog::kernels::Tree::ALL {
        for d in ["f32", "i32"] {
            roofs.tree_ns.insert(format!("{}_{d}", t.roof()), 1.03);
        }
    }
    r.roofs = Some(roofs);
    let dir = std::env::temp_dir().join(format!("compare-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&r).unwrap()).unwrap();
    path
}

#[test]
fn the_model_predicts_each_pairs_change_beside_the_measured_one() {
    // Two committed runs, B with its roofs: one kernel against itself is predicted unchanged
    // whatever the runs measured, since both sides are predicted against B's roofs.
    let mut q = req(
        &bench(BEFORE),
        Some(&with_roofs(NEWEST).display().to_string()),
    );
    q.kernels = vec!["reduce_v4".into()];
    // The model has no i32 same-address rate, so i32 reductions are left out.
    q.dtypes = vec![Dtype::F32];
    let r = compare(&q).unwrap().report;
    assert!(!r.time.is_empty());
    for t in &r.time {
        assert_eq!(t.predicted_delta_pct, Some(0.0), "{}", t.label);
    }

    // v3 (one red per block: 2^20 x 1.81 ns) against v6 (the read stream): -87 % predicted,
    // -87 % measured, in every output.
    let mut q = req("reduce_v3", Some("reduce_v6"));
    q.from = vec![with_roofs(NEWEST)];
    q.backends = vec![Backend::Llvm];
    q.dtypes = vec![Dtype::F32];
    let r = compare(&q).unwrap().report;
    let t = &r.time[0];
    let predicted = t.predicted_delta_pct.unwrap();
    assert!(
        (predicted - t.delta_pct).abs() < 3.0,
        "predicted {predicted:.1}% measured {:.1}%",
        t.delta_pct
    );
    let json: serde_json::Value = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json["time"][0]["predicted_delta_pct"].as_f64(),
        Some(predicted)
    );
    let text = render::text(&r);
    assert!(text.contains("| predicted |"), "{text}");
    assert!(text.contains(&format!("{predicted:+.1}%")), "{text}");
    let csv = render::csv(&r).unwrap();
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let median = rd
        .records()
        .map(|x| x.unwrap())
        .find(|x| &x[0] == "time" && &x[2] == "median_us")
        .unwrap();
    assert!((median[7].parse::<f64>().unwrap() - predicted).abs() < 0.01);
}

/// The H200 `profile --source` capture of reduce_v3, read back beside its raw pages: llvm's
/// hottest line is the load into shared memory (`reduce.rs:78`), nvcc's the same statement in
/// its twin (`kernels.cu`), each with its text, in the text, JSON and CSV alike.
#[test]
fn hot_lines_from_the_h200_source_capture() {
    let capture = crate::util::root().join("xtask/tests/fixtures/ncu/profile-source");
    let mut q = req("reduce_v3", None);
    q.backends = vec![Backend::Llvm, Backend::Nvcc];
    q.dtypes = vec![Dtype::F32];
    q.from = vec![PathBuf::from(bench(BEFORE))];
    q.ncu_from = ["llvm", "nvcc"]
        .map(|b| capture.join(format!("profile-reduce_v3-{b}.raw.csv.gz")))
        .to_vec();
    let r = compare(&q).unwrap().report;
    assert_eq!(r.hot_lines.len(), 1, "{:?}", r.notes);
    let lines = &r.hot_lines[0].lines;
    let top = |pct: fn(&code::HotLine) -> f64| {
        lines
            .iter()
            .max_by(|x, y| pct(x).total_cmp(&pct(y)))
            .unwrap()
    };
    let (a, b) = (top(|h| h.a_pct), top(|h| h.b_pct));
    assert_eq!(a.location, "reduce.rs:78");
    assert!(a.a_pct > 30.0 && a.b_pct == 0.0, "{a:?}");
    assert!(b.location.starts_with("kernels.cu:"), "{b:?}");
    assert!(b.text.contains("in[i]"), "{b:?}");
    assert!(lines.len() <= HOT_LINES);
    assert!(
        !r.notes.iter().any(|n| n.starts_with("hot lines")),
        "{:?}",
        r.notes
    );
    let text = render::text(&r);
    assert!(
        text.contains("## Hot lines: reduce_v3 [llvm → nvcc]"),
        "{text}"
    );
    assert!(text.contains("| reduce.rs:78 "), "{text}");
    let csv = render::csv(&r).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.starts_with("hot_line,") && l.contains("reduce.rs:78")),
        "{csv}"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json["hot_lines"][0]["lines"][0]["text"],
        lines[0].text.as_str()
    );
}

/// Raw pages without Source pages beside them: the counters are read, the hot lines say why
/// they are missing.
#[test]
fn hot_lines_say_why_without_a_source_page() {
    let mut q = req("reduce_v3", Some("reduce_v5"));
    q.from = vec![PathBuf::from(bench(NEWEST))];
    q.backends = vec![Backend::Llvm];
    q.dtypes = vec![Dtype::F32];
    q.ncu_from = vec![ncu_fixture("ncu-table-llvm.raw.csv.gz")];
    let r = compare(&q).unwrap().report;
    assert!(r.hot_lines.is_empty());
    let note = r.notes.iter().find(|n| n.starts_with("hot lines")).unwrap();
    assert!(note.contains("no Source page"), "{note}");
}
