//! The size sweep: GB/s against n (log2 x axis, log y axis), one line per kernel and backend,
//! CUB, and the read stream as the ceiling; a vertical line where the input fills the L2
//! (n · 4 bytes = the L2 size of the device in the results file). One chart per element type,
//! from any results file with three reduction sizes or more (`--sweep` has 21).
//!
//! Left of the L2 line the input can stay in L2 between launches, and at the smallest sizes
//! one launch's fixed cost dominates; right of it every version reads DRAM.
//!
//! A file measured hot and cold (`lab bench --cache both`) gets both curves of every kernel
//! and of the read stream: hot solid, cold dashed (the nvvm backend then told apart by hollow
//! markers). Left of the L2 line they part: the cold rows read DRAM there too.

use super::results::{Measured, Rows};
use super::{Chart, Drawn, FONT, READ_CEILING, Ticks, frame, kernel_color};
use anyhow::Result;
use catalog::records::{Cache, Report, Row};
use catalog::{Backend, Dtype, Family, Runner};
use plotters::prelude::*;

/// Fewest sizes that make a sweep chart.
const MIN_SIZES: usize = 3;

/// One sweep chart, ready to draw.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub name: String,
    pub title: String,
    pub subtitle: String,
    pub caption: String,
    pub lines: Vec<Line>,
    /// log2 of the n at which n × 4 bytes = L2, and the L2 size in bytes.
    pub l2: Option<(f64, u64)>,
}

/// One line: (log2 n, GB/s) points, ascending.
#[derive(Debug, Clone)]
pub struct Line {
    pub name: String,
    pub color: RGBColor,
    /// Drawn dashed: the nvvm backend and the ceiling, or in a hot-and-cold file the cold rows.
    pub dashed: bool,
    /// Hollow markers: the nvvm backend, in a hot-and-cold file.
    pub hollow: bool,
    /// Drawn thicker: the references (CUB's line and the read ceiling).
    pub thick: bool,
    pub points: Vec<(f64, f64)>,
}

/// One chart per element type of the reductions, when the file has enough sizes.
pub fn sweeps(r: &Report) -> Vec<Sweep> {
    if r.reduce_sizes().len() < MIN_SIZES {
        return Vec::new();
    }
    // Rust versions and CUB; the CUDA C++ twins would double the lines (the bars show them).
    let reduce: Vec<&Row> = r
        .ok_rows(Family::Reduce)
        .filter(|x| x.backend != Backend::Nvcc)
        .collect();
    let mut dtypes: Vec<Dtype> = reduce.iter().map(|x| x.dtype).collect();
    dtypes.dedup();
    dtypes.sort();
    dtypes.dedup();
    let kernels: Vec<String> = {
        let mut k: Vec<String> = Vec::new();
        for x in &reduce {
            if !k.contains(&x.kernel) {
                k.push(x.kernel.clone());
            }
        }
        k
    };
    let l2 = (r.device.l2_bytes > 0)
        .then(|| ((r.device.l2_bytes as f64 / 4.0).log2(), r.device.l2_bytes));
    let caches = r.caches();
    let both = caches.len() > 1;
    dtypes
        .into_iter()
        .map(|dtype| {
            let mut lines: Vec<Line> = Vec::new();
            for &cache in &caches {
                // In a hot-and-cold file each line names its cache; otherwise the subtitle does.
                let named = |name: String| {
                    if both {
                        format!("{name}, {}", cache.label())
                    } else {
                        name
                    }
                };
                // (dashed, hollow) of a kernel's line.
                let style = |nvvm: bool| {
                    if both {
                        (cache == Cache::Cold, nvvm)
                    } else {
                        (nvvm, false)
                    }
                };
                for x in reduce.iter().filter(|x| x.dtype == dtype && x.cache == cache) {
                    let Some(g) = x.ok_gbps() else { continue };
                    let name = named(x.series_name());
                    let point = ((x.n as f64).log2(), g);
                    match lines.iter_mut().find(|l| l.name == name) {
                        Some(l) => l.points.push(point),
                        None => {
                            let (dashed, hollow) = style(x.backend == Backend::Nvvm);
                            lines.push(Line {
                                color: kernel_color(&x.kernel, &kernels),
                                dashed,
                                hollow,
                                thick: x.backend == Runner::Cub,
                                name,
                                points: vec![point],
                            })
                        }
                    }
                }
                // The read stream: the best backend at each size.
                let part = r.only(cache);
                let mut read: Vec<(f64, f64)> = part
                    .reduce_sizes()
                    .into_iter()
                    .filter_map(|n| {
                        let size = part.rows.iter().find(|x| x.n == n && x.kernel == "read_stream")?.size.clone();
                        Some(((n as f64).log2(), part.best_gbps(Family::Ceiling, "read_stream", &size)?))
                    })
                    .collect();
                read.sort_by(|a, b| a.0.total_cmp(&b.0));
                if !read.is_empty() {
                    lines.push(Line {
                        name: named("read stream (ceiling)".into()),
                        color: READ_CEILING,
                        // Alone, the ceiling is dashed; beside its cold twin, the hot one is solid.
                        dashed: !both || cache == Cache::Cold,
                        hollow: false,
                        thick: true,
                        points: read,
                    });
                }
            }
            for l in &mut lines {
                l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            let caption = if both {
                "GB/s = bytes read / median time; solid: hot L2, dashed: cold L2 (flushed before every launch); hollow markers: nvvm; left of the L2 line a hot input stays in the L2"
            } else {
                "GB/s = bytes read / median time; solid: llvm, dashed: nvvm; left of the L2 line the input fits in L2, at the left edge one launch's fixed cost dominates"
            };
            Sweep {
                name: format!("sweep-{dtype}.svg"),
                title: format!("Reductions ({dtype}): bandwidth against n"),
                subtitle: r.provenance(),
                caption: caption.into(),
                lines,
                l2,
            }
        })
        .collect()
}

/// Draws the chart: lines with markers, the L2 size as a vertical line, a legend.
pub fn draw(s: &Sweep) -> Result<Drawn> {
    let mut svg = String::new();
    let l2_label = s.l2.map(|(k, bytes)| {
        format!(
            "L2 {:.1} MiB (n = 2^{k:.1})",
            bytes as f64 / (1u64 << 20) as f64
        )
    });
    {
        let f = frame(&mut svg, &s.title, &s.subtitle, &s.caption)?;
        let xs = s.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
        let ys = s.lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
        let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
        let (y0, y1) = ys.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
        let (y0, y1) = (y0.max(1e-3) / 1.5, y1 * 2.5);
        let keys: Vec<f64> = (x0.floor() as i64..=x1.ceil() as i64)
            .map(|k| k as f64)
            .collect();
        let decades: Vec<f64> = (y0.log10().floor() as i32..=y1.log10().ceil() as i32)
            .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
            .filter(|y| (y0..=y1).contains(y))
            .collect();
        let mut chart = ChartBuilder::on(&f.chart)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                Ticks {
                    range: (x0 - 0.5)..(x1 + 0.5),
                    ticks: keys,
                },
                (y0..y1).log_scale().with_key_points(decades),
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&|x| format!("2^{}", x.round()))
            .y_label_formatter(&|y| format!("{y}"))
            .x_desc("n (elements)")
            .y_desc("GB/s")
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 15))
            .light_line_style(WHITE)
            .draw()?;
        if let (Some((k, _)), Some(label)) = (s.l2, &l2_label) {
            let c = RGBColor(120, 120, 120);
            chart
                .draw_series(DashedLineSeries::new(
                    [(k, y0), (k, y1)],
                    4,
                    4,
                    c.stroke_width(2),
                ))?
                .label(label.clone())
                .legend(move |(x, y)| {
                    PathElement::new([(x + 7, y - 6), (x + 7, y + 6)], c.stroke_width(2))
                });
            chart.draw_series([Text::new(
                label.clone(),
                (k + 0.1, y1 / 1.6),
                (FONT, 13).into_font().color(&c),
            )])?;
        }
        for l in &s.lines {
            let color = l.color;
            let width = if l.thick { 3 } else { 2 };
            let style = color.stroke_width(width);
            let anno = if l.dashed {
                chart.draw_series(DashedLineSeries::new(l.points.clone(), 8, 5, style))?
            } else {
                chart.draw_series(LineSeries::new(l.points.clone(), style))?
            };
            // The legend's sample: two strokes, with a gap when the line is dashed.
            let gap = if l.dashed { 3 } else { 0 };
            anno.label(l.name.clone()).legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new([(0, 0), (8 - gap, 0)], color.stroke_width(width))
                    + PathElement::new([(8 + gap, 0), (16, 0)], color.stroke_width(width))
            });
            if l.hollow {
                // White inside, so the line does not fill it in; the legend's name says nvvm.
                chart.draw_series(l.points.iter().map(|&p| Circle::new(p, 4, WHITE.filled())))?;
                chart.draw_series(
                    l.points
                        .iter()
                        .map(|&p| Circle::new(p, 4, color.stroke_width(2))),
                )?;
            } else {
                chart.draw_series(l.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            }
        }
        super::legend(&mut chart, SeriesLabelPosition::LowerRight, 12)?;
        f.root.present()?;
    }
    let series = l2_label
        .into_iter()
        .chain(s.lines.iter().map(|l| l.name.clone()))
        .collect();
    Ok(Drawn {
        name: s.name.clone(),
        svg,
        chart: Chart {
            file: s.name.clone().into(),
            kind: "sweep",
            title: s.title.clone(),
            series,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::synthetic;

    #[test]
    fn one_line_per_kernel_and_backend_per_dtype_with_the_l2_marked() {
        let sweeps = sweeps(&synthetic());
        let names: Vec<&str> = sweeps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["sweep-f32.svg", "sweep-i32.svg"]);
        let f = &sweeps[0];
        let lines: Vec<&str> = f.lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            lines,
            [
                "reduce_v1 [llvm]",
                "reduce_v1 [nvvm]",
                "reduce_v6 [llvm]",
                "reduce_v6 [nvvm]",
                "reduce_v5 [llvm]",
                "reduce_v5 [nvvm]",
                "cub_reduce_sum",
                "read stream (ceiling)"
            ]
        );
        // The failed v2 row makes no line; every line has the three sizes, ascending.
        assert!(
            f.lines
                .iter()
                .all(|l| l.points.iter().map(|p| p.0).eq([20.0, 24.0, 28.0]))
        );
        let (k, bytes) = f.l2.unwrap();
        assert_eq!(bytes, 60 << 20);
        // n · 4 bytes = 60 MiB at n = 15 · 2^20 = 2^23.9.
        assert!((k - 20.0 - 15f64.log2()).abs() < 1e-12, "{k}");
        assert!(f.lines[1].dashed && !f.lines[0].dashed);
        assert!(f.lines.iter().all(|l| !l.hollow));
        assert!(f.subtitle.ends_with(", hot L2"), "{}", f.subtitle);
    }

    #[test]
    fn a_hot_and_cold_file_draws_both_curves_cold_dashed() {
        let s = &sweeps(&crate::plot::tests::synthetic_both())[0];
        let line = |name: &str| {
            s.lines
                .iter()
                .find(|l| l.name == name)
                .unwrap_or_else(|| panic!("no line {name}"))
        };
        let (hot, cold) = (
            line("reduce_v6 [llvm], hot L2"),
            line("reduce_v6 [llvm], cold L2"),
        );
        assert!(!hot.dashed && cold.dashed && !hot.hollow && !cold.hollow);
        assert_eq!(hot.color, cold.color);
        // The backends are told apart by the markers now.
        let nvvm = line("reduce_v6 [nvvm], cold L2");
        assert!(nvvm.dashed && nvvm.hollow);
        // They part where the input fits in the L2 (2^20) and meet beyond it.
        assert_eq!(cold.points[0].1 * 2.0, hot.points[0].1);
        assert_eq!(&cold.points[1..], &hot.points[1..]);
        let (rh, rc) = (
            line("read stream (ceiling), hot L2"),
            line("read stream (ceiling), cold L2"),
        );
        assert!(!rh.dashed && rc.dashed);
        assert_eq!(rc.points[0].1 * 2.0, rh.points[0].1);
        // 3 kernels × 2 backends + CUB + the read stream, each hot and cold.
        assert_eq!(s.lines.len(), 2 * (3 * 2 + 1 + 1));
        assert!(s.caption.contains("dashed: cold L2"), "{}", s.caption);
        assert!(s.subtitle.ends_with("hot and cold L2"), "{}", s.subtitle);
    }

    #[test]
    fn a_file_with_one_size_has_no_sweep() {
        let mut r = synthetic();
        r.rows
            .retain(|x| x.n == 1 << 28 || x.section == Family::Transpose);
        assert!(sweeps(&r).is_empty());
    }
}
