//! Printers: one per format, all from the same `Report`.

use super::{Cache, CacheMode, NOISY_SPREAD, Report, Row, Status};
use catalog::Family;
use std::fmt::Write as _;

/// The section's heading in the table.
fn title(f: Family) -> &'static str {
    match f {
        Family::Ceiling => "Ceilings (measured in this run)",
        Family::Reduce => "Reductions",
        Family::Transpose => "Transposes",
        Family::LaunchGap => "Launch gap",
        Family::Faults => {
            "Fault catalogue (each fault, then its fixed twin; vs ref: against the twin)"
        }
        Family::Rows => {
            "Row-wise: softmax, RMSNorm, LayerNorm (vs copy: against the D2D copy of the same matrix)"
        }
    }
}

/// How much of the ceilings' and roofs' rows a table shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoofRows {
    /// One line per roof, one column per compiler (the fastest row of each).
    Summary,
    /// The summary, then every ceiling and roof row.
    All,
}

/// Fixed-width (markdown) tables, the answer first: the device header, the headline, one
/// table per section of kernels, then the ceilings and roofs they are measured against (a
/// summary, or every row with [`RoofRows::All`]).
pub fn table(r: &Report, roof_rows: RoofRows) -> String {
    let mut s = header(r);
    if !r.headline.is_empty() {
        let _ = writeln!(s, "\n## Headline\n");
        for h in &r.headline {
            let _ = writeln!(s, "- {h}");
        }
    }
    for section in Family::ALL.into_iter().filter(|&f| f != Family::Ceiling) {
        sections(&mut s, r, section);
    }
    if let Some(t) = roofs_table(r) {
        let _ = writeln!(
            s,
            "\n## Ceilings and roofs, {} (the fastest row of each, per compiler)\n",
            r.caches().first().copied().unwrap_or_default().label()
        );
        let _ = writeln!(s, "{t}");
        let rows = r
            .rows
            .iter()
            .filter(|x| x.section == Family::Ceiling)
            .count();
        if roof_rows == RoofRows::Summary {
            let _ = writeln!(
                s,
                "\n{rows} ceiling and roof rows: `--roof-rows` prints them; the results file holds them"
            );
        }
    }
    if roof_rows == RoofRows::All {
        sections(&mut s, r, Family::Ceiling);
    }
    if r.failed > 0 {
        let _ = writeln!(s, "\n{} row(s) FAILED verification or launch", r.failed);
    }
    s
}

/// The device, the run's settings and the model's rule.
fn header(r: &Report) -> String {
    let mut s = String::new();
    let d = &r.device;
    let _ = writeln!(
        s,
        "# lab bench: {} (sm_{}, {} SMs, L2 {:.1} MiB, {:.1} GiB)",
        d.name,
        d.compute_capability.replace('.', ""),
        d.sm_count,
        d.l2_bytes as f64 / (1 << 20) as f64,
        d.memory_bytes as f64 / (1u64 << 30) as f64,
    );
    let _ = writeln!(
        s,
        "driver {} (CUDA {}), CUB runtime {}, max clocks SM {} MHz / memory {} MHz, bus {} bits",
        d.driver_version.as_deref().unwrap_or("unknown"),
        d.driver_cuda,
        d.cub_runtime.as_deref().unwrap_or("not built in"),
        d.sm_clock_max_mhz,
        d.memory_clock_max_mhz,
        d.memory_bus_bits,
    );
    let _ = writeln!(s, "clocks before: {}", r.clocks_before);
    let _ = writeln!(s, "clocks after:  {}", r.clocks_after);
    let _ = writeln!(s, "commit {}, {}", short(&r.commit), r.date);
    let _ = writeln!(s, "command: {}", r.command_line);
    if let Some(p) = &r.config.placement {
        let _ = writeln!(s, "{}", p.describe());
    }
    let _ = writeln!(
        s,
        "{} timed reps per row after {} warm-up (CUDA events around each launch; median, min, max); \
         noisy: (max - min) / median > {:.0}%",
        r.config.reps,
        r.config.warmup,
        NOISY_SPREAD * 100.0
    );
    let _ = writeln!(s, "{}", cache_line(r));
    if r.rows.iter().any(|x| x.predicted_us.is_some()) {
        let _ = writeln!(
            s,
            "model: {}; % of bound = predicted / measured median, ! = off by more than 10%",
            catalog::model::RULE
        );
    }
    s
}

/// `section`'s tables, one per cache.
fn sections(s: &mut String, r: &Report, section: Family) {
    for cache in r.caches() {
        let rows: Vec<&Row> = r
            .rows
            .iter()
            .filter(|x| x.section == section && x.cache == cache)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(s, "\n## {}, {}\n", title(section), cache.label());
        let _ = writeln!(s, "{}", section_table(section, &rows));
    }
}

/// The roofs of each compiler side by side: one line per roof, its fastest row on that
/// compiler (the driver's copy, which belongs to no compiler, in every column). None when the
/// run measured no ceilings.
fn roofs_table(r: &Report) -> Option<comfy_table::Table> {
    use comfy_table::{CellAlignment, Table, presets::ASCII_MARKDOWN};
    let cache = r.caches().first().copied().unwrap_or_default();
    let hz = r.roofs.as_ref().and_then(|x| x.sm_clock_hz);
    let mut columns: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for backend in &r.config.backends {
        let rows: Vec<Row> = r
            .rows
            .iter()
            .filter(|x| {
                x.backend == *backend
                    || x.backend
                        .backend()
                        .is_none_or(|b| !r.config.backends.contains(&b))
            })
            .cloned()
            .collect();
        if let Some(roofs) = catalog::Roofs::from_rows(&rows, cache, hz) {
            columns.push((backend.to_string(), roofs.table_rows(r.device.sm_count)));
        }
    }
    if columns.is_empty() {
        return None;
    }
    let mut names: Vec<String> = Vec::new();
    for (_, rows) in &columns {
        for (name, _) in rows {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    let mut t = Table::new();
    let mut head = vec!["roof".to_string()];
    head.extend(columns.iter().map(|(b, _)| b.clone()));
    t.load_style(ASCII_MARKDOWN).set_header(head);
    for name in &names {
        let mut cells = vec![name.clone()];
        for (_, rows) in &columns {
            cells.push(
                rows.iter()
                    .find(|(n, _)| n == name)
                    .map_or("-".to_string(), |(_, v)| v.clone()),
            );
        }
        t.add_row(cells);
    }
    for i in 1..=columns.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    Some(t)
}

/// The header's line on the L2: what hot and cold mean in this run, and the flush's size.
pub fn cache_line(r: &Report) -> String {
    const HOT: &str =
        "repeated launches on the same data (an input that fits in the L2 is read from it)";
    let l2 = r.device.l2_bytes;
    let cold = match r.config.l2_flush_bytes {
        Some(b) => format!(
            "before every launch, warm-up included, {:.1} MiB{} written with \
             cuMemsetD32Async, then read back by read_stream (the L2 left holding clean \
             lines), on the bench stream and waited for, then the output's reset; outside the \
             timing events",
            b as f64 / (1u64 << 20) as f64,
            match l2 {
                0 => String::new(),
                l2 if b.is_multiple_of(l2) => format!(" ({} x the L2)", b / l2),
                l2 => format!(" ({:.2} x the L2)", b as f64 / l2 as f64),
            }
        ),
        None => "flushed before every launch (flush size not recorded)".into(),
    };
    match r.config.cache {
        CacheMode::Hot => format!("{}: {HOT}", Cache::Hot.label()),
        CacheMode::Cold => format!("{}: {cold}", Cache::Cold.label()),
        CacheMode::Both => format!(
            "each row {}, then {}; {}: {HOT}; {}: {cold}",
            Cache::Hot.label(),
            Cache::Cold.label(),
            Cache::Hot.name(),
            Cache::Cold.name()
        ),
    }
}

fn section_table(section: Family, rows: &[&Row]) -> comfy_table::Table {
    use comfy_table::{CellAlignment, Table, presets::ASCII_MARKDOWN};
    let gap = section == Family::LaunchGap;
    let (ceiling, reference) = match section {
        Family::Reduce => ("% read ceiling", "vs CUB"),
        Family::Transpose | Family::Rows => ("% copy", "vs copy"),
        _ => ("% ceiling", "vs ref"),
    };
    let (header, numeric) = if gap {
        let h = vec![
            "kernel",
            "backend",
            "launches",
            "n",
            "median us",
            "min us",
            "max us",
            "us/kernel",
            "note",
        ];
        (h, 2..8)
    } else {
        let h = vec![
            "kernel",
            "backend",
            "dtype",
            "n",
            "MB",
            "median us",
            "min us",
            "max us",
            "GB/s",
            ceiling,
            reference,
            "bound",
            "pred us",
            "% of bound",
            "note",
        ];
        (h, 3..14)
    };
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN).set_header(header);
    for r in rows {
        // A failed row shows FAILED wherever a speed would be: never a number.
        let speed = |v: Option<f64>, f: fn(f64) -> String| match r.status {
            Status::Failed => "FAILED".to_string(),
            _ => v.map_or("-".into(), f),
        };
        let mut cells = vec![r.kernel.clone(), r.backend.to_string()];
        if gap {
            cells.extend([r.launches.to_string(), r.n.to_string()]);
        } else {
            cells.extend([
                r.dtype.to_string(),
                r.size.clone(),
                format!("{:.1}", r.bytes as f64 / 1e6),
            ]);
        }
        cells.extend([
            speed(r.median_us, fmt_us),
            speed(r.min_us, fmt_us),
            speed(r.max_us, fmt_us),
        ]);
        if gap {
            cells.push(speed(r.us_per_launch, fmt_us));
        } else {
            cells.extend([
                speed(r.gbps, fmt_gbps),
                r.pct_of_ceiling.map_or("-".into(), |p| format!("{p:.1}")),
                r.vs_reference.map_or("-".into(), |v| format!("{v:.3}")),
                r.bound.clone().unwrap_or_else(|| "-".into()),
                r.predicted_us.map_or("-".into(), fmt_us),
                super::model::pct_cell(r),
            ]);
        }
        cells.push(note(r));
        t.add_row(cells);
    }
    for i in numeric {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// The note column: the outcome first (FAILED, skipped, noisy), then the row's note.
pub fn note(r: &Row) -> String {
    match r.status {
        Status::Failed => format!("FAILED: {}", r.note),
        Status::Skipped => format!("skipped: {}", r.note),
        Status::Ok => {
            let mut parts = Vec::new();
            if r.noisy {
                parts.push(format!(
                    "noisy (spread {:.1}%)",
                    r.spread_pct.unwrap_or(0.0)
                ));
            }
            // A compute-only row (fma_peak) has no GB/s: its rate goes in the note.
            if let (None, Some(g)) = (r.gbps, r.gflops) {
                parts.push(format!("{g:.0} GFLOP/s"));
            }
            // A roof's rate is per operation (red, wavefront, block, sector).
            parts.extend(catalog::roofs::rate(r));
            parts.push(r.note.clone());
            parts.retain(|p| !p.is_empty());
            parts.join("; ")
        }
    }
}

/// Microseconds with precision that suits their size: 3.41, 561.2, 61234.
pub fn fmt_us(us: f64) -> String {
    if us < 10.0 {
        format!("{us:.2}")
    } else if us < 1000.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.0}")
    }
}

pub fn fmt_gbps(g: f64) -> String {
    if g < 100.0 {
        format!("{g:.1}")
    } else {
        format!("{g:.0}")
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// The whole report as pretty JSON.
pub fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).expect("a report always serializes")
}

/// One CSV line per row, with a header line.
pub fn csv(r: &Report) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in &r.rows {
        // One line per row: the samples list stays in the JSON (a CSV cell holds no list).
        let row = Row {
            samples_us: Vec::new(),
            ..row.clone()
        };
        w.serialize(row).expect("a row always serializes");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("csv is UTF-8")
}
