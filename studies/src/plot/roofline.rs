//! The roofline: achieved GFLOP/s against arithmetic intensity (FLOP per byte moved), both
//! axes log2, under two measured roofs: the bandwidth roof (the read stream's GB/s × FLOP/B)
//! and the compute roof (`fma_peak`: FP32 FMAs, no memory traffic). Where they meet is the
//! ridge point: a kernel left of it cannot reach the compute roof, whatever it does.
//!
//! A reduction of n floats does n − 1 adds on 4n bytes: 0.25 FLOP/B, far left of the ridge,
//! so the best it can do is the bandwidth roof at 0.25 FLOP/B. Only f32 rows are points (i32
//! adds are not FLOPs); the transposes do no arithmetic (0 FLOP/B) and are left out. The
//! points are the reductions at 2^28 (or the largest size in the file).
//!
//! In a file with the model's predictions (`catalog::model`), each roof that binds some of the
//! points other than the read stream (the same-address atomic chain, the result word's slice)
//! is drawn as a short bar at the GFLOP/s it allows there, with the kernels it binds: the
//! lower roofs that explain why those points sit under the bandwidth roof.

use super::results::{Measured, Rows};
use super::{COMPUTE_ROOF, COPY_CEILING, Chart, Drawn, FONT, READ_CEILING, frame, kernel_color};
use anyhow::Result;
use catalog::records::{Report, Row};
use catalog::{Backend, Family, Runner};
use plotters::prelude::*;

/// The size whose reductions are the points, when the file has it.
const DEFAULT_N: u64 = 1 << 28;

#[derive(Debug, Clone)]
pub struct Roofline {
    pub title: String,
    pub subtitle: String,
    pub caption: String,
    /// Bandwidth roof: the best read stream at the points' size, GB/s, and its label.
    pub bandwidth: (f64, String),
    /// Compute roof: the best `fma_peak`, GFLOP/s (None in a file without one).
    pub compute: Option<f64>,
    pub points: Vec<Point>,
    /// The model's roofs below the bandwidth roof at the points' intensity, one per roof.
    pub bounds: Vec<Bound>,
}

/// One of the model's roofs at the points' intensity: the GFLOP/s its predicted time allows
/// (the points' FLOPs over their predicted time), and the kernels it binds.
#[derive(Debug, Clone)]
pub struct Bound {
    /// `atomic`, `read+red`: the row's `bound`.
    pub roof: String,
    pub gflops: f64,
    pub kernels: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Point {
    pub name: String,
    pub kernel: String,
    pub backend: Runner,
    /// FLOP per byte.
    pub intensity: f64,
    pub gflops: f64,
}

impl Roofline {
    /// FLOP/B where the roofs meet.
    pub fn ridge(&self) -> Option<f64> {
        Some(self.compute? / self.bandwidth.0)
    }
}

/// The roofline of a results file with verified f32 reductions and a read stream.
pub fn roofline(r: &Report) -> Option<Roofline> {
    let sizes = r.reduce_sizes();
    let n = if sizes.contains(&DEFAULT_N) {
        DEFAULT_N
    } else {
        *sizes.last()?
    };
    let rows: Vec<&Row> = r
        .ok_rows(Family::Reduce)
        // The CUDA C++ twins sit on their Rust points (same bytes, same flops): left out.
        .filter(|x| x.n == n && x.reduction_flops().is_some() && x.backend != Backend::Nvcc)
        .collect();
    let size = rows.first()?.size.clone();
    let (bw, bw_size) = match r.best_gbps(Family::Ceiling, "read_stream", &size) {
        Some(g) => (g, size.clone()),
        None => {
            let best = r
                .ok_rows(Family::Ceiling)
                .filter(|x| x.kernel == "read_stream")
                .filter_map(|x| Some((x.ok_gbps()?, x.size.clone())))
                .max_by(|a, b| a.0.total_cmp(&b.0))?;
            (best.0, best.1)
        }
    };
    let points = rows
        .iter()
        .filter_map(|x| {
            Some(Point {
                name: x.series_name(),
                kernel: x.kernel.clone(),
                backend: x.backend,
                intensity: x.reduction_flops()? as f64 / x.bytes as f64,
                gflops: x.ok_gflops()?,
            })
        })
        .collect();
    let bounds = bounds(&rows);
    let compute = r.fma_peak();
    let mut caption = format!(
        "points: f32 reductions at n = {size}, n - 1 adds on 4n bytes = 0.25 FLOP/B (i32 adds are not FLOPs); transposes do 0 FLOP and are not shown"
    );
    if compute.is_none() {
        caption.push_str("; no fma_peak row in this file: compute roof not measured");
    }
    Some(Roofline {
        title: "Roofline: achieved GFLOP/s against arithmetic intensity".into(),
        subtitle: r.provenance(),
        caption,
        bandwidth: (
            bw,
            format!("bandwidth roof: read stream {bw_size}, {bw:.0} GB/s"),
        ),
        compute,
        points,
        bounds,
    })
}

/// The model's roofs among `rows` other than the read stream (which the chart already draws):
/// for each, the highest GFLOP/s its predictions allow and the kernels it binds, lowest first.
fn bounds(rows: &[&Row]) -> Vec<Bound> {
    let mut out: Vec<Bound> = Vec::new();
    for x in rows {
        let (Some(roof), Some(us), Some(flops)) = (&x.bound, x.predicted_us, x.reduction_flops())
        else {
            continue;
        };
        if roof == catalog::model::Roof::Read.name() {
            continue;
        }
        let gflops = flops as f64 / (us * 1e-6) / 1e9;
        match out.iter_mut().find(|b| &b.roof == roof) {
            Some(b) => {
                b.gflops = b.gflops.max(gflops);
                if !b.kernels.contains(&x.kernel) {
                    b.kernels.push(x.kernel.clone());
                }
            }
            None => out.push(Bound {
                roof: roof.clone(),
                gflops,
                kernels: vec![x.kernel.clone()],
            }),
        }
    }
    out.sort_by(|a, b| a.gflops.total_cmp(&b.gflops));
    out
}

/// Draws the roofs (solid), the ridge point, and one point per kernel and backend (colour:
/// the kernel, as in the sweep; marker: the backend).
pub fn draw(f: &Roofline) -> Result<Drawn> {
    let mut svg = String::new();
    let mut series = Vec::new();
    {
        let fr = frame(&mut svg, &f.title, &f.subtitle, &f.caption)?;
        let bw = f.bandwidth.0;
        let ridge = f.ridge();
        let left = f.points.iter().map(|p| p.intensity).fold(0.25, f64::min);
        let x0 = 2f64.powi(left.log2().floor() as i32 - 2);
        let x1 = 2f64.powi((ridge.unwrap_or(16.0).max(left).log2().ceil() as i32 + 3).max(6));
        let peak = f.compute.unwrap_or(bw * x1);
        let low = f
            .points
            .iter()
            .map(|p| p.gflops)
            .chain(f.bounds.iter().map(|b| b.gflops))
            .fold(bw * x0, f64::min);
        let (y0, y1) = (
            2f64.powi(low.log2().floor() as i32 - 1),
            2f64.powi(peak.log2().ceil() as i32 + 1),
        );
        let xkeys: Vec<f64> = (x0.log2() as i32..=x1.log2() as i32)
            .map(|e| 2f64.powi(e))
            .collect();
        let ykeys: Vec<f64> = (y0.log10().ceil() as i32..=y1.log10().floor() as i32)
            .map(|e| 10f64.powi(e))
            .collect();
        let mut chart = ChartBuilder::on(&fr.chart)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(
                (x0..x1).log_scale().with_key_points(xkeys),
                (y0..y1).log_scale().with_key_points(ykeys),
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&|x| fmt_intensity(*x))
            .y_label_formatter(&|y| format!("{y}"))
            .x_desc("arithmetic intensity (FLOP/B)")
            .y_desc("GFLOP/s")
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 15))
            .light_line_style(WHITE)
            .draw()?;

        // Bandwidth roof: y = bw · x, up to the ridge (or the right edge without a compute roof).
        let x_end = ridge.unwrap_or(x1).min(x1);
        let (label, c) = (f.bandwidth.1.clone(), READ_CEILING);
        chart
            .draw_series(LineSeries::new(
                [(x0, bw * x0), (x_end, bw * x_end)],
                c.stroke_width(3),
            ))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], c.stroke_width(3)));
        series.push(label);
        if let (Some(peak), Some(ridge)) = (f.compute, ridge) {
            let c = COMPUTE_ROOF;
            let label = format!("compute roof: fma_peak, {peak:.0} GFLOP/s");
            chart
                .draw_series(LineSeries::new(
                    [(ridge, peak), (x1, peak)],
                    c.stroke_width(3),
                ))?
                .label(label.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], c.stroke_width(3)));
            series.push(label);
            let label = format!("ridge point: {ridge:.1} FLOP/B");
            chart
                .draw_series([Circle::new((ridge, peak), 5, BLACK.filled())])?
                .label(label.clone())
                .legend(|(x, y)| Circle::new((x + 8, y), 4, BLACK.filled()));
            series.push(label);
        }
        // The attainable bound at the reductions' intensity, and the points.
        let at = 0.25;
        let bound = bw * at;
        chart.draw_series([Text::new(
            format!("0.25 FLOP/B: at most {bound:.0} GFLOP/s"),
            (at * 1.2, bound * 0.8),
            (FONT, 13).into_font().color(&READ_CEILING),
        )])?;
        // The model's lower roofs at the same intensity: a bar each, dashed like a bound.
        for b in &f.bounds {
            let c = COPY_CEILING;
            let label = format!(
                "model bound {}: {:.0} GFLOP/s ({})",
                b.roof,
                b.gflops,
                b.kernels.join(", ")
            );
            chart
                .draw_series(DashedLineSeries::new(
                    [(at / 2.0, b.gflops), (at * 2.0, b.gflops)],
                    6,
                    4,
                    c.stroke_width(2),
                ))?
                .label(label.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], c.stroke_width(2)));
            series.push(label);
        }
        let kernels: Vec<String> = f.points.iter().map(|p| p.kernel.clone()).collect();
        for p in &f.points {
            let color = kernel_color(&p.kernel, &kernels);
            let label = format!("{}: {:.0} GFLOP/s", p.name, p.gflops);
            let at = (p.intensity, p.gflops);
            let (fill, line) = (color.filled(), color.stroke_width(2));
            let shape = Marker::of(p.backend);
            let anno = match shape {
                Marker::Circle => chart.draw_series([Circle::new(at, 6, fill)])?,
                Marker::Triangle => chart.draw_series([TriangleMarker::new(at, 7, line)])?,
                Marker::Square => chart.draw_series([
                    EmptyElement::at(at) + Rectangle::new([(-6, -6), (6, 6)], fill)
                ])?,
            };
            anno.label(label.clone())
                .legend(move |(x, y)| PathElement::new(shape.outline((x + 8, y), 5), line));
            series.push(label);
        }
        super::legend(&mut chart, SeriesLabelPosition::LowerRight, 12)?;
        fr.root.present()?;
    }
    Ok(Drawn {
        name: "roofline.svg".into(),
        svg,
        chart: Chart {
            file: "roofline.svg".into(),
            kind: "roofline",
            title: f.title.clone(),
            series,
        },
    })
}

/// `1/4`, `1`, `16`: powers of two as a reader says them.
fn fmt_intensity(x: f64) -> String {
    if x >= 1.0 {
        format!("{x:.0}")
    } else {
        format!("1/{:.0}", 1.0 / x)
    }
}

/// Marker shapes: one per backend, so the two compilers' points of one kernel (one colour)
/// stay apart where they overlap.
#[derive(Clone, Copy)]
enum Marker {
    /// llvm (filled).
    Circle,
    /// nvvm (outlined).
    Triangle,
    /// CUB.
    Square,
}

impl Marker {
    fn of(backend: Runner) -> Marker {
        match backend {
            Runner::Compiled(Backend::Nvvm) => Marker::Triangle,
            Runner::Cub => Marker::Square,
            _ => Marker::Circle,
        }
    }

    /// The marker's outline around `c` (pixels), radius `r`: the legend's sample.
    fn outline(self, c: (i32, i32), r: i32) -> Vec<(i32, i32)> {
        let corners: Vec<(i32, i32)> = match self {
            Marker::Circle => (0..12)
                .map(|i| {
                    let a = i as f64 * std::f64::consts::TAU / 12.0;
                    let d = |t: f64| (r as f64 * t).round() as i32;
                    (d(a.cos()), d(a.sin()))
                })
                .collect(),
            Marker::Triangle => vec![(0, -r), (r, r), (-r, r)],
            Marker::Square => vec![(-r, -r), (r, -r), (r, r), (-r, r)],
        };
        corners
            .iter()
            .chain(corners.first())
            .map(|&(dx, dy)| (c.0 + dx, c.1 + dy))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::synthetic;
    use catalog::Dtype;

    #[test]
    fn reductions_sit_at_a_quarter_flop_per_byte_under_both_roofs() {
        let f = roofline(&synthetic()).unwrap();
        assert_eq!(f.bandwidth.0, 4400.0);
        assert_eq!(f.compute, Some(60_000.0));
        assert!((f.ridge().unwrap() - 60_000.0 / 4400.0).abs() < 1e-9);
        // f32 only: 3 versions × 2 backends + CUB; the failed v2 row is not a point.
        assert_eq!(f.points.len(), 7);
        for p in &f.points {
            assert!((p.intensity - 0.25).abs() < 1e-6, "{}", p.intensity);
            assert!(
                p.gflops <= f.bandwidth.0 * p.intensity,
                "{} above the roof",
                p.name
            );
        }
        assert!(f.caption.contains("transposes do 0 FLOP"));
    }

    #[test]
    fn an_old_file_without_flops_or_fma_peak_still_has_a_roofline() {
        let mut r = synthetic();
        r.rows.retain(|x| x.kernel != "fma_peak");
        for x in &mut r.rows {
            x.flops = 0;
            x.gflops = None;
        }
        let f = roofline(&r).unwrap();
        assert_eq!(f.compute, None);
        assert_eq!(f.ridge(), None);
        assert!(f.caption.contains("compute roof not measured"));
        // n − 1 adds over the median time.
        let v6 = f
            .points
            .iter()
            .find(|p| p.name == "reduce_v6 [llvm]")
            .unwrap();
        assert!((v6.gflops - 1000.0).abs() < 0.01, "{}", v6.gflops);
        let svg = draw(&f).unwrap().svg;
        assert!(svg.contains("bandwidth roof") && !svg.contains("compute roof:"));
    }

    /// With the model's predictions in the file, the atomic-bound points get their roof as a
    /// bar below the bandwidth roof; the read-bound ones do not (the roof line is theirs).
    #[test]
    fn the_models_lower_roofs_are_drawn_where_they_bind() {
        let mut r = synthetic();
        for x in r
            .rows
            .iter_mut()
            .filter(|x| x.size == "2^28" && x.dtype == Dtype::F32)
        {
            let (roof, us) = match x.kernel.as_str() {
                "reduce_v1" => ("atomic", 2000.0),
                "reduce_v6" => ("read", 240.0),
                _ => continue,
            };
            x.bound = Some(roof.into());
            x.predicted_us = Some(us);
        }
        let f = roofline(&r).unwrap();
        assert_eq!(f.bounds.len(), 1, "{:?}", f.bounds);
        let b = &f.bounds[0];
        assert_eq!(
            (b.roof.as_str(), b.kernels.clone()),
            ("atomic", vec!["reduce_v1".to_string()])
        );
        let want = ((1u64 << 28) - 1) as f64 / 2000e-6 / 1e9;
        assert!((b.gflops - want).abs() < 1e-6, "{}", b.gflops);
        let svg = draw(&f).unwrap().svg;
        assert!(
            svg.contains("model bound atomic: 134 GFLOP/s (reduce_v1)"),
            "no bar"
        );
        // A file without predictions draws none.
        assert!(roofline(&synthetic()).unwrap().bounds.is_empty());
    }

    #[test]
    fn intensities_read_as_fractions() {
        assert_eq!(fmt_intensity(0.25), "1/4");
        assert_eq!(fmt_intensity(16.0), "16");
    }
}
