//! The plots' shared fixture (a small synthetic results file) and the end-to-end test: every
//! chart written whole, with its series named in the SVG.

use super::*;

/// A small results file: a three-size sweep (2^20, 2^24, 2^28), both backends, f32 and i32,
/// CUB, the ceilings (fma_peak included), two transposes and their copy, one failed row.
pub fn synthetic() -> Report {
    let mut rows = Vec::new();
    let row = |section: &str,
               kernel: &str,
               backend: &str,
               dtype: &str,
               n: u64,
               size: &str,
               bytes: u64,
               gbps: f64| {
        serde_json::json!({
            "section": section, "kernel": kernel, "backend": backend, "dtype": dtype,
            "n": n, "size": size, "bytes": bytes, "launches": 1, "status": "ok", "reps": 20,
            "median_us": bytes as f64 / gbps / 1e3, "min_us": null, "max_us": null,
            "spread_pct": 1.0, "noisy": false, "gbps": gbps, "us_per_launch": null,
            "ceiling": null, "pct_of_ceiling": null, "reference": null,
            "vs_reference": null, "note": ""
        })
    };
    let mut fma = row(
        "ceiling",
        "fma_peak",
        "llvm",
        "f32",
        1 << 20,
        "4224x256",
        0,
        1.0,
    );
    fma["gbps"] = serde_json::Value::Null;
    fma["flops"] = 60_000_000_000u64.into();
    fma["gflops"] = 60_000.0.into();
    fma["median_us"] = 1000.0.into();
    rows.push(fma);
    for k in [20u32, 24, 28] {
        let n = 1u64 << k;
        let size = format!("2^{k}");
        let scale = k as f64 / 28.0;
        rows.push(row(
            "ceiling",
            "read_stream",
            "llvm",
            "f32",
            n,
            &size,
            4 * n,
            4400.0 * scale,
        ));
        rows.push(row(
            "ceiling",
            "read_stream",
            "nvvm",
            "f32",
            n,
            &size,
            4 * n,
            4300.0 * scale,
        ));
        rows.push(row(
            "ceiling",
            "d2d_copy",
            "driver",
            "f32",
            n,
            &size,
            8 * n,
            3900.0 * scale,
        ));
        for dtype in ["f32", "i32"] {
            for (v, g) in [
                ("reduce_v1", 900.0),
                ("reduce_v6", 4000.0),
                ("reduce_v5", 4200.0),
            ] {
                for b in ["llvm", "nvvm"] {
                    let mut r = row("reduce", v, b, dtype, n, &size, 4 * n, g * scale);
                    if dtype == "f32" {
                        r["flops"] = (n - 1).into();
                        r["gflops"] = ((n - 1) as f64 / (4 * n) as f64 * g * scale).into();
                    }
                    rows.push(r);
                }
            }
            rows.push(row(
                "reduce",
                "cub_reduce_sum",
                "cub",
                dtype,
                n,
                &size,
                4 * n,
                4100.0 * scale,
            ));
        }
    }
    let mut failed = row(
        "reduce",
        "reduce_v2",
        "llvm",
        "f32",
        1 << 28,
        "2^28",
        1 << 30,
        1.0,
    );
    failed["status"] = "failed".into();
    failed["gbps"] = serde_json::Value::Null;
    rows.push(failed);
    for edge in [4096u64, 8192] {
        let e = edge * edge;
        let shape = format!("{edge}x{edge}");
        rows.push(row(
            "transpose",
            "d2d_copy",
            "driver",
            "f32",
            e,
            &shape,
            8 * e,
            3900.0,
        ));
        for (v, g) in [("transpose_naive", 700.0), ("transpose_padded", 3000.0)] {
            for b in ["llvm", "nvvm"] {
                rows.push(row("transpose", v, b, "f32", e, &shape, 8 * e, g));
            }
        }
    }
    let doc = serde_json::json!({
        "schema_version": 1, "tool": "lab bench", "date": "2026-11-29T12:00:00Z",
        "command_line": "lab bench --sweep", "commit": "0123456789abcdef",
        "device": {"name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132,
                   "l2_bytes": 60u64 << 20, "memory_bytes": 150_000_000_000u64},
        "config": {"mode": "sweep"}, "rows": rows, "headline": [], "failed": 1
    });
    results::parse(&doc.to_string()).unwrap()
}

/// [`synthetic`] measured hot and cold (`--cache both`): every row again with the L2 flushed,
/// at half the bandwidth where the input fits in the L2 (n ≤ 2^23, here 2^20) and the same
/// beyond it.
pub fn synthetic_both() -> Report {
    let mut r = synthetic();
    r.config.cache = catalog::records::CacheMode::Both;
    r.config.l2_flush_bytes = Some(120 << 20);
    let cold: Vec<_> = r
        .rows
        .iter()
        .map(|x| {
            let mut c = x.clone().with_cache(Cache::Cold);
            if x.n <= 1 << 23 && x.gbps.is_some() {
                c.gbps = x.gbps.map(|g| g / 2.0);
                c.median_us = x.median_us.map(|t| t * 2.0);
            }
            c
        })
        .collect();
    r.rows.extend(cold);
    r
}

#[test]
fn every_chart_is_written_whole_with_its_series_named() {
    let r = synthetic();
    let dir = std::env::temp_dir().join(format!("xtask-plot-{}", std::process::id()));
    let charts = render_all(&r, &dir).unwrap();
    let names: Vec<String> = charts
        .iter()
        .map(|c| c.file.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in [
        "bandwidth-reduce-2pow20.svg",
        "bandwidth-reduce-2pow24.svg",
        "bandwidth-reduce-2pow28.svg",
        "bandwidth-transpose.svg",
        "sweep-f32.svg",
        "sweep-i32.svg",
        "roofline.svg",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    for c in &charts {
        let svg = std::fs::read_to_string(&c.file).unwrap();
        assert!(svg.starts_with("<svg"), "{}", c.file.display());
        assert!(svg.trim_end().ends_with("</svg>"), "{}", c.file.display());
        assert!(svg.contains(&c.title), "title of {}", c.file.display());
        for s in &c.series {
            assert!(
                svg.contains(s.as_str()),
                "series '{s}' not drawn in {}",
                c.file.display()
            );
        }
    }
    let svg = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
    let bars = svg("bandwidth-reduce-2pow28.svg");
    for s in [
        "llvm f32",
        "nvvm i32",
        "cub_reduce_sum f32",
        "read stream",
        "D2D copy",
        "reduce_v5",
    ] {
        assert!(bars.contains(s), "{s} missing from the 2^28 bars");
    }
    let sweep = svg("sweep-f32.svg");
    for s in [
        "reduce_v6 [llvm]",
        "reduce_v6 [nvvm]",
        "cub_reduce_sum",
        "L2 60.0 MiB (n = 2^23.9)",
    ] {
        assert!(sweep.contains(s), "{s} missing from the sweep");
    }
    let roof = svg("roofline.svg");
    for s in [
        "compute roof",
        "bandwidth roof",
        "reduce_v5 [nvvm]",
        "0.25 FLOP/B",
    ] {
        assert!(roof.contains(s), "{s} missing from the roofline");
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn colours_and_sizes() {
    assert_eq!(lighter(RGBColor(0, 100, 255)), RGBColor(127, 177, 255));
    assert_eq!(fmt_bytes(1073741824.0), "1.07 GB");
    assert_eq!(fmt_bytes(4096.0), "4.10 KB");
    let ks = vec!["reduce_v1".to_string(), "reduce_v6".to_string()];
    assert_eq!(kernel_color("reduce_v6", &ks), TAB10[1]);
    assert_eq!(kernel_color("cub_reduce_sum", &ks), BLACK);
}

#[test]
fn a_hot_and_cold_file_gets_each_cache_s_bars_and_one_sweep_with_both() {
    let r = synthetic_both();
    let dir = std::env::temp_dir().join(format!("xtask-plot-both-{}", std::process::id()));
    let charts = render_all(&r, &dir).unwrap();
    let names: Vec<String> = charts
        .iter()
        .map(|c| c.file.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in [
        "bandwidth-reduce-2pow20.svg",
        "bandwidth-reduce-2pow20-cold.svg",
        "bandwidth-transpose-cold.svg",
        "roofline.svg",
        "roofline-cold.svg",
        "sweep-f32.svg",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("sweep") && n.contains("cold")),
        "{names:?}"
    );
    let svg = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
    // Each chart says its cache; the cold bars show the cold rows only.
    assert!(svg("bandwidth-reduce-2pow20.svg").contains("2026-11-29T12:00:00Z, hot L2"));
    assert!(svg("bandwidth-reduce-2pow20-cold.svg").contains("2026-11-29T12:00:00Z, cold L2"));
    let sweep = svg("sweep-f32.svg");
    assert!(sweep.contains("hot and cold L2"), "the subtitle names both");
    for s in [
        "reduce_v6 [llvm], hot L2",
        "reduce_v6 [llvm], cold L2",
        "read stream (ceiling), cold L2",
    ] {
        assert!(sweep.contains(s), "{s} missing from the sweep");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
