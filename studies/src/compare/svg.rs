//! `--svg FILE`: the two time distributions of every pair, one panel each: every sample as a
//! dot (spread vertically so they do not hide one another), the min–max range as a line, the
//! median as a bar, the verdict in the panel's title.

use super::Report;
use crate::plot::{FONT, TAB10};
use anyhow::Result;
use plotters::prelude::*;

const WIDTH: u32 = 1100;
const TITLE_H: u32 = 60;
const PANEL_H: u32 = 190;
const CAPTION_H: u32 = 30;

/// The SVG text.
pub fn draw(r: &Report) -> Result<String> {
    let mut svg = String::new();
    let panels = r.time.len().max(1) as u32;
    let height = TITLE_H + PANEL_H * panels + CAPTION_H;
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, rest) = root.split_vertically(TITLE_H);
        let (body, bottom) = rest.split_vertically(PANEL_H * panels);
        top.draw_text(
            &format!("compare: {} (A) vs {} (B)", r.a, r.b),
            &(FONT, 22).into_font().style(FontStyle::Bold).color(&BLACK),
            (16, 8),
        )?;
        let provenance = match &r.source {
            super::Source::Live {
                rounds,
                commit,
                device,
                ..
            } => format!(
                "{device}, commit {commit}, {rounds} round(s) of lab bench, {}",
                r.date
            ),
            super::Source::Files { a, b } => format!("A: {} · B: {}", a.path, b.path),
        };
        top.draw_text(
            &provenance,
            &(FONT, 14).into_font().color(&RGBColor(90, 90, 90)),
            (16, 36),
        )?;
        bottom.draw_text(
            "same within noise when the medians differ by no more than the narrower min-max range",
            &(FONT, 13).into_font().color(&RGBColor(70, 70, 70)),
            (16, 8),
        )?;
        let areas = body.split_evenly((panels as usize, 1));
        for (t, area) in r.time.iter().zip(areas) {
            let lo = t.a.min_us.min(t.b.min_us);
            let hi = t.a.max_us.max(t.b.max_us);
            let pad = ((hi - lo) * 0.08).max(hi * 1e-3);
            let caption = format!(
                "{}: {} ({}, {:.3}x)",
                t.label,
                t.verdict.name(),
                super::claims::fmt_change(t.delta_pct),
                t.speedup
            );
            let mut chart = ChartBuilder::on(&area)
                .margin(10)
                .caption(caption, (FONT, 15))
                .x_label_area_size(30)
                .y_label_area_size(40)
                .build_cartesian_2d((lo - pad)..(hi + pad), 0.0..2.0)?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(0)
                .x_desc("µs per sample")
                .label_style((FONT, 12))
                .axis_desc_style((FONT, 13))
                .light_line_style(WHITE)
                .draw()?;
            for (d, y, name, color) in [(&t.a, 1.45, "A", TAB10[0]), (&t.b, 0.55, "B", TAB10[1])] {
                chart.draw_series(LineSeries::new(
                    [(d.min_us, y), (d.max_us, y)],
                    color.stroke_width(2),
                ))?;
                // A fixed low-discrepancy spread (golden-ratio steps): the same file draws the
                // same picture every time.
                chart.draw_series(d.samples_us.iter().enumerate().map(|(i, &x)| {
                    let jitter = ((i as f64 * 0.618_033_988_75).fract() - 0.5) * 0.5;
                    Circle::new((x, y + jitter), 3, color.mix(0.55).filled())
                }))?;
                chart.draw_series([PathElement::new(
                    [(d.median_us, y - 0.35), (d.median_us, y + 0.35)],
                    BLACK.stroke_width(3),
                )])?;
                chart.draw_series([Text::new(
                    format!("{name}  {:.2} µs, n = {}", d.median_us, d.n),
                    (lo - pad * 0.9, y + 0.42),
                    (FONT, 12).into_font().color(&color),
                )])?;
            }
        }
        root.present()?;
    }
    Ok(svg)
}
