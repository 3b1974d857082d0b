//! The bench's results file (`lab bench --out`, `lab bench --format json`): one [`Report`],
//! its [`Row`]s, the device, the clocks and the resolved flags. `docs/json-schema.md`
//! describes every field.
//!
//! Reading needs only `schema_version` and `rows`: every other field of the report, the device,
//! the flags and the clocks reads as empty when a file lacks it, and so does every row field
//! added after the first version, so files written by earlier binaries still read.

use super::placement::Placement;
use crate::Family;
use serde::{Deserialize, Serialize};

/// Bumped whenever a field of `Report` or `Row` changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;

/// Did the row's result check out?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The report section: the kernel family's name (`reduce`, `transpose`, …).
    pub section: Family,
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
        section: Family,
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

    /// Appends `note` to the row's note (`; ` between them).
    pub fn add_note(&mut self, note: String) {
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

/// The device, as the report header shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
}

/// The GPU's clocks and what limits them, at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Clocks {
    /// Where the numbers come from (`nvml`), or why there are none.
    pub source: String,
    pub sm_mhz: Option<u32>,
    pub sm_max_mhz: Option<u32>,
    pub memory_mhz: Option<u32>,
    pub temperature_c: Option<u32>,
    pub power_w: Option<f64>,
    /// NVML's clock-throttle reasons (`GPU_IDLE`, `SW_POWER_CAP`, …); empty: none.
    pub throttle: Vec<String>,
}

impl std::fmt::Display for Clocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.sm_mhz.is_none() && self.memory_mhz.is_none() {
            return write!(f, "unknown ({})", self.source);
        }
        let n = |v: Option<u32>| v.map_or("?".to_string(), |v| v.to_string());
        write!(
            f,
            "SM {}/{} MHz, memory {} MHz, {} C, {} W, throttle: {}",
            n(self.sm_mhz),
            n(self.sm_max_mhz),
            n(self.memory_mhz),
            n(self.temperature_c),
            self.power_w.map_or("?".to_string(), |p| format!("{p:.0}")),
            if self.throttle.is_empty() {
                "none".to_string()
            } else {
                self.throttle.join("|")
            }
        )
    }
}

/// One run of `lab bench`: what the results file holds and `--format json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    #[serde(default)]
    pub tool: String,
    /// Start of the run, RFC 3339, UTC.
    #[serde(default)]
    pub date: String,
    #[serde(default)]
    pub command_line: String,
    /// The commit the binary was built from.
    #[serde(default)]
    pub commit: String,
    #[serde(default)]
    pub device: Device,
    #[serde(default)]
    pub clocks_before: Clocks,
    #[serde(default)]
    pub clocks_after: Clocks,
    #[serde(default)]
    pub config: Config,
    pub rows: Vec<Row>,
    /// The headline ratios, as sentences.
    #[serde(default)]
    pub headline: Vec<String>,
    /// Rows whose result was wrong or whose launch failed.
    #[serde(default)]
    pub failed: usize,
}

/// The reduction sizes among `rows`, ascending, each once.
pub fn reduce_sizes(rows: &[Row]) -> Vec<u64> {
    let mut n: Vec<u64> = rows
        .iter()
        .filter(|r| r.section == Family::Reduce)
        .map(|r| r.n)
        .collect();
    n.sort_unstable();
    n.dedup();
    n
}

impl Report {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_print_what_is_known() {
        let none = Clocks {
            source: "NVML unavailable: x".into(),
            ..Clocks::default()
        };
        assert_eq!(none.to_string(), "unknown (NVML unavailable: x)");
        let c = Clocks {
            source: "nvml".into(),
            sm_mhz: Some(1980),
            sm_max_mhz: Some(1980),
            memory_mhz: Some(3201),
            temperature_c: Some(41),
            power_w: Some(120.4),
            throttle: vec!["GPU_IDLE".into()],
        };
        assert_eq!(
            c.to_string(),
            "SM 1980/1980 MHz, memory 3201 MHz, 41 C, 120 W, throttle: GPU_IDLE"
        );
    }

    #[test]
    fn a_row_names_its_target_and_a_failure_drops_its_timing() {
        let mut r = Row::new(Family::Reduce, "k", "llvm", "f32", 4, "4".into(), 16);
        assert_eq!(r.target(), "k f32 4");
        assert_eq!(r.label(), "k [llvm] f32 4");
        r.median_us = Some(1.0);
        r.gbps = Some(16.0);
        let f = r.with_note("what").failed("boom");
        assert_eq!(
            (f.status, f.median_us, f.gbps),
            (Status::Failed, None, None)
        );
        assert_eq!(f.note, "what; boom");
    }

    /// The smallest file a reader accepts: the schema version and the rows, each row without
    /// the fields added after the first version.
    #[test]
    fn a_file_with_only_the_rows_reads() {
        let text = r#"{"schema_version": 1, "rows": [{"section": "launch_gap", "kernel": "bump_graph",
            "backend": "llvm", "dtype": "f32", "n": 4096, "size": "1000x4096", "bytes": 0,
            "launches": 1000, "status": "ok", "reps": 20, "median_us": 2.0, "min_us": 1.0,
            "max_us": 3.0, "spread_pct": 1.0, "noisy": false, "gbps": null,
            "us_per_launch": 0.002, "ceiling": null, "pct_of_ceiling": null, "reference": null,
            "vs_reference": null, "note": ""}]}"#;
        let r: Report = serde_json::from_str(text).unwrap();
        assert_eq!(r.rows[0].section, Family::LaunchGap);
        assert_eq!((r.rows[0].flops, r.rows[0].gflops), (0, None));
        assert_eq!(r.config, Config::default());
        assert_eq!(r.clocks_before.to_string(), "unknown ()");
    }
}
