//! The bench's results: one `Row` per measurement, the `Report` around them, the ratios
//! between rows, and one printer per format (table, JSON, CSV), plus the results file.
//!
//! Everything here is plain data and arithmetic, tested without a GPU.

use super::args::Section;
use super::env::Clocks;
use crate::files::write_atomic;
use crate::timing::Samples;
use catalog::Backend;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Bumped whenever a field of `Report` or `Row` changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;
/// A row whose (max − min) / median exceeds this is marked noisy.
pub const NOISY_SPREAD: f64 = 0.05;

/// Did the row's result check out?
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Verified after timing; the timing fields are set.
    Ok,
    /// Wrong result or a driver error: no timing is reported, `note` has the error.
    Failed,
    /// Not measured (e.g. CUB not built in): `note` says why.
    Skipped,
}

/// One measurement: a kernel at one size on one backend.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub section: Section,
    /// PTX entry without the type suffix (`reduce_v6`), or `d2d_copy`, `cub_reduce_sum`, `bump_*`.
    pub kernel: String,
    /// `llvm`, `nvvm` (the Rust kernels), `nvcc` (their CUDA C++ twins), `cub`, or `driver`
    /// (`cuMemcpyDtoDAsync`).
    pub backend: String,
    /// Element type: `f32`, `i32`.
    pub dtype: String,
    /// Elements per launch (transposes: rows × cols; launch gap: per `bump` launch).
    pub n: u64,
    /// `2^28`, `4096x4096`, `1000x4096` (launches × elements).
    pub size: String,
    /// Bytes that must move per timed sample (reads + writes).
    pub bytes: u64,
    /// Floating-point operations per timed sample: `n − 1` for an f32 reduction, 2 per FMA
    /// for `fma_peak`, 0 otherwise (i32 adds are not FLOPs). Absent from files written
    /// before it was added (read as 0).
    #[serde(default)]
    pub flops: u64,
    /// Kernel launches per timed sample (1, or 1000 for the launch gap).
    pub launches: u32,
    pub status: Status,
    /// Timed repetitions (0 when not timed).
    pub reps: u32,
    pub median_us: Option<f64>,
    pub min_us: Option<f64>,
    pub max_us: Option<f64>,
    /// (max − min) / median, in percent.
    pub spread_pct: Option<f64>,
    pub noisy: bool,
    /// `bytes` / median, in 10^9 bytes per second.
    pub gbps: Option<f64>,
    /// `flops` / median, in 10^9 floating-point operations per second (None when `flops` is
    /// 0). The roofline's y axis; `fma_peak`'s is its compute roof.
    #[serde(default)]
    pub gflops: Option<f64>,
    /// median / launches (the launch-gap demo's number).
    pub us_per_launch: Option<f64>,
    /// The ceiling compared with (`read_stream f32 2^28`: the best of its rows).
    pub ceiling: Option<String>,
    /// gbps / ceiling's gbps, in percent.
    pub pct_of_ceiling: Option<f64>,
    /// The reference compared with (`cub_reduce_sum f32 2^28`, `d2d_copy f32 4096x4096`).
    pub reference: Option<String>,
    /// gbps / the reference's gbps: above 1 is faster than CUB / the copy.
    pub vs_reference: Option<f64>,
    /// How the result was verified, the error of a failed row, or why it was skipped.
    pub note: String,
}

impl Row {
    /// A row not yet measured.
    pub fn new(
        section: Section,
        kernel: &str,
        backend: &str,
        dtype: &str,
        n: u64,
        size: String,
        bytes: u64,
    ) -> Row {
        Row {
            section,
            kernel: kernel.into(),
            backend: backend.into(),
            dtype: dtype.into(),
            n,
            size,
            bytes,
            flops: 0,
            launches: 1,
            status: Status::Skipped,
            reps: 0,
            median_us: None,
            min_us: None,
            max_us: None,
            spread_pct: None,
            noisy: false,
            gbps: None,
            gflops: None,
            us_per_launch: None,
            ceiling: None,
            pct_of_ceiling: None,
            reference: None,
            vs_reference: None,
            note: String::new(),
        }
    }

    /// How other rows name this one as their ceiling or reference: `read_stream f32 2^28`.
    /// (No backend: several backends' rows of one target count as one, the best.)
    pub fn target(&self) -> String {
        target(&self.kernel, &self.dtype, &self.size)
    }

    /// `reduce_v6 [llvm] f32 2^28`, for progress lines and messages.
    pub fn label(&self) -> String {
        format!(
            "{} [{}] {} {}",
            self.kernel, self.backend, self.dtype, self.size
        )
    }

    /// Fills in the timing of a verified measurement.
    pub fn passed(mut self, s: &Samples, note: impl Into<String>) -> Row {
        let median = s.median();
        self.status = Status::Ok;
        self.reps = s.ms.len() as u32;
        self.median_us = Some(median * 1e3);
        self.min_us = Some(s.min() * 1e3);
        self.max_us = Some(s.max() * 1e3);
        self.spread_pct = Some(s.spread() * 100.0);
        self.noisy = is_noisy(s);
        self.gbps = (self.bytes > 0).then(|| gbps(self.bytes, median));
        self.gflops = (self.flops > 0).then(|| gflops(self.flops, median));
        self.us_per_launch = Some(median * 1e3 / self.launches.max(1) as f64);
        self.add_note(note.into());
        self
    }

    /// A wrong result or an error: no speed, ever (any timing already filled in is dropped).
    pub fn failed(mut self, error: impl Into<String>) -> Row {
        self.status = Status::Failed;
        self.median_us = None;
        self.min_us = None;
        self.max_us = None;
        self.spread_pct = None;
        self.noisy = false;
        self.gbps = None;
        self.gflops = None;
        self.us_per_launch = None;
        self.add_note(error.into());
        self
    }

    pub fn skipped(mut self, why: impl Into<String>) -> Row {
        self.status = Status::Skipped;
        self.add_note(why.into());
        self
    }

    /// A note set before measuring (what the row is); the outcome's note follows it.
    pub fn with_note(mut self, note: &str) -> Row {
        self.note = note.into();
        self
    }

    fn add_note(&mut self, note: String) {
        if self.note.is_empty() {
            self.note = note;
        } else if !note.is_empty() {
            self.note = format!("{}; {note}", self.note);
        }
    }

    /// Sets the floating-point operations one timed sample does.
    pub fn with_flops(mut self, flops: u64) -> Row {
        self.flops = flops;
        self
    }

    /// Names the rows this one is compared with.
    pub fn compared_with(mut self, ceiling: Option<String>, reference: Option<String>) -> Row {
        self.ceiling = ceiling;
        self.reference = reference;
        self
    }
}

/// `kernel dtype size`: see [`Row::target`].
pub fn target(kernel: &str, dtype: &str, size: &str) -> String {
    format!("{kernel} {dtype} {size}")
}

/// Bytes per second, in GB/s (10^9), from a time in milliseconds.
pub fn gbps(bytes: u64, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e-3) / 1e9
}

/// Floating-point operations per second, in GFLOP/s (10^9), from a time in milliseconds.
pub fn gflops(flops: u64, ms: f64) -> f64 {
    flops as f64 / (ms * 1e-3) / 1e9
}

pub fn is_noisy(s: &Samples) -> bool {
    s.spread() > NOISY_SPREAD
}

/// Resolves every row's `ceiling` and `reference` against the verified rows they name (the
/// best bandwidth among rows of that target) and fills in `pct_of_ceiling`, `vs_reference`.
/// A ceiling or reference that failed or was not measured leaves the ratio empty.
pub fn fill_ratios(rows: &mut [Row]) {
    let mut best: std::collections::HashMap<String, f64> = Default::default();
    for r in rows.iter().filter(|r| r.status == Status::Ok) {
        if let Some(g) = r.gbps {
            let e = best.entry(r.target()).or_insert(g);
            *e = e.max(g);
        }
    }
    for r in rows.iter_mut() {
        let (Status::Ok, Some(g)) = (r.status, r.gbps) else {
            continue;
        };
        let of = |t: &Option<String>| t.as_ref().and_then(|t| best.get(t)).map(|&b| g / b);
        r.pct_of_ceiling = of(&r.ceiling).map(|x| x * 100.0);
        r.vs_reference = of(&r.reference);
    }
}

/// The device, as the report header shows it.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Device {
    pub name: String,
    /// `9.0`.
    pub compute_capability: String,
    pub sm_count: u32,
    pub l2_bytes: u64,
    pub memory_bytes: u64,
    /// The kernel driver's version (`580.159.04`), from NVML or /proc.
    pub driver_version: Option<String>,
    /// The CUDA version the driver supports (`13.0`).
    pub driver_cuda: String,
    /// The CUDA runtime CUB was linked with (`13.0`), if CUB is built in.
    pub cub_runtime: Option<String>,
    pub sm_clock_max_mhz: u32,
    pub memory_clock_max_mhz: u32,
    pub memory_bus_bits: u32,
}

/// The resolved flags, as recorded in the report.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Config {
    pub mode: String,
    pub sizes: Vec<u64>,
    pub transpose: Vec<u64>,
    pub backends: Vec<String>,
    pub dtypes: Vec<String>,
    pub kernel_filter: Vec<String>,
    pub reps: u32,
    pub warmup: u32,
    pub seed: u64,
    /// Where the reductions' result word was, and why (absent when no reduction ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::placement::Placement>,
}

/// One run of `lab bench`: what the results file holds and `--format json` prints.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: String,
    /// Start of the run, RFC 3339, UTC.
    pub date: String,
    pub command_line: String,
    /// The commit the binary was built from.
    pub commit: String,
    pub device: Device,
    pub clocks_before: Clocks,
    pub clocks_after: Clocks,
    pub config: Config,
    pub rows: Vec<Row>,
    /// The headline ratios, as sentences.
    pub headline: Vec<String>,
    /// Rows whose result was wrong or whose launch failed.
    pub failed: usize,
}

impl Report {
    /// Fills in the ratios, the headline and the failure count once every row is in.
    pub fn finish(&mut self) {
        fill_ratios(&mut self.rows);
        self.headline = headline(&self.rows);
        self.failed = self
            .rows
            .iter()
            .filter(|r| r.status == Status::Failed)
            .count();
    }

    /// `nvidia-h200-default-20261129T120000Z`: the results file's name, without extension.
    pub fn file_stem(&self) -> String {
        let slug: String = self
            .device
            .name
            .to_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let slug = slug
            .split('-')
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let stamp: String = self
            .date
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .take(15) // 20261129T120000
            .collect();
        format!("{}-{}-{stamp}Z", slug, self.config.mode)
    }
}

/// Sizes the headline quotes in a sweep (the performance issue's sizes).
const HEADLINE_SIZES: [u64; 4] = [1 << 20, 1 << 24, 1 << 28, 1 << 30];

/// A median per launch below this times the launch more than the kernel: launch latency on
/// an H200 is about 2–4 µs, so under 10 µs the kernel's own work is not what is measured. The
/// headline compares no group (one size of reductions, one transpose shape) with such a row,
/// nor with a ceiling or reference that is one: the ratios would be ratios of launch costs.
pub const LAUNCH_DOMINATED_US: f64 = 10.0;

/// The headline numbers: the best reduction and v6 against CUB and the read ceiling,
/// the padded and best transpose against the copy, the launch gap per kernel. A group whose
/// launches dominate its times ([`LAUNCH_DOMINATED_US`]) gets one line saying so instead.
pub fn headline(rows: &[Row]) -> Vec<String> {
    let ok = |r: &&Row| r.status == Status::Ok && r.gbps.is_some();
    let mut sizes: Vec<u64> = rows
        .iter()
        .filter(|r| r.section == Section::Reduce)
        .map(|r| r.n)
        .collect();
    sizes.sort();
    sizes.dedup();
    if sizes.len() > HEADLINE_SIZES.len() {
        sizes.retain(|n| HEADLINE_SIZES.contains(n));
    }
    let ratios = |r: &Row| {
        let mut s = format!("{:.0} GB/s", r.gbps.unwrap_or(0.0));
        if let Some(v) = r.vs_reference {
            let what = if r.section == Section::Reduce {
                "CUB"
            } else {
                "copy"
            };
            let _ = write!(s, " = {v:.3} x {what}");
        }
        if let Some(p) = r.pct_of_ceiling {
            let _ = write!(s, ", {p:.1}% of the {}", ceiling_name(r.section));
        }
        s
    };
    let mut out = Vec::new();
    let mut groups: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r.section == Section::Reduce && sizes.contains(&r.n))
        .map(|r| (r.dtype.clone(), r.size.clone()))
        .collect();
    groups.dedup();
    for (dtype, size) in groups {
        let in_group =
            |r: &&Row| r.section == Section::Reduce && r.dtype == dtype && r.size == size;
        let group: Vec<&Row> = rows.iter().filter(in_group).filter(ok).collect();
        if let Some(us) = launch_dominated(&group, rows) {
            out.push(not_compared(&format!("reductions {dtype} {size}"), us));
            continue;
        }
        let ours = rows
            .iter()
            .filter(in_group)
            .filter(ok)
            .filter(|r| is_rust(&r.backend));
        if let Some(b) = ours
            .clone()
            .max_by(|a, b| a.gbps.partial_cmp(&b.gbps).unwrap())
        {
            out.push(format!(
                "best reduction {dtype} {size}: {} [{}] {}",
                b.kernel,
                b.backend,
                ratios(b)
            ));
        }
        for r in ours.filter(|r| r.kernel == "reduce_v6") {
            out.push(format!(
                "reduce_v6 [{}] {dtype} {size}: {}",
                r.backend,
                ratios(r)
            ));
        }
        for r in rows
            .iter()
            .filter(in_group)
            .filter(ok)
            .filter(|r| r.backend == "cub")
        {
            out.push(format!("{} {dtype} {size}: {}", r.kernel, ratios(r)));
        }
        out.extend(rust_vs_cpp(&group, &format!("{dtype} {size}")));
    }
    let mut shapes: Vec<&str> = rows
        .iter()
        .filter(|r| r.section == Section::Transpose && r.backend != "driver")
        .map(|r| r.size.as_str())
        .collect();
    shapes.dedup();
    for shape in shapes {
        let group: Vec<&Row> = rows
            .iter()
            .filter(|r| r.section == Section::Transpose && r.size == shape)
            .filter(ok)
            .collect();
        if let Some(us) = launch_dominated(&group, rows) {
            out.push(not_compared(&format!("transposes at {shape}"), us));
            continue;
        }
        let ours = rows
            .iter()
            .filter(|r| r.section == Section::Transpose && r.size == shape && is_rust(&r.backend))
            .filter(|r| r.kernel.starts_with("transpose"))
            .filter(ok);
        if let Some(b) = ours
            .clone()
            .max_by(|a, b| a.gbps.partial_cmp(&b.gbps).unwrap())
        {
            out.push(format!(
                "best transpose {shape}: {} [{}] {}",
                b.kernel,
                b.backend,
                ratios(b)
            ));
        }
        for r in ours.filter(|r| r.kernel == "transpose_padded") {
            out.push(format!(
                "transpose_padded [{}] {shape}: {}",
                r.backend,
                ratios(r)
            ));
        }
        out.extend(rust_vs_cpp(&group, shape));
    }
    let mut backends: Vec<&str> = rows
        .iter()
        .filter(|r| r.section == Section::LaunchGap)
        .map(|r| r.backend.as_str())
        .collect();
    backends.dedup();
    for b in backends {
        let us = |k: &str| {
            rows.iter()
                .find(|r| r.section == Section::LaunchGap && r.backend == b && r.kernel == k)
                .filter(|r| r.status == Status::Ok)
                .and_then(|r| r.us_per_launch)
                .map_or("-".to_string(), |u| format!("{u:.2}"))
        };
        out.push(format!(
            "launch gap [{b}], us per kernel: A sync after each {}, B back-to-back {}, C graph {} (capture + instantiate once: {} us)",
            us("bump_sync_each"),
            us("bump_back_to_back"),
            us("bump_graph"),
            us("bump_graph_capture"),
        ));
    }
    out
}

/// The fastest median per launch among `group` and the rows it is compared with (its
/// ceilings and references), when that is under [`LAUNCH_DOMINATED_US`]: then the group is
/// not compared.
fn launch_dominated(group: &[&Row], rows: &[Row]) -> Option<f64> {
    let named: Vec<&String> = group
        .iter()
        .flat_map(|r| r.ceiling.iter().chain(&r.reference))
        .collect();
    let compared_with = rows.iter().filter(|r| named.contains(&&r.target()));
    group
        .iter()
        .copied()
        .chain(compared_with)
        .filter(|r| r.status == Status::Ok)
        .filter_map(|r| r.us_per_launch)
        .min_by(f64::total_cmp)
        .filter(|&us| us < LAUNCH_DOMINATED_US)
}

/// The headline's line for a launch-dominated group.
fn not_compared(what: &str, fastest_us: f64) -> String {
    format!(
        "{what}: launch-dominated (fastest median {} us < {LAUNCH_DOMINATED_US:.0} us), not compared",
        fmt_us(fastest_us)
    )
}

/// Rows of one of the Rust compilers (not CUB, the driver's copy or the CUDA C++ twins).
fn is_rust(backend: &str) -> bool {
    Backend::RUST.iter().any(|b| b.name() == backend)
}

/// "Rust / C++" for one group of rows (one dtype and size, or one transpose shape): each
/// kernel's Rust rows as a ratio of its nvcc row's bandwidth (> 1: Rust is faster). None
/// without nvcc rows.
fn rust_vs_cpp(group: &[&Row], what: &str) -> Option<String> {
    let mut cells = Vec::new();
    for cpp in group.iter().filter(|r| r.backend == Backend::Nvcc.name()) {
        let ratios: Vec<String> = group
            .iter()
            .filter(|r| r.kernel == cpp.kernel && is_rust(&r.backend))
            .filter_map(|r| Some(format!("{} {:.3}", r.backend, r.gbps? / cpp.gbps?)))
            .collect();
        if !ratios.is_empty() {
            cells.push(format!("{} {}", cpp.kernel, ratios.join(" ")));
        }
    }
    (!cells.is_empty()).then(|| format!("Rust / C++ (nvcc) {what}: {}", cells.join("; ")))
}

fn ceiling_name(s: Section) -> &'static str {
    match s {
        Section::Reduce => "read ceiling",
        _ => "copy ceiling",
    }
}

// ---------------------------------------------------------------------------------------------
// Printers: one per format, all from the same `Report`.

/// Fixed-width (markdown) tables: the device header, one table per section, the headline.
pub fn table(r: &Report) -> String {
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
    for section in Section::ALL {
        let rows: Vec<&Row> = r.rows.iter().filter(|x| x.section == section).collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(s, "\n## {}\n", section.title());
        let _ = writeln!(s, "{}", section_table(section, &rows));
    }
    if !r.headline.is_empty() {
        let _ = writeln!(s, "\n## Headline\n");
        for h in &r.headline {
            let _ = writeln!(s, "- {h}");
        }
    }
    if r.failed > 0 {
        let _ = writeln!(s, "\n{} row(s) FAILED verification or launch", r.failed);
    }
    s
}

fn section_table(section: Section, rows: &[&Row]) -> comfy_table::Table {
    use comfy_table::{CellAlignment, Table, presets::ASCII_MARKDOWN};
    let gap = section == Section::LaunchGap;
    let (ceiling, reference) = match section {
        Section::Reduce => ("% read ceiling", "vs CUB"),
        Section::Transpose => ("% copy", "vs copy"),
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
            "note",
        ];
        (h, 3..11)
    };
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN).set_header(header);
    for r in rows {
        // A failed row shows FAILED wherever a speed would be: never a number.
        let speed = |v: Option<f64>, f: fn(f64) -> String| match r.status {
            Status::Failed => "FAILED".to_string(),
            _ => v.map_or("-".into(), f),
        };
        let mut cells = vec![r.kernel.clone(), r.backend.clone()];
        if gap {
            cells.extend([r.launches.to_string(), r.n.to_string()]);
        } else {
            cells.extend([
                r.dtype.clone(),
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

fn note(r: &Row) -> String {
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
        w.serialize(row).expect("a row always serializes");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("csv is UTF-8")
}

/// Writes `STEM.json` (the report) and `STEM.txt` (the table, as printed) into `dir`, each
/// through a temporary file and a rename, so a reader never sees half a file.
pub fn write_results(dir: &Path, r: &Report) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let stem = r.file_stem();
    let txt_path = dir.join(format!("{stem}.txt"));
    write_atomic(&txt_path, table(r).as_bytes())?;
    crate::files::report_written(&txt_path);
    let json_path = dir.join(format!("{stem}.json"));
    write_atomic(&json_path, (json(r) + "\n").as_bytes())?;
    crate::files::report_written(&json_path);
    Ok(json_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(ms: &[f64]) -> Samples {
        Samples::new(ms.to_vec())
    }

    fn reduce(kernel: &str, backend: &str, dtype: &str, ms: f64) -> Row {
        let n = 1u64 << 28;
        let size = "2^28".to_string();
        Row::new(
            Section::Reduce,
            kernel,
            backend,
            dtype,
            n,
            size.clone(),
            n * 4,
        )
        .compared_with(
            Some(target("read_stream", "f32", &size)),
            (backend != "cub").then(|| target("cub_reduce_sum", dtype, &size)),
        )
        .passed(&samples(&[ms, ms, ms]), "exact")
    }

    fn rows() -> Vec<Row> {
        let n = 1u64 << 28;
        let read = |b: &str, ms| {
            Row::new(
                Section::Ceiling,
                "read_stream",
                b,
                "f32",
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
                Section::Reduce,
                "reduce_v6",
                "llvm",
                "i32",
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
        let r = Row::new(Section::Reduce, "k", "llvm", "f32", 1, "1".into(), 4)
            .passed(&samples(&[2.0, 2.2, 1.9]), "ok");
        assert!(r.noisy);
        assert_eq!(
            (r.min_us, r.max_us, r.median_us),
            (Some(1900.0), Some(2200.0), Some(2000.0))
        );
        assert!((r.spread_pct.unwrap() - 15.0).abs() < 1e-9);
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
        };
        r.finish();
        r
    }

    #[test]
    fn the_table_has_the_header_then_sections_and_never_a_speed_for_a_failed_row() {
        let r = report();
        assert_eq!(r.failed, 1);
        let t = table(&r);
        assert!(
            t.starts_with("# lab bench: NVIDIA H200 (sm_90, 132 SMs, L2 60.0 MiB"),
            "{t}"
        );
        assert!(t.contains("driver 580.159.04 (CUDA 13.0)"));
        let ceil = t.find("## Ceilings").unwrap();
        let red = t.find("## Reductions").unwrap();
        assert!(ceil < red);
        let failed = t.lines().find(|l| l.contains("| i32")).unwrap();
        assert!(failed.contains("FAILED: sum 3"), "{failed}");
        assert!(
            !failed.contains("1074"),
            "a failed row shows no speed: {failed}"
        );
        let v6 = t
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
        let widths: Vec<usize> = t[red..]
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
            h.contains("best reduction f32 2^28: reduce_v6 [llvm] 2147 GB/s = 0.800 x CUB, 50.0% of the read ceiling"),
            "{h}"
        );
        assert!(h.contains("reduce_v6 [llvm] f32 2^28:"), "{h}");
        assert!(
            h.contains("cub_reduce_sum f32 2^28: 2684 GB/s, 62.5% of the read ceiling"),
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
            h.contains("best reduction f32 2^28: reduce_v6 [llvm]"),
            "the best is a Rust row: {h}"
        );
        assert!(
            h.contains("Rust / C++ (nvcc) f32 2^28: reduce_v3 llvm 0.250; reduce_v6 llvm 2.000"),
            "{h}"
        );
        // Without C++ rows, no comparison line.
        assert!(
            !headline(&super::tests::rows())
                .join("\n")
                .contains("Rust / C++")
        );
    }

    /// Transpose rows of one square shape, each compared with the driver's copy of it.
    fn transposes(edge: u64, copy_us: f64, kernels: &[(&str, &str, f64)]) -> Vec<Row> {
        let (e, shape) = (edge * edge, format!("{edge}x{edge}"));
        let row = |kernel: &str, backend: &str| {
            Row::new(
                Section::Transpose,
                kernel,
                backend,
                "f32",
                e,
                shape.clone(),
                8 * e,
            )
        };
        let copy = target("d2d_copy", "f32", &shape);
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
                "transposes at 3x3: launch-dominated (fastest median 2.10 us < 10 us), not compared"
            ),
            "{h}"
        );
        assert!(!h.contains("best transpose 3x3"), "{h}");
        assert!(!h.contains("(nvcc) 3x3"), "{h}");
        // A shape whose every row takes longer is compared as before.
        assert!(
            h.contains("best transpose 8192x8192: transpose_swizzled [llvm]"),
            "{h}"
        );
        assert!(!h.contains("8192x8192: launch-dominated"), "{h}");
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
                "transposes at 1024x1024: launch-dominated (fastest median 9.99 us < 10 us)"
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
            h.contains("best transpose 1024x1024: transpose_swizzled [llvm]"),
            "{h}"
        );
    }

    #[test]
    fn launch_dominated_reductions_are_not_compared() {
        let n = 1u64 << 20;
        let size = "2^20".to_string();
        let row = |section, kernel: &str, backend: &str, us: f64| {
            Row::new(section, kernel, backend, "f32", n, size.clone(), n * 4)
                .compared_with(
                    (section == Section::Reduce).then(|| target("read_stream", "f32", &size)),
                    (section == Section::Reduce && backend != "cub")
                        .then(|| target("cub_reduce_sum", "f32", &size)),
                )
                .passed(&samples(&[us * 1e-3]), "ok")
        };
        let small = |read_us: f64, cub_us: f64, v7_us: f64| {
            let mut rows = rows();
            rows.extend([
                row(Section::Ceiling, "read_stream", "llvm", read_us),
                row(Section::Reduce, "cub_reduce_sum", "cub", cub_us),
                row(Section::Reduce, "reduce_v9", "llvm", v7_us),
            ]);
            fill_ratios(&mut rows);
            headline(&rows).join("\n")
        };
        // CUB's two kernels against v7's one, at 2^20: launch costs, not bandwidth.
        let h = small(3.0, 7.5, 4.4);
        assert!(
            h.contains("reductions f32 2^20: launch-dominated (fastest median 3.00 us < 10 us), not compared"),
            "{h}"
        );
        assert!(!h.contains("best reduction f32 2^20"), "{h}");
        assert!(!h.contains("cub_reduce_sum f32 2^20"), "{h}");
        // The 2^28 group beside it is still compared.
        assert!(
            h.contains("best reduction f32 2^28: reduce_v6 [llvm]"),
            "{h}"
        );
        // Every reduction past the threshold, but the read ceiling it is compared with is not.
        let h = small(8.0, 30.0, 20.0);
        assert!(
            h.contains("reductions f32 2^20: launch-dominated (fastest median 8.00 us"),
            "{h}"
        );
        // Everything past the threshold: compared.
        let h = small(12.0, 30.0, 20.0);
        assert!(
            h.contains("best reduction f32 2^20: reduce_v9 [llvm]"),
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
        assert_eq!(txt, table(&r));
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
            Section::Reduce,
            "reduce_v6",
            "llvm",
            "f32",
            n,
            "2^28".into(),
            4 * n,
        )
        .with_flops(n - 1)
        .passed(&samples(&[0.5]), "ok");
        assert!((r.gflops.unwrap() - (n - 1) as f64 / 0.5e-3 / 1e9).abs() < 1e-9);
        assert_eq!(note(&r), "ok", "a row with GB/s keeps its note");
        let fma = Row::new(
            Section::Ceiling,
            "fma_peak",
            "llvm",
            "f32",
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
}
