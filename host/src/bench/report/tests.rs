//! The report's tests: rows, ratios, the headline, the printers and the results file.

use super::print::note;
use super::*;
use crate::timing::Samples;
use catalog::records::Clocks;
use catalog::{Backend, Dtype, Family, Runner};

fn samples(ms: &[f64]) -> Samples {
    Samples::new(ms.to_vec())
}

fn reduce(kernel: &str, backend: &str, dtype: &str, ms: f64) -> Row {
    let n = 1u64 << 28;
    let size = "2^28".to_string();
    Row::new(
        Family::Reduce,
        kernel,
        rn(backend),
        dt(dtype),
        n,
        size.clone(),
        n * 4,
    )
    .compared_with(
        Some(target("read_stream", Dtype::F32, &size)),
        (backend != "cub").then(|| target("cub_reduce_sum", dt(dtype), &size)),
    )
    .passed(&samples(&[ms, ms, ms]), "exact")
}

fn rows() -> Vec<Row> {
    let n = 1u64 << 28;
    let read = |b: &str, ms| {
        Row::new(
            Family::Ceiling,
            "read_stream",
            rn(b),
            Dtype::F32,
            n,
            "2^28".into(),
            n * 4,
        )
        .passed(&samples(&[ms]), "read only")
    };
    vec![
        read("llvm", 0.25),
        read("nvvm", 0.5), // slower: the ceiling is the best of the two
        reduce("reduce_v6", "llvm", "f32", 0.5),
        reduce("reduce_v3", "llvm", "f32", 1.0),
        reduce("cub_reduce_sum", "cub", "f32", 0.4),
        Row::new(
            Family::Reduce,
            "reduce_v6",
            Backend::Llvm,
            Dtype::I32,
            n,
            "2^28".into(),
            n * 4,
        )
        .failed("sum 3 but the exact wrapping sum is 4"),
    ]
}

#[test]
fn bandwidth_is_bytes_over_the_median() {
    assert_eq!(gbps(1_000_000_000, 1000.0), 1.0);
    assert_eq!(gbps(4 << 28, 0.25), (4u64 << 28) as f64 / 0.25e-3 / 1e9);
    let r = &rows()[2];
    assert_eq!(r.median_us, Some(500.0));
    assert_eq!(r.gbps, Some(gbps(4 << 28, 0.5)));
    assert_eq!(r.us_per_launch, Some(500.0));
}

#[test]
fn noisy_when_the_spread_passes_five_percent() {
    assert!(!is_noisy(&samples(&[1.0, 1.02, 1.049])));
    assert!(is_noisy(&samples(&[1.0, 1.0, 1.06])));
    let r = Row::new(
        Family::Reduce,
        "k",
        Backend::Llvm,
        Dtype::F32,
        1,
        "1".into(),
        4,
    )
    .passed(&samples(&[2.0, 2.2, 1.9]), "ok");
    assert!(r.noisy);
    assert_eq!(
        (r.min_us, r.max_us, r.median_us),
        (Some(1900.0), Some(2200.0), Some(2000.0))
    );
    assert!((r.spread_pct.unwrap() - 15.0).abs() < 1e-9);
    // Every sample is kept, fastest first, in µs: the distribution `compare` reads.
    assert_eq!(r.samples_us, [1900.0, 2000.0, 2200.0]);
    assert!(r.failed("boom").samples_us.is_empty());
}

#[test]
fn ratios_use_the_best_ceiling_and_the_reference() {
    let mut r = rows();
    fill_ratios(&mut r);
    let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
    // v6 at 0.5 ms vs the best read stream at 0.25 ms: 50 %; vs CUB at 0.4 ms: 0.8.
    assert!(near(r[2].pct_of_ceiling, 50.0));
    assert!(near(r[2].vs_reference, 0.8));
    assert!(near(r[3].pct_of_ceiling, 25.0));
    assert!(near(r[3].vs_reference, 0.4));
    assert!(near(r[4].pct_of_ceiling, 62.5));
    assert_eq!(r[4].vs_reference, None);
    // Ceilings have no ceiling; failed rows get no ratio.
    assert_eq!(r[0].pct_of_ceiling, None);
    assert_eq!(r[5].pct_of_ceiling, None);
    assert_eq!(r[5].gbps, None);
}

#[test]
fn a_failed_reference_leaves_the_ratio_empty() {
    let mut r = rows();
    r[4] = r[4].clone().failed("boom");
    assert_eq!((r[4].gbps, r[4].median_us), (None, None));
    fill_ratios(&mut r);
    assert_eq!(r[2].vs_reference, None);
    assert!(r[2].pct_of_ceiling.is_some());
}

fn report() -> Report {
    let mut r = Report {
        schema_version: SCHEMA_VERSION,
        tool: "lab bench".into(),
        date: "2026-11-29T12:34:56Z".into(),
        command_line: "lab bench --out results/bench".into(),
        commit: "0123456789abcdef0123".into(),
        device: Device {
            name: "NVIDIA H200".into(),
            compute_capability: "9.0".into(),
            sm_count: 132,
            l2_bytes: 60 << 20,
            driver_version: Some("580.159.04".into()),
            driver_cuda: "13.0".into(),
            ..Device::default()
        },
        clocks_before: Clocks::default(),
        clocks_after: Clocks::default(),
        config: Config {
            mode: "default".into(),
            reps: 20,
            warmup: 3,
            ..Config::default()
        },
        rows: rows(),
        headline: Vec::new(),
        failed: 0,
        roofs: None,
    };
    finish(&mut r);
    r
}

#[test]
fn the_table_has_the_header_then_sections_and_never_a_speed_for_a_failed_row() {
    let r = report();
    assert_eq!(r.failed, 1);
    let t = table(&r, RoofRows::All);
    assert!(
        t.starts_with("# lab bench: NVIDIA H200 (sm_90, 132 SMs, L2 60.0 MiB"),
        "{t}"
    );
    assert!(t.contains("driver 580.159.04 (CUDA 13.0)"));
    // The answer first: the headline, the kernels, then what they are measured against.
    let headline = t.find("## Headline").unwrap();
    let red = t.find("## Reductions").unwrap();
    let ceil = t.find("## Ceilings").unwrap();
    assert!(headline < red && red < ceil, "{t}");
    let failed = t.lines().find(|l| l.contains("| i32")).unwrap();
    assert!(failed.contains("FAILED: sum 3"), "{failed}");
    assert!(
        !failed.contains("1074"),
        "a failed row shows no speed: {failed}"
    );
    let v6 = t[red..]
        .lines()
        .find(|l| l.contains("reduce_v6") && l.contains("f32"))
        .unwrap();
    // 2^30 bytes / 0.5 ms = 2147 GB/s, 50.0 % of the read ceiling, 0.800 x CUB.
    for cell in ["2147", "50.0", "0.800", "500.0"] {
        assert!(v6.contains(cell), "{cell} missing in {v6}");
    }
    assert!(t.contains("1 row(s) FAILED"));
    assert!(t.contains("## Headline"));
    // Fixed width: every line of a table has the same width.
    let reductions = &t[red..];
    let end = reductions[1..]
        .find("\n## ")
        .map_or(reductions.len(), |i| i + 1);
    let widths: Vec<usize> = reductions[..end]
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| l.chars().count())
        .collect();
    assert!(widths.windows(2).all(|w| w[0] == w[1]), "{widths:?}");
}

#[test]
fn headline_quotes_v6_against_cub_and_the_ceiling() {
    let r = report();
    let h = r.headline.join("\n");
    assert!(
        h.contains("best reduction f32 2^28 (hot L2): reduce_v6 [llvm] 2147 GB/s = 0.800 x CUB, 50.0% of the read ceiling"),
        "{h}"
    );
    assert!(h.contains("reduce_v6 [llvm] f32 2^28 (hot L2):"), "{h}");
    assert!(
        h.contains("cub_reduce_sum f32 2^28 (hot L2): 2684 GB/s, 62.5% of the read ceiling"),
        "{h}"
    );
    assert!(!h.contains("i32"), "failed rows are not quoted: {h}");
}

#[test]
fn headline_compares_rust_with_the_cpp_twin_but_never_crowns_it() {
    let mut rows = rows();
    // The C++ v3 is faster than anything Rust here: it must not be the "best reduction".
    rows.push(reduce("reduce_v3", "nvcc", "f32", 0.25));
    rows.push(reduce("reduce_v6", "nvcc", "f32", 1.0));
    let h = headline(&rows).join("\n");
    assert!(
        h.contains("best reduction f32 2^28 (hot L2): reduce_v6 [llvm]"),
        "the best is a Rust row: {h}"
    );
    assert!(
        h.contains(
            "Rust / C++ (nvcc) f32 2^28 (hot L2): reduce_v3 llvm 0.250; reduce_v6 llvm 2.000"
        ),
        "{h}"
    );
    // Without C++ rows, no comparison line.
    assert!(!headline(&self::rows()).join("\n").contains("Rust / C++"));
}

/// Transpose rows of one square shape, each compared with the driver's copy of it.
fn transposes(edge: u64, copy_us: f64, kernels: &[(&str, &str, f64)]) -> Vec<Row> {
    let (e, shape) = (edge * edge, format!("{edge}x{edge}"));
    let row = |kernel: &str, backend: &str| {
        Row::new(
            Family::Transpose,
            kernel,
            rn(backend),
            Dtype::F32,
            e,
            shape.clone(),
            8 * e,
        )
    };
    let copy = target("d2d_copy", Dtype::F32, &shape);
    let mut rows = vec![row("d2d_copy", "driver").passed(&samples(&[copy_us * 1e-3]), "")];
    for &(kernel, backend, us) in kernels {
        rows.push(
            row(kernel, backend)
                .compared_with(Some(copy.clone()), Some(copy.clone()))
                .passed(&samples(&[us * 1e-3]), "exact"),
        );
    }
    fill_ratios(&mut rows);
    rows
}

#[test]
fn launch_dominated_transposes_are_not_compared() {
    let mut rows = transposes(
        3,
        2.2,
        &[
            ("transpose_naive", "llvm", 2.1),
            ("transpose_swizzled", "llvm", 2.3),
            ("transpose_naive", "nvcc", 2.2),
        ],
    );
    // At 3x3 the best transpose "beats" the copy: a ratio of two launch latencies.
    assert!(rows[1].vs_reference.unwrap() > 1.0);
    rows.extend(transposes(
        8192,
        126.0,
        &[
            ("transpose_swizzled", "llvm", 136.0),
            ("transpose_naive", "nvcc", 1000.0),
        ],
    ));
    let h = headline(&rows).join("\n");
    assert!(
        h.contains(
            "transposes at 3x3 (hot L2): launch-dominated (fastest median 2.10 us < 10 us), not compared"
        ),
        "{h}"
    );
    assert!(!h.contains("best transpose 3x3"), "{h}");
    assert!(!h.contains("(nvcc) 3x3"), "{h}");
    // A shape whose every row takes longer is compared as before.
    assert!(
        h.contains("best transpose 8192x8192 (hot L2): transpose_swizzled [llvm]"),
        "{h}"
    );
    assert!(!h.contains("8192x8192 (hot L2): launch-dominated"), "{h}");
}

#[test]
fn a_group_compared_with_a_launch_dominated_reference_is_not_compared() {
    // The kernels take 12 us or more, but the copy they are compared with takes 9.99.
    let h = headline(&transposes(
        1024,
        9.99,
        &[
            ("transpose_naive", "llvm", 40.0),
            ("transpose_swizzled", "llvm", 12.0),
        ],
    ))
    .join("\n");
    assert!(
        h.contains(
            "transposes at 1024x1024 (hot L2): launch-dominated (fastest median 9.99 us < 10 us)"
        ),
        "{h}"
    );
    assert!(!h.contains("best transpose"), "{h}");
    // At exactly the threshold, compared.
    let h = headline(&transposes(
        1024,
        10.0,
        &[("transpose_swizzled", "llvm", 12.0)],
    ))
    .join("\n");
    assert!(
        h.contains("best transpose 1024x1024 (hot L2): transpose_swizzled [llvm]"),
        "{h}"
    );
}

#[test]
fn launch_dominated_reductions_are_not_compared() {
    let n = 1u64 << 20;
    let size = "2^20".to_string();
    let row = |section, kernel: &str, backend: &str, us: f64| {
        Row::new(
            section,
            kernel,
            rn(backend),
            Dtype::F32,
            n,
            size.clone(),
            n * 4,
        )
        .compared_with(
            (section == Family::Reduce).then(|| target("read_stream", Dtype::F32, &size)),
            (section == Family::Reduce && backend != "cub")
                .then(|| target("cub_reduce_sum", Dtype::F32, &size)),
        )
        .passed(&samples(&[us * 1e-3]), "ok")
    };
    let small = |read_us: f64, cub_us: f64, v7_us: f64| {
        let mut rows = rows();
        rows.extend([
            row(Family::Ceiling, "read_stream", "llvm", read_us),
            row(Family::Reduce, "cub_reduce_sum", "cub", cub_us),
            row(Family::Reduce, "reduce_v9", "llvm", v7_us),
        ]);
        fill_ratios(&mut rows);
        headline(&rows).join("\n")
    };
    // CUB's two kernels against v7's one, at 2^20: launch costs, not bandwidth.
    let h = small(3.0, 7.5, 4.4);
    assert!(
        h.contains(
            "reductions f32 2^20 (hot L2): launch-dominated (fastest median 3.00 us < 10 us), not compared"
        ),
        "{h}"
    );
    assert!(!h.contains("best reduction f32 2^20"), "{h}");
    assert!(!h.contains("cub_reduce_sum f32 2^20"), "{h}");
    // The 2^28 group beside it is still compared.
    assert!(
        h.contains("best reduction f32 2^28 (hot L2): reduce_v6 [llvm]"),
        "{h}"
    );
    // Every reduction past the threshold, but the read ceiling it is compared with is not.
    let h = small(8.0, 30.0, 20.0);
    assert!(
        h.contains("reductions f32 2^20 (hot L2): launch-dominated (fastest median 8.00 us"),
        "{h}"
    );
    // Everything past the threshold: compared.
    let h = small(12.0, 30.0, 20.0);
    assert!(
        h.contains("best reduction f32 2^20 (hot L2): reduce_v9 [llvm]"),
        "{h}"
    );
    assert!(!h.contains("launch-dominated"), "{h}");
}

#[test]
fn json_round_trips_and_carries_the_schema_version() {
    let r = report();
    let text = json(&r);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema_version"], SCHEMA_VERSION);
    assert_eq!(v["rows"][5]["status"], "failed");
    assert_eq!(v["rows"][5]["gbps"], serde_json::Value::Null);
    assert_eq!(v["rows"][0]["section"], "ceiling");
    let back: Report = serde_json::from_str(&text).unwrap();
    assert_eq!(back.rows.len(), r.rows.len());
    for (b, a) in back.rows.iter().zip(&r.rows) {
        assert_eq!(
            (&b.kernel, b.status, &b.note),
            (&a.kernel, a.status, &a.note)
        );
        let close = |x: Option<f64>, y: Option<f64>| match (x, y) {
            (Some(x), Some(y)) => (x - y).abs() <= 1e-12 * y.abs(),
            (x, y) => x == y,
        };
        assert!(close(b.gbps, a.gbps) && close(b.vs_reference, a.vs_reference));
    }
}

#[test]
fn csv_has_one_line_per_row_under_a_header() {
    let r = report();
    let text = csv(&r);
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header = rd.headers().unwrap().clone();
    assert_eq!(&header[0], "section");
    assert!(header.iter().any(|h| h == "vs_reference"));
    assert!(!header.iter().any(|h| h == "samples_us"), "{header:?}");
    let recs: Vec<csv::StringRecord> = rd.records().map(|x| x.unwrap()).collect();
    assert_eq!(recs.len(), r.rows.len());
    let status = header.iter().position(|h| h == "status").unwrap();
    let gb = header.iter().position(|h| h == "gbps").unwrap();
    assert_eq!(&recs[5][status], "failed");
    assert_eq!(&recs[5][gb], "");
    let back: Vec<Row> = csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .map(|x| x.unwrap())
        .collect();
    assert_eq!(back[2].kernel, "reduce_v6");
    assert_eq!(back[2].vs_reference, r.rows[2].vs_reference);
}

#[test]
fn results_are_written_whole_under_a_stable_name() {
    let r = report();
    assert_eq!(r.file_stem(), "nvidia-h200-default-20261129T123456Z");
    let dir = std::env::temp_dir().join(format!("lab-bench-test-{}", std::process::id()));
    let path = write_results(&dir, &r).unwrap();
    assert_eq!(path, dir.join("nvidia-h200-default-20261129T123456Z.json"));
    let back: Report = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(back.rows.len(), r.rows.len());
    let txt = std::fs::read_to_string(path.with_extension("txt")).unwrap();
    assert_eq!(txt, table(&r, RoofRows::All));
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with('.')),
        "temp files left: {names:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn flops_give_gflops_and_a_compute_only_row_shows_them_in_the_note() {
    // No flops set: no GFLOP/s.
    assert_eq!(reduce("reduce_v6", "llvm", "f32", 0.5).gflops, None);
    let n = 1u64 << 28;
    let r = Row::new(
        Family::Reduce,
        "reduce_v6",
        Backend::Llvm,
        Dtype::F32,
        n,
        "2^28".into(),
        4 * n,
    )
    .with_flops(n - 1)
    .passed(&samples(&[0.5]), "ok");
    assert!((r.gflops.unwrap() - (n - 1) as f64 / 0.5e-3 / 1e9).abs() < 1e-9);
    assert_eq!(note(&r), "ok", "a row with GB/s keeps its note");
    let fma = Row::new(
        Family::Ceiling,
        "fma_peak",
        Backend::Llvm,
        Dtype::F32,
        1 << 20,
        "4096x256".into(),
        0,
    )
    .with_flops(60_000_000_000)
    .passed(&samples(&[1.0]), "no store");
    assert_eq!((fma.gbps, fma.gflops), (None, Some(60_000.0)));
    assert_eq!(note(&fma), "60000 GFLOP/s; no store");
    assert_eq!(fma.clone().failed("boom").gflops, None);
}

#[test]
fn a_results_file_written_before_flops_existed_still_reads() {
    let mut v: serde_json::Value = serde_json::from_str(&json(&report())).unwrap();
    for row in v["rows"].as_array_mut().unwrap() {
        let row = row.as_object_mut().unwrap();
        row.remove("flops");
        row.remove("gflops");
    }
    let back: Report = serde_json::from_value(v).unwrap();
    assert!(back.rows.iter().all(|r| r.flops == 0 && r.gflops.is_none()));
}

#[test]
fn numbers_are_formatted_by_size() {
    assert_eq!(fmt_us(3.4149), "3.41");
    assert_eq!(fmt_us(561.23), "561.2");
    assert_eq!(fmt_us(61234.4), "61234");
    assert_eq!(fmt_gbps(4337.2), "4337");
    assert_eq!(fmt_gbps(12.34), "12.3");
}

/// [`rows`] measured hot and again cold, the cold ones `slower` times slower each (the read
/// stream too, so every cold ratio differs from its hot one unless it is taken against the
/// cold ceiling and reference).
fn hot_and_cold(slower: &[(&str, f64)]) -> Vec<Row> {
    let hot = rows();
    let cold = hot.iter().map(|r| {
        let f = slower
            .iter()
            .find(|(k, _)| *k == r.kernel)
            .map_or(1.0, |x| x.1);
        let mut c = r.clone().with_cache(Cache::Cold);
        if let Some(us) = r.median_us {
            c = c.passed(&samples(&[us * f * 1e-3]), "");
        }
        c
    });
    let mut all: Vec<Row> = hot.iter().cloned().chain(cold).collect();
    fill_ratios(&mut all);
    all
}

#[test]
fn a_cold_row_is_compared_with_the_cold_ceiling_and_reference() {
    let rows = hot_and_cold(&[
        ("read_stream", 2.0),
        ("reduce_v6", 3.0),
        ("cub_reduce_sum", 2.5),
    ]);
    let find = |kernel: &str, cache: Cache| {
        rows.iter()
            .find(|r| r.kernel == kernel && r.dtype == Dtype::F32 && r.cache == cache)
            .unwrap()
    };
    let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
    // Hot as before: 0.5 ms against the read stream's 0.25 and CUB's 0.4.
    let hot = find("reduce_v6", Cache::Hot);
    assert!(near(hot.pct_of_ceiling, 50.0) && near(hot.vs_reference, 0.8));
    // Cold: 1.5 ms against the cold read stream's 0.5 and cold CUB's 1.0.
    let cold = find("reduce_v6", Cache::Cold);
    assert!(near(cold.pct_of_ceiling, 100.0 / 3.0), "{cold:?}");
    assert!(near(cold.vs_reference, 1.0 / 1.5), "{cold:?}");
    // A cold row without a cold ceiling gets no ratio, never the hot one's.
    let mut rows = rows.clone();
    rows.retain(|r| !(r.kernel == "read_stream" && r.cache == Cache::Cold));
    fill_ratios(&mut rows);
    let cold = rows
        .iter()
        .find(|r| r.kernel == "reduce_v6" && r.dtype == Dtype::F32 && r.cache == Cache::Cold)
        .unwrap();
    assert_eq!(cold.pct_of_ceiling, None);
}

fn both_report() -> Report {
    let mut r = report();
    r.config.cache = CacheMode::Both;
    r.config.l2_flush_bytes = Some(120 << 20);
    r.rows = hot_and_cold(&[("reduce_v6", 3.0)]);
    finish(&mut r);
    r
}

#[test]
fn every_table_header_says_its_cache() {
    let t = table(&report(), RoofRows::All);
    assert!(
        t.contains("\nhot L2: repeated launches on the same data"),
        "{t}"
    );
    assert!(t.contains("## Reductions, hot L2"), "{t}");
    assert!(!t.contains("cold"), "{t}");

    let t = table(&both_report(), RoofRows::All);
    assert!(
        t.contains(
            "\neach row hot L2, then cold L2; hot: repeated launches on the same data (an input \
             that fits in the L2 is read from it); cold: before every launch, warm-up included, \
             120.0 MiB (2 x the L2) written with cuMemsetD32Async, then read back by \
             read_stream (the L2 left holding clean lines), on the bench stream and waited \
             for, then the output's reset; outside the timing events\n"
        ),
        "{t}"
    );
    let at = |h: &str| t.find(h).unwrap_or_else(|| panic!("{h} missing:\n{t}"));
    // Each section hot, then cold, before the next section; the ceilings' rows last.
    assert!(at("## Reductions, hot L2") < at("## Reductions, cold L2"));
    assert!(at("## Reductions, cold L2") < at("## Ceilings (measured in this run), hot L2"));
    assert!(
        at("## Ceilings (measured in this run), hot L2")
            < at("## Ceilings (measured in this run), cold L2")
    );
    // The cold v6 row: 1.5 ms, 16.7 % of the cold read stream's 0.25 ms, 0.267 x cold CUB's
    // 0.4 ms.
    let cold = &t[at("## Reductions, cold L2")..];
    let v6 = cold
        .lines()
        .find(|l| l.contains("reduce_v6") && l.contains("f32"))
        .unwrap();
    for cell in ["1500", "16.7", "0.267"] {
        assert!(v6.contains(cell), "{cell} missing in {v6}");
    }
}

#[test]
fn the_headline_says_hot_then_cold() {
    let r = both_report();
    let h = &r.headline;
    let hot = h
        .iter()
        .position(|l| l.starts_with("best reduction f32 2^28 (hot L2): reduce_v6 [llvm] 2147 GB/s"))
        .unwrap_or_else(|| panic!("{h:#?}"));
    // Cold, v6 takes 1.5 ms: v3's 1.0 ms makes it the best Rust row there.
    let cold = h
        .iter()
        .position(|l| {
            l.starts_with("best reduction f32 2^28 (cold L2): reduce_v3 [llvm] 1074 GB/s")
        })
        .unwrap_or_else(|| panic!("{h:#?}"));
    assert!(hot < cold);
    assert!(
        h.iter()
            .all(|l| l.contains("(hot L2)") || l.contains("(cold L2)")),
        "{h:#?}"
    );
}

#[test]
fn csv_and_json_carry_each_rows_cache() {
    let r = both_report();
    let text = csv(&r);
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header = rd.headers().unwrap().clone();
    let cache = header.iter().position(|h| h == "cache").unwrap();
    let caches: Vec<String> = rd
        .records()
        .map(|x| x.unwrap()[cache].to_string())
        .collect();
    assert_eq!(caches.iter().filter(|c| *c == "hot").count(), 6);
    assert_eq!(caches.iter().filter(|c| *c == "cold").count(), 6);
    let v: serde_json::Value = serde_json::from_str(&json(&r)).unwrap();
    assert_eq!(v["config"]["cache"], "both");
    assert_eq!(v["config"]["l2_flush_bytes"], 120u64 << 20);
    assert_eq!(v["rows"][6]["cache"], "cold");
    // A hot-only report names no flush.
    let v: serde_json::Value = serde_json::from_str(&json(&report())).unwrap();
    assert_eq!(v["config"]["cache"], "hot");
    assert!(v["config"].get("l2_flush_bytes").is_none());
}

/// The roofs in the table: each roof row's rate in its note; after the kernels, one line per
/// roof with a column per compiler (every row with `--roof-rows`); in the JSON: the `roofs`
/// record, absent when no roof was measured.
#[test]
fn the_roofs_follow_the_kernels_one_column_per_compiler_and_are_in_the_json() {
    let mut r = report();
    let atomic = Row::new(
        Family::Ceiling,
        catalog::roofs::ATOMIC_SAME,
        Backend::Llvm,
        Dtype::F32,
        1 << 20,
        "2^20".into(),
        0,
    )
    .passed(&samples(&[1.9]), "word = 1048576 exactly");
    assert_eq!(note(&atomic), "1.812 ns per red; word = 1048576 exactly");
    r.rows.push(atomic);
    // Without the copy and the FMA peak there are no roofs to summarise.
    let text = table(&r, RoofRows::Summary);
    assert!(!text.contains("## Ceilings and roofs"), "{text}");
    assert!(!json(&r).contains("\"roofs\""));

    let n = 1u64 << 28;
    r.rows.push(
        Row::new(
            Family::Ceiling,
            catalog::roofs::D2D_COPY,
            Runner::Driver,
            Dtype::F32,
            n,
            "2^28".into(),
            2 * n * 4,
        )
        .passed(&samples(&[0.5]), "exact"),
    );
    for backend in ["llvm", "nvvm"] {
        r.rows.push(
            Row::new(
                Family::Ceiling,
                catalog::roofs::FMA_PEAK,
                rn(backend),
                Dtype::F32,
                2112 * 256,
                "2112x256".into(),
                0,
            )
            .with_flops(65 << 30)
            .passed(&samples(&[1.0]), "no store"),
        );
    }
    r.config.backends = vec![Backend::Llvm, Backend::Nvvm];
    r.roofs = Some(catalog::Roofs {
        read_bytes_per_s: 4.5e12,
        copy_bytes_per_s: 4.2e12,
        fma_flop_per_s: 6.5e13,
        atomic_same_ns: Some(1.812),
        atomic_same_slot: Some("slot 3 of 64".into()),
        ..Default::default()
    });
    let text = table(&r, RoofRows::Summary);
    let reductions = text.find("## Reductions").expect(&text);
    let roofs = text
        .find("## Ceilings and roofs, hot L2 (the fastest row of each, per compiler)")
        .expect(&text);
    assert!(reductions < roofs, "{text}");
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("| {name} ")))
            .unwrap_or_else(|| panic!("no {name} line:\n{text}"))
            .to_string()
    };
    let head = text
        .lines()
        .find(|l| l.starts_with("| roof "))
        .expect(&text);
    assert!(
        head.contains("llvm |") && head.ends_with("nvvm |"),
        "{head}"
    );
    // llvm's read stream 0.25 ms, nvvm's 0.5 ms: 4295 and 2147 GB/s; the driver's copy in both.
    let read = line("read stream, GB/s");
    assert!(read.contains("4295") && read.contains("2147"), "{read}");
    assert_eq!(
        line("D2D copy (read + written), GB/s")
            .matches("4295")
            .count(),
        2
    );
    let red = line("same-address red, ns each");
    assert!(red.contains("1.812") && red.contains(" - "), "{red}");
    // The rows themselves only on request.
    assert!(
        !text.contains("## Ceilings (measured in this run)"),
        "{text}"
    );
    assert!(
        text.contains("ceiling and roof rows: `--roof-rows` prints them"),
        "{text}"
    );
    let all = table(&r, RoofRows::All);
    assert!(
        all.find("## Ceilings (measured in this run), hot L2")
            .expect(&all)
            > roofs
    );
    let back: Report = serde_json::from_str(&json(&r)).unwrap();
    assert_eq!(back.roofs, r.roofs);
}

/// A fault row whose twin was measured on the same backend gets a headline line: its time
/// against the twin's, and the verdict its profile must get; a twin alone gets none.
#[test]
fn headline_sets_each_fault_against_its_twin() {
    let row = |kernel: &str, b: &str, ms: f64| {
        Row::new(
            Family::Faults,
            kernel,
            rn(b),
            Dtype::F32,
            0,
            "2^26".into(),
            1 << 29,
        )
        .passed(&samples(&[ms]), "all exact")
    };
    let h = headline(&[
        row("coalescing_fault", "llvm", 0.6),
        row("coalescing_fixed", "llvm", 0.1),
        row("coalescing_fixed", "nvvm", 0.1),
    ]);
    let lines: Vec<&String> = h.iter().filter(|l| l.contains("coalescing")).collect();
    assert_eq!(lines.len(), 1, "{h:?}");
    assert!(
        lines[0].starts_with("coalescing_fault [llvm] 2^26 (hot L2): 600.0 us against coalescing_fixed's 100.0 us (6.00 x)"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].ends_with("expected verdict coalescing"),
        "{}",
        lines[0]
    );
}

/// A test's runner, by name.
fn rn(name: &str) -> catalog::Runner {
    name.parse().unwrap()
}

/// A test's element type, by name.
fn dt(name: &str) -> catalog::Dtype {
    name.parse().unwrap()
}
