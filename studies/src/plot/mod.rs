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

use anyhow::{Context, Result, bail};
use catalog::kernels::is_library;
use catalog::records::{Cache, Report};
use catalog::{Backend, Runner};
use plotters::coord::Shift;
use plotters::prelude::*;
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

/// Draws every chart the results file `results` supports into `out`; fails when there is none.
pub fn plot_file(results: &Path, out: &Path) -> Result<Vec<Chart>> {
    let r = results::read(results)?;
    let charts = render_all(&r, out)?;
    if charts.is_empty() {
        bail!(
            "nothing to plot in {}: no verified reduction or transpose rows",
            results.display()
        );
    }
    Ok(charts)
}

/// Draws every chart the results support and writes them into `out`; returns what was
/// written. A chart a file has no rows for is left out (a default run has no sweep). A file
/// measured hot and cold gets the bars and the roofline once per cache (the cold ones named
/// `…-cold.svg`) and one sweep with both.
pub fn render_all(r: &Report, out: &Path) -> Result<Vec<Chart>> {
    let mut drawn = Vec::new();
    let caches = r.caches();
    for &cache in &caches {
        let part = r.only(cache);
        let mut one = Vec::new();
        for b in bars::reductions(&part)
            .into_iter()
            .chain(bars::transposes(&part))
        {
            one.push(bars::draw(&b)?);
        }
        if let Some(f) = roofline::roofline(&part) {
            one.push(roofline::draw(&f)?);
        }
        if caches.len() > 1 && cache == Cache::Cold {
            for d in &mut one {
                d.name = cold_name(&d.name);
            }
        }
        drawn.extend(one);
    }
    for s in sweep::sweeps(r) {
        drawn.push(sweep::draw(&s)?);
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut charts = Vec::new();
    for d in drawn {
        let path = out.join(&d.name);
        // Whole or not at all: a browser or the README never sees half a chart.
        files::write_atomic(&path, d.svg.as_bytes())?;
        charts.push(Chart {
            file: path,
            ..d.chart
        });
    }
    Ok(charts)
}

/// `bars.svg` → `bars-cold.svg`: a cold chart beside its hot twin.
fn cold_name(name: &str) -> String {
    match name.strip_suffix(".svg") {
        Some(stem) => format!("{stem}-cold.svg"),
        None => format!("{name}-cold"),
    }
}

/// Draws a chart's legend the way every chart here does: a light box with a grey border.
pub fn legend<'a, 'b: 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    position: SeriesLabelPosition,
    font_size: u32,
) -> Result<()> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font((FONT, font_size))
        .draw()?;
    Ok(())
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
pub fn frame<'a>(
    buf: &'a mut String,
    title: &str,
    subtitle: &str,
    caption: &str,
) -> Result<Frame<'a>> {
    let root = SVGBackend::with_string(buf, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, rest) = root.split_vertically(TITLE_H);
    let (chart, bottom) = rest.split_vertically(SIZE.1 - TITLE_H - CAPTION_H);
    top.draw_text(
        title,
        &(FONT, 22).into_font().style(FontStyle::Bold).color(&BLACK),
        (16, 8),
    )?;
    top.draw_text(
        subtitle,
        &(FONT, 14).into_font().color(&RGBColor(90, 90, 90)),
        (16, 34),
    )?;
    bottom.draw_text(
        caption,
        &(FONT, 13).into_font().color(&RGBColor(70, 70, 70)),
        (16, 6),
    )?;
    Ok(Frame { root, chart })
}

/// A linear axis with ticks exactly at `ticks` (plotters' `with_key_points` leaves a linear
/// f64 axis without a label formatter): group centres of a bar chart, powers of two.
pub struct Ticks {
    pub range: std::ops::Range<f64>,
    pub ticks: Vec<f64>,
}

impl plotters::coord::ranged1d::Ranged for Ticks {
    type ValueType = f64;
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;

    fn map(&self, v: &f64, pixels: (i32, i32)) -> i32 {
        let t = (v - self.range.start) / (self.range.end - self.range.start);
        pixels.0 + (t * (pixels.1 - pixels.0) as f64).round() as i32
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Bold points only: no light grid lines between the ticks.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

// ---------------------------------------------------------------------------------------------
// Colours: one per backend (CUB its own), one per kernel version, one per ceiling.

pub const LLVM: RGBColor = RGBColor(31, 119, 180);
pub const NVVM: RGBColor = RGBColor(255, 127, 14);
pub const CUB: RGBColor = RGBColor(44, 160, 44);
pub const NVCC: RGBColor = RGBColor(140, 86, 75);
pub const READ_CEILING: RGBColor = RGBColor(214, 39, 40);
pub const COPY_CEILING: RGBColor = RGBColor(110, 110, 110);
pub const COMPUTE_ROOF: RGBColor = RGBColor(148, 103, 189);

/// A runner's colour (the driver's copy: gray).
pub fn backend_color(backend: Runner) -> RGBColor {
    match backend {
        Runner::Compiled(Backend::Llvm) => LLVM,
        Runner::Compiled(Backend::Nvvm) => NVVM,
        Runner::Compiled(Backend::Nvcc) => NVCC,
        Runner::Cub => CUB,
        Runner::Driver => COPY_CEILING,
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

/// A kernel's colour: by its place among the Rust kernels of `kernels` (CUB black). The
/// palette skips tab10's red and gray, which the ceilings use.
pub fn kernel_color(kernel: &str, kernels: &[String]) -> RGBColor {
    if is_library(kernel) {
        return BLACK;
    }
    let palette: Vec<RGBColor> = TAB10
        .iter()
        .copied()
        .filter(|&c| c != READ_CEILING && c != RGBColor(127, 127, 127))
        .collect();
    let i = kernels
        .iter()
        .filter(|k| !is_library(k))
        .position(|k| k == kernel)
        .unwrap_or(0);
    palette[i % palette.len()]
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
pub mod tests;
