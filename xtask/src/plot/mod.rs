//! SVG charts of a bench results file, drawn with plotters' SVG backend:
//!
//! - `bars`: bandwidth per kernel as bars (grouped by backend and element type, CUB its own
//!   bar), the measured ceilings as dashed lines: one chart per reduction size, one for the
//!   transposes.
//! - `sweep`: GB/s against n (log2 axis), one line per kernel and backend, the L2 size marked;
//!   from a `--sweep` results file (any file with three sizes or more).
//! - `roofline`: achieved GFLOP/s against arithmetic intensity, under the measured bandwidth
//!   roof (read stream) and compute roof (`fma_peak`).
//!
//! Each module turns the results into plain chart data first (tested without drawing), then
//! draws it. Files are written whole (temporary file, then rename).

pub mod bars;
pub mod results;
pub mod roofline;
pub mod sweep;

use anyhow::{Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use results::Results;
use std::path::{Path, PathBuf};

/// Canvas size of every chart, in pixels.
pub const SIZE: (u32, u32) = (1100, 660);
pub const FONT: &str = "sans-serif";

/// One chart written to disk, as `cargo xtask plot` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Chart {
    pub file: PathBuf,
    /// `bars`, `sweep` or `roofline`.
    pub kind: &'static str,
    pub title: String,
    /// The legend's entries, in order.
    pub series: Vec<String>,
}

/// A drawn chart before it is written: file name (no folder) and SVG text.
pub struct Drawn {
    pub name: String,
    pub svg: String,
    pub chart: Chart,
}

/// Draws every chart the results support and writes them into `out`; returns what was
/// written. A chart a file has no rows for is left out (a default run has no sweep).
pub fn render_all(r: &Results, out: &Path) -> Result<Vec<Chart>> {
    let mut drawn = Vec::new();
    for b in bars::reductions(r).into_iter().chain(bars::transposes(r)) {
        drawn.push(bars::draw(&b)?);
    }
    for s in sweep::sweeps(r) {
        drawn.push(sweep::draw(&s)?);
    }
    if let Some(f) = roofline::roofline(r) {
        drawn.push(roofline::draw(&f)?);
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut charts = Vec::new();
    for d in drawn {
        let path = out.join(&d.name);
        write_atomic(&path, d.svg.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        charts.push(Chart {
            file: path,
            ..d.chart
        });
    }
    Ok(charts)
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`, so a
/// reader (a browser, the README) never sees half a chart.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The areas of one canvas: a two-line title on top, a one-line caption at the bottom, the
/// chart between.
pub struct Frame<'a> {
    pub root: DrawingArea<SVGBackend<'a>, Shift>,
    pub chart: DrawingArea<SVGBackend<'a>, Shift>,
}

const TITLE_H: u32 = 56;
const CAPTION_H: u32 = 28;

/// A white canvas drawing into `buf`, with `title`, `subtitle` (the results' provenance) and
/// `caption` (how to read the chart) drawn.
pub fn frame<'a>(buf: &'a mut String, title: &str, subtitle: &str, caption: &str) -> Result<Frame<'a>> {
    let root = SVGBackend::with_string(buf, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, rest) = root.split_vertically(TITLE_H);
    let (chart, bottom) = rest.split_vertically(SIZE.1 - TITLE_H - CAPTION_H);
    top.draw_text(title, &(FONT, 22).into_font().style(FontStyle::Bold).color(&BLACK), (16, 8))?;
    top.draw_text(subtitle, &(FONT, 14).into_font().color(&RGBColor(90, 90, 90)), (16, 34))?;
    bottom.draw_text(caption, &(FONT, 13).into_font().color(&RGBColor(70, 70, 70)), (16, 6))?;
    Ok(Frame { root, chart })
}

// ---------------------------------------------------------------------------------------------
// Colours: one per backend (CUB its own), one per kernel version, one per ceiling.

pub const LLVM: RGBColor = RGBColor(31, 119, 180);
pub const NVVM: RGBColor = RGBColor(255, 127, 14);
pub const CUB: RGBColor = RGBColor(44, 160, 44);
pub const READ_CEILING: RGBColor = RGBColor(214, 39, 40);
pub const COPY_CEILING: RGBColor = RGBColor(110, 110, 110);
pub const COMPUTE_ROOF: RGBColor = RGBColor(148, 103, 189);

/// A backend's colour (other backends: gray).
pub fn backend_color(backend: &str) -> RGBColor {
    match backend {
        "llvm" => LLVM,
        "nvvm" => NVVM,
        "cub" => CUB,
        _ => COPY_CEILING,
    }
}

/// `c` mixed halfway with white: the second element type's or shape's shade.
pub fn lighter(c: RGBColor) -> RGBColor {
    let mix = |x: u8| ((x as u16 + 255) / 2) as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// Ten distinct colours (matplotlib's tab10), for kernel versions.
pub const TAB10: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// A kernel's colour: by its place in `kernels` (CUB black).
pub fn kernel_color(kernel: &str, kernels: &[String]) -> RGBColor {
    if kernel.starts_with("cub") {
        return BLACK;
    }
    let i = kernels.iter().position(|k| k == kernel).unwrap_or(0);
    TAB10[i % TAB10.len()]
}

/// `1.07 GB`, `64.0 MB`, `4.0 KB` (10^3 steps, like GB/s).
pub fn fmt_bytes(b: f64) -> String {
    let (v, unit) = if b >= 1e9 {
        (b / 1e9, "GB")
    } else if b >= 1e6 {
        (b / 1e6, "MB")
    } else {
        (b / 1e3, "KB")
    };
    format!("{v:.2} {unit}")
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A small results file: two sizes of a three-size sweep, both backends, f32 and i32,
    /// CUB, the ceilings (fma_peak included), two transposes and their copy, one failed row.
    pub fn synthetic() -> Results {
        let mut rows = Vec::new();
        let row = |section: &str, kernel: &str, backend: &str, dtype: &str, n: u64, size: &str, bytes: u64, gbps: f64| {
            serde_json::json!({
                "section": section, "kernel": kernel, "backend": backend, "dtype": dtype,
                "n": n, "size": size, "bytes": bytes, "launches": 1, "status": "ok", "reps": 20,
                "median_us": bytes as f64 / gbps / 1e3, "min_us": null, "max_us": null,
                "spread_pct": 1.0, "noisy": false, "gbps": gbps, "us_per_launch": null,
                "ceiling": null, "pct_of_ceiling": null, "reference": null,
                "vs_reference": null, "note": ""
            })
        };
        let mut fma = row("ceiling", "fma_peak", "llvm", "f32", 1 << 20, "4224x256", 0, 1.0);
        fma["gbps"] = serde_json::Value::Null;
        fma["flops"] = 60_000_000_000u64.into();
        fma["gflops"] = 60_000.0.into();
        fma["median_us"] = 1000.0.into();
        rows.push(fma);
        for k in [20u32, 24, 28] {
            let n = 1u64 << k;
            let size = format!("2^{k}");
            let scale = k as f64 / 28.0;
            rows.push(row("ceiling", "read_stream", "llvm", "f32", n, &size, 4 * n, 4400.0 * scale));
            rows.push(row("ceiling", "read_stream", "nvvm", "f32", n, &size, 4 * n, 4300.0 * scale));
            rows.push(row("ceiling", "d2d_copy", "driver", "f32", n, &size, 8 * n, 3900.0 * scale));
            for dtype in ["f32", "i32"] {
                for (v, g) in [("reduce_v1", 900.0), ("reduce_v6", 4000.0), ("reduce_v7", 4200.0)] {
                    for b in ["llvm", "nvvm"] {
                        let mut r = row("reduce", v, b, dtype, n, &size, 4 * n, g * scale);
                        if dtype == "f32" {
                            r["flops"] = (n - 1).into();
                            r["gflops"] = ((n - 1) as f64 / (4 * n) as f64 * g * scale).into();
                        }
                        rows.push(r);
                    }
                }
                rows.push(row("reduce", "cub_reduce_sum", "cub", dtype, n, &size, 4 * n, 4100.0 * scale));
            }
        }
        let mut failed = row("reduce", "reduce_v2", "llvm", "f32", 1 << 28, "2^28", 1 << 30, 1.0);
        failed["status"] = "failed".into();
        failed["gbps"] = serde_json::Value::Null;
        rows.push(failed);
        for edge in [4096u64, 8192] {
            let e = edge * edge;
            let shape = format!("{edge}x{edge}");
            rows.push(row("transpose", "d2d_copy", "driver", "f32", e, &shape, 8 * e, 3900.0));
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
        Results::parse(&doc.to_string()).unwrap()
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
            assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
        }
        for c in &charts {
            let svg = std::fs::read_to_string(&c.file).unwrap();
            assert!(svg.starts_with("<svg"), "{}", c.file.display());
            assert!(svg.trim_end().ends_with("</svg>"), "{}", c.file.display());
            assert!(svg.contains(&c.title), "title of {}", c.file.display());
            for s in &c.series {
                assert!(svg.contains(s.as_str()), "series '{s}' not drawn in {}", c.file.display());
            }
        }
        let svg = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
        let bars = svg("bandwidth-reduce-2pow28.svg");
        for s in ["llvm f32", "nvvm i32", "cub_reduce_sum f32", "read stream", "D2D copy", "reduce_v7"] {
            assert!(bars.contains(s), "{s} missing from the 2^28 bars");
        }
        let sweep = svg("sweep-f32.svg");
        for s in ["reduce_v6 [llvm]", "reduce_v6 [nvvm]", "cub_reduce_sum", "L2 62.9 MB"] {
            assert!(sweep.contains(s), "{s} missing from the sweep");
        }
        let roof = svg("roofline.svg");
        for s in ["compute roof", "bandwidth roof", "reduce_v7 [nvvm]", "0.25 FLOP/B"] {
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
}
