//! Bandwidth per kernel as bars, the measured ceilings as dashed lines: one chart per
//! reduction size (every size of a default run; 2^20, 2^24, 2^28 and 2^30 of a sweep), one
//! for the transposes.
//!
//! Bars are grouped by kernel; within a group, one bar per backend and element type (the
//! reductions) or backend and shape (the transposes). CUB is its own group.

use super::results::{Measured, Rows, file_label};
use super::{COPY_CEILING, Chart, Drawn, FONT, READ_CEILING, Ticks, backend_color, frame, lighter};
use anyhow::Result;
use catalog::records::{Report, Row};
use catalog::{Family, Runner};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Sizes a sweep's bar charts keep (the headline's).
const SWEEP_SIZES: [u64; 4] = [1 << 20, 1 << 24, 1 << 28, 1 << 30];

/// One bar chart, ready to draw.
#[derive(Debug, Clone)]
pub struct Bars {
    pub name: String,
    pub title: String,
    pub subtitle: String,
    pub caption: String,
    /// The groups along x (kernels).
    pub groups: Vec<String>,
    pub series: Vec<BarSeries>,
    pub levels: Vec<Level>,
    /// The y axis: what the bars measure, and the decimals their labels show.
    pub y_desc: &'static str,
    pub decimals: usize,
}

/// Bars of one colour: one value (or none) per group.
#[derive(Debug, Clone)]
pub struct BarSeries {
    pub name: String,
    pub color: RGBColor,
    pub values: Vec<Option<f64>>,
}

/// A horizontal line across the chart: a measured ceiling.
#[derive(Debug, Clone)]
pub struct Level {
    pub name: String,
    pub value: f64,
    pub color: RGBColor,
}

/// One chart per reduction size with verified rows.
pub fn reductions(r: &Report) -> Vec<Bars> {
    let mut sizes = r.reduce_sizes();
    if sizes.len() > SWEEP_SIZES.len() {
        sizes.retain(|n| SWEEP_SIZES.contains(n));
    }
    sizes
        .into_iter()
        .filter_map(|n| {
            let rows: Vec<&Row> = r.ok_rows(Family::Reduce).filter(|x| x.n == n).collect();
            let size = rows.first()?.size.clone();
            let dtypes = distinct(rows.iter().map(|x| x.dtype));
            let series_of = |x: &Row| format!("{} {}", x.backend, x.dtype);
            let color_of = |x: &Row| {
                let c = backend_color(x.backend);
                if x.dtype == dtypes[0] { c } else { lighter(c) }
            };
            let (groups, series) = group(&rows, series_of, color_of);
            let mut levels = Vec::new();
            if let Some(v) = r.best_gbps(Family::Ceiling, "read_stream", &size) {
                levels.push(level(format!("read stream {size}"), v, READ_CEILING));
            }
            if let Some(v) = r.best_gbps(Family::Ceiling, "d2d_copy", &size) {
                levels.push(level(format!("D2D copy {size} (read + write)"), v, COPY_CEILING));
            }
            let bytes = rows.iter().map(|x| x.bytes).max().unwrap_or(0);
            Some(Bars {
                name: format!("bandwidth-reduce-{}.svg", file_label(&size)),
                title: format!("Reductions at n = {size} ({} per input): bandwidth", super::fmt_bytes(bytes as f64)),
                subtitle: r.provenance(),
                caption: "GB/s = bytes read / median time; dashed: the ceilings measured in the same run (best backend); a missing bar failed or was not run".into(),
                groups,
                series,
                levels,
                y_desc: "GB/s",
                decimals: 0,
            })
        })
        .collect()
}

/// The transposes at every shape, with the copy of the same bytes as their ceiling.
pub fn transposes(r: &Report) -> Option<Bars> {
    let rows: Vec<&Row> = r
        .ok_rows(Family::Transpose)
        .filter(|x| x.kernel != "d2d_copy")
        .collect();
    if rows.is_empty() {
        return None;
    }
    let shapes = distinct(rows.iter().map(|x| x.size.clone()));
    let series_of = |x: &Row| format!("{} {}", x.backend, x.size);
    let color_of = |x: &Row| {
        let c = backend_color(x.backend);
        if x.size == shapes[0] { c } else { lighter(c) }
    };
    let (groups, series) = group(&rows, series_of, color_of);
    let mut levels: Vec<Level> = shapes
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let v = r.best_gbps(Family::Transpose, "d2d_copy", s)?;
            let c = if i == 0 {
                COPY_CEILING
            } else {
                lighter(COPY_CEILING)
            };
            Some(level(format!("D2D copy {s}"), v, c))
        })
        .collect();
    // The read stream at the largest size measured: a bound from reads alone.
    let read = r
        .ok_rows(Family::Ceiling)
        .filter(|x| x.kernel == "read_stream")
        .max_by_key(|x| x.n);
    if let Some(row) = read
        && let Some(v) = r.best_gbps(Family::Ceiling, "read_stream", &row.size)
    {
        levels.push(level(
            format!("read stream {} (reads only)", row.size),
            v,
            READ_CEILING,
        ));
    }
    Some(Bars {
        name: "bandwidth-transpose.svg".into(),
        title: "Transposes: bandwidth".into(),
        subtitle: r.provenance(),
        caption: "GB/s = (bytes read + bytes written) / median time; dashed: the copy of the same bytes, the read stream (best backend)".into(),
        groups,
        series,
        levels,
        y_desc: "GB/s",
        decimals: 0,
    })
}

fn level(name: String, value: f64, color: RGBColor) -> Level {
    Level {
        name: format!("{name}: {value:.0} GB/s"),
        value,
        color,
    }
}

/// Groups (kernels, in the rows' order) and series (by `series_of`, backends in the order
/// llvm, nvvm, nvcc, cub, then others) of `rows`.
fn group(
    rows: &[&Row],
    series_of: impl Fn(&Row) -> String,
    color_of: impl Fn(&Row) -> RGBColor,
) -> (Vec<String>, Vec<BarSeries>) {
    let groups = distinct(rows.iter().map(|x| x.kernel.clone()));
    let mut keyed: Vec<&&Row> = rows.iter().collect();
    // Runner::ALL's order: the compilers, CUB, the driver.
    keyed.sort_by_key(|x| Runner::ALL.iter().position(|r| *r == x.backend));
    let mut series: Vec<BarSeries> = Vec::new();
    for x in keyed {
        let name = if x.backend == Runner::Cub {
            let cub = format!("{} ", Runner::Cub);
            format!("{} {}", x.kernel, series_of(x).trim_start_matches(&cub))
        } else {
            series_of(x)
        };
        let i = groups
            .iter()
            .position(|g| *g == x.kernel)
            .expect("a row's own kernel");
        let s = match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s,
            None => {
                series.push(BarSeries {
                    name,
                    color: color_of(x),
                    values: vec![None; groups.len()],
                });
                series.last_mut().expect("just pushed")
            }
        };
        s.values[i] = x.ok_gbps();
    }
    (groups, series)
}

fn distinct<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = Vec::new();
    for i in items {
        if !v.contains(&i) {
            v.push(i);
        }
    }
    v
}

/// Draws the chart: bars with their values on top, ceilings as dashed lines, a legend.
pub fn draw(b: &Bars) -> Result<Drawn> {
    let mut svg = String::new();
    {
        let f = frame(&mut svg, &b.title, &b.subtitle, &b.caption)?;
        let top = b
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied())
            .chain(b.levels.iter().map(|l| l.value))
            .fold(1.0, f64::max);
        let n = b.groups.len() as f64;
        let centers: Vec<f64> = (0..b.groups.len()).map(|i| i as f64 + 0.5).collect();
        let mut chart = ChartBuilder::on(&f.chart)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d(
                Ticks {
                    range: 0.0..n,
                    ticks: centers,
                },
                0.0..top * 1.32,
            )?;
        let names = b.groups.clone();
        let label = move |x: &f64| names.get(x.floor() as usize).cloned().unwrap_or_default();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&label)
            .y_label_formatter(&|y| format!("{y:.*}", b.decimals))
            .y_desc(b.y_desc)
            .light_line_style(WHITE)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .draw()?;

        let value_style = TextStyle::from((FONT, 11).into_font())
            .pos(Pos::new(HPos::Center, VPos::Bottom))
            .color(&RGBColor(40, 40, 40));
        for s in &b.series {
            let mut rects = Vec::new();
            let mut texts = Vec::new();
            for (i, v) in s.values.iter().enumerate() {
                let Some(v) = *v else { continue };
                // Only the series with a bar in this group share its width.
                let here: Vec<&BarSeries> =
                    b.series.iter().filter(|t| t.values[i].is_some()).collect();
                let j = here.iter().position(|t| t.name == s.name).unwrap_or(0) as f64;
                let w = 0.8 / here.len() as f64;
                let x0 = i as f64 + 0.1 + j * w;
                rects.push(Rectangle::new(
                    [(x0, 0.0), (x0 + w * 0.92, v)],
                    s.color.filled(),
                ));
                texts.push(Text::new(
                    format!("{v:.*}", b.decimals),
                    (x0 + w * 0.46, v),
                    value_style.clone(),
                ));
            }
            let color = s.color;
            chart
                .draw_series(rects)?
                .label(s.name.clone())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled())
                });
            chart.draw_series(texts)?;
        }
        for l in &b.levels {
            let color = l.color;
            chart
                .draw_series(DashedLineSeries::new(
                    [(0.0, l.value), (n, l.value)],
                    10,
                    6,
                    color.stroke_width(2),
                ))?
                .label(l.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 14, y)], color.stroke_width(2))
                });
        }
        super::legend(&mut chart, SeriesLabelPosition::UpperLeft, 13)?;
        f.root.present()?;
    }
    let series = b
        .series
        .iter()
        .map(|s| s.name.clone())
        .chain(b.levels.iter().map(|l| l.name.clone()))
        .collect();
    Ok(Drawn {
        name: b.name.clone(),
        svg,
        chart: Chart {
            file: b.name.clone().into(),
            kind: "bars",
            title: b.title.clone(),
            series,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::synthetic;

    #[test]
    fn reduction_bars_group_by_kernel_with_cub_apart_and_both_ceilings() {
        let r = synthetic();
        let charts = reductions(&r);
        assert_eq!(charts.len(), 3);
        let b = &charts[2];
        assert_eq!(b.name, "bandwidth-reduce-2pow28.svg");
        assert_eq!(
            b.groups,
            ["reduce_v1", "reduce_v6", "reduce_v5", "cub_reduce_sum"]
        );
        let names: Vec<&str> = b.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "llvm f32",
                "llvm i32",
                "nvvm f32",
                "nvvm i32",
                "cub_reduce_sum f32",
                "cub_reduce_sum i32"
            ]
        );
        // CUB's bars stand only in CUB's group; the failed v2 row is not a group at all.
        let cub = &b.series[4];
        assert_eq!(cub.values[..3], [None, None, None]);
        assert_eq!(cub.values[3], Some(4100.0));
        assert_eq!(b.series[0].values[1], Some(4000.0));
        let levels: Vec<&str> = b.levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            levels,
            [
                "read stream 2^28: 4400 GB/s",
                "D2D copy 2^28 (read + write): 3900 GB/s"
            ]
        );
        assert_eq!(b.series[1].color, lighter(super::super::LLVM));
    }

    #[test]
    fn transpose_bars_have_one_series_per_backend_and_shape_and_the_copies() {
        let b = transposes(&synthetic()).unwrap();
        assert_eq!(b.groups, ["transpose_naive", "transpose_padded"]);
        let names: Vec<&str> = b.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "llvm 4096x4096",
                "llvm 8192x8192",
                "nvvm 4096x4096",
                "nvvm 8192x8192"
            ]
        );
        assert_eq!(b.levels.len(), 3);
        assert!(
            b.levels[2]
                .name
                .starts_with("read stream 2^28 (reads only)")
        );
    }
}
