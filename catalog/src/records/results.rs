//! The bench's results file (`lab bench --out`, `lab bench --format json`): one [`Report`],
//! its [`Row`]s, the device, the clocks and the resolved flags. `docs/json-schema.md`
//! describes every field.
//!
//! Reading needs only `schema_version` and `rows`: every other field of the report, the device,
//! the flags and the clocks reads as empty when a file lacks it, and so does every row field
//! added after the first version, so files written by earlier binaries still read.

use super::placement::Placement;
use crate::{Backend, Dtype, Family, Runner};
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

/// What the L2 held when a row's timed launches began.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Cache {
    /// Repeated launches on the same data: what fits of the input is still in the L2
    #[default]
    Hot,
    /// The L2 flushed before every launch, warm-up included, outside the timing events
    Cold,
}

impl Cache {
    /// `hot`, `cold`: the name in files and flags.
    pub fn name(self) -> &'static str {
        match self {
            Cache::Hot => "hot",
            Cache::Cold => "cold",
        }
    }

    /// `hot L2`, `cold L2`: how tables, headlines and charts say it.
    pub fn label(self) -> String {
        format!("{} L2", self.name())
    }
}

/// Which caches a run measures (`lab bench --cache`): one, or each row both ways.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    /// Repeated launches on the same data (inputs up to the L2's size are read from the L2)
    #[default]
    Hot,
    /// The L2 flushed before every launch (inputs come from DRAM at every size)
    Cold,
    /// Every row measured hot, then cold
    Both,
}

impl CacheMode {
    /// The caches measured, in the order each row runs them.
    pub fn caches(self) -> &'static [Cache] {
        match self {
            CacheMode::Hot => &[Cache::Hot],
            CacheMode::Cold => &[Cache::Cold],
            CacheMode::Both => &[Cache::Hot, Cache::Cold],
        }
    }

    /// The mode that measures exactly `caches` (hot when empty).
    pub fn of(caches: &[Cache]) -> CacheMode {
        match (caches.contains(&Cache::Hot), caches.contains(&Cache::Cold)) {
            (true, true) => CacheMode::Both,
            (false, true) => CacheMode::Cold,
            _ => CacheMode::Hot,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CacheMode::Hot => "hot",
            CacheMode::Cold => "cold",
            CacheMode::Both => "both",
        }
    }
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
    pub backend: Runner,
    /// Element type: `f32`, `i32`; `u32` for the roofs that count.
    pub dtype: Dtype,
    /// Elements per launch (transposes: rows × cols; launch gap: per `bump` launch).
    pub n: u64,
    /// `2^28`, `4096x4096`, `1000x4096` (launches × elements).
    pub size: String,
    /// Whether the L2 was flushed before each of the row's launches (`cold`) or not (`hot`).
    /// Absent from files written before it was added: read as `hot`, what those runs did.
    #[serde(default)]
    pub cache: Cache,
    /// Bytes that must move per timed sample (reads + writes).
    pub bytes: u64,
    /// Floating-point operations per timed sample: `n − 1` for an f32 reduction, 2 per FMA
    /// for `fma_peak`, 0 otherwise (i32 adds are not FLOPs). Absent from files written
    /// before it was added (read as 0).
    #[serde(default)]
    pub flops: u64,
    /// Kernel launches per timed sample (1, or 1000 for the launch gap).
    pub launches: u32,
    /// A row-wise kernel's launch (grid, block, cluster, dynamic shared memory) as the lab
    /// made it on this GPU, so a script outside the lab can launch the same kernel the same
    /// way (`gpu/rows/peers.py --lab`). None for every other row, and absent from files
    /// written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<crate::rows::RowLaunch>,
    /// Blocks resident on one SM during the launch, for a roof run at a chosen occupancy (a
    /// tree roof, the load roof): unused dynamic shared memory holds it there. Absent from
    /// files written before it was added, and None for every other row.
    #[serde(default)]
    pub resident: Option<u32>,
    pub status: Status,
    /// Timed repetitions (0 when not timed).
    pub reps: u32,
    pub median_us: Option<f64>,
    pub min_us: Option<f64>,
    pub max_us: Option<f64>,
    /// (max − min) / median, in percent.
    pub spread_pct: Option<f64>,
    /// Every timed sample, in µs, fastest first: the distribution `median_us`, `min_us` and
    /// `max_us` summarise (`compare` reads it). Absent from files written before it was added
    /// and from failed or skipped rows; left out of the CSV.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples_us: Vec<f64>,
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
    /// The roof the model says binds this row (`read`, `copy`, `atomic`, `read+red`, `shared`,
    /// …; `catalog::model`, docs/model.md). None without a prediction: a kernel without counts,
    /// no roofs measured, or a hot row whose data fits in the L2 (the DRAM roofs do not apply).
    /// Absent from files written before it was added.
    #[serde(default)]
    pub bound: Option<String>,
    /// The model's predicted median, in µs: the bound's time plus the launch cost.
    #[serde(default)]
    pub predicted_us: Option<f64>,
    /// predicted / measured median, in percent: 100 is on the bound; outside 90–110 the model
    /// misses the row by more than 10 %.
    #[serde(default)]
    pub pct_of_bound: Option<f64>,
    /// How the result was verified, the error of a failed row, or why it was skipped.
    pub note: String,
}

impl Row {
    /// A row not yet measured.
    pub fn new(
        section: Family,
        kernel: &str,
        backend: impl Into<Runner>,
        dtype: Dtype,
        n: u64,
        size: String,
        bytes: u64,
    ) -> Row {
        Row {
            section,
            kernel: kernel.into(),
            backend: backend.into(),
            dtype,
            n,
            size,
            cache: Cache::Hot,
            bytes,
            flops: 0,
            launches: 1,
            launch: None,
            resident: None,
            status: Status::Skipped,
            reps: 0,
            median_us: None,
            min_us: None,
            max_us: None,
            spread_pct: None,
            samples_us: Vec::new(),
            noisy: false,
            gbps: None,
            gflops: None,
            us_per_launch: None,
            ceiling: None,
            pct_of_ceiling: None,
            reference: None,
            vs_reference: None,
            bound: None,
            predicted_us: None,
            pct_of_bound: None,
            note: String::new(),
        }
    }

    /// How other rows name this one as their ceiling or reference: `read_stream f32 2^28`.
    /// (No backend: several backends' rows of one target count as one, the best.)
    pub fn target(&self) -> String {
        target(&self.kernel, self.dtype, &self.size)
    }

    /// `reduce_v6 [llvm] f32 2^28`, for progress lines and messages; a cold row's ends in
    /// `(cold L2)`.
    pub fn label(&self) -> String {
        let label = format!(
            "{} [{}] {} {}",
            self.kernel, self.backend, self.dtype, self.size
        );
        match self.cache {
            Cache::Hot => label,
            Cache::Cold => format!("{label} ({})", self.cache.label()),
        }
    }

    /// A wrong result or an error: no speed, ever (any timing already filled in is dropped).
    pub fn failed(mut self, error: impl Into<String>) -> Row {
        self.status = Status::Failed;
        self.median_us = None;
        self.min_us = None;
        self.max_us = None;
        self.spread_pct = None;
        self.samples_us.clear();
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

    /// The same row, measured with the L2 `cache`.
    pub fn with_cache(mut self, cache: Cache) -> Row {
        self.cache = cache;
        self
    }

    /// Sets the floating-point operations one timed sample does.
    pub fn with_flops(mut self, flops: u64) -> Row {
        self.flops = flops;
        self
    }

    /// The same row, for a row-wise kernel launched as `launch`.
    pub fn with_launch(mut self, launch: crate::rows::RowLaunch) -> Row {
        self.launch = Some(launch);
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
pub fn target(kernel: &str, dtype: Dtype, size: &str) -> String {
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
    /// `hot`, `cold` or `both` (`--cache`). Absent from files written before it was added:
    /// read as `hot`, what those runs measured.
    pub cache: CacheMode,
    pub sizes: Vec<u64>,
    pub transpose: Vec<u64>,
    pub backends: Vec<Backend>,
    pub dtypes: Vec<Dtype>,
    pub kernel_filter: Vec<String>,
    pub reps: u32,
    pub warmup: u32,
    pub seed: u64,
    /// Bytes written over the L2 before every launch of a cold row (absent without cold rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2_flush_bytes: Option<u64>,
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
    /// The roofs this run measured (read off its rows by `catalog::roofs`), from its hot rows (cold when it
    /// measured only cold). Absent when the run lacked the read stream, the D2D copy or the FMA
    /// peak, and from files written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roofs: Option<super::roofs::Roofs>,
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
    /// The caches the rows were measured with, hot first (hot when there are no rows).
    pub fn caches(&self) -> Vec<Cache> {
        let mut c: Vec<Cache> = self.rows.iter().map(|r| r.cache).collect();
        c.sort_unstable();
        c.dedup();
        if c.is_empty() {
            c.push(Cache::Hot);
        }
        c
    }

    /// The report as if only `cache` had been measured: its rows, and the flags saying so.
    pub fn only(&self, cache: Cache) -> Report {
        let mut r = self.clone();
        r.rows.retain(|x| x.cache == cache);
        r.config.cache = CacheMode::of(&[cache]);
        if cache == Cache::Hot {
            r.config.l2_flush_bytes = None;
        }
        r
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
        match self.config.cache {
            // Hot is what every earlier file measured: their names stay as they were.
            CacheMode::Hot => format!("{}-{}-{stamp}Z", slug, self.config.mode),
            c => format!("{}-{}-{}-{stamp}Z", slug, self.config.mode, c.name()),
        }
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

    /// A 4-element llvm f32 reduction row, `k`.
    fn k_row() -> Row {
        Row::new(
            Family::Reduce,
            "k",
            Backend::Llvm,
            Dtype::F32,
            4,
            "4".into(),
            16,
        )
    }

    #[test]
    fn a_row_names_its_target_and_a_failure_drops_its_timing() {
        let mut r = k_row();
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
        // Written before the caches were a choice: everything was measured hot.
        assert_eq!(r.rows[0].cache, Cache::Hot);
        assert_eq!(r.config.cache, CacheMode::Hot);
        assert_eq!(r.caches(), [Cache::Hot]);
    }

    #[test]
    fn the_cache_is_written_read_and_split() {
        let text = r#"{"schema_version": 1, "config": {"mode": "sweep", "cache": "both",
            "l2_flush_bytes": 125829120}, "rows": []}"#;
        let mut r: Report = serde_json::from_str(text).unwrap();
        assert_eq!(
            (r.config.cache, r.config.l2_flush_bytes),
            (CacheMode::Both, Some(120 << 20))
        );
        let row = k_row();
        r.rows = vec![row.clone(), row.clone().with_cache(Cache::Cold)];
        assert_eq!(r.caches(), [Cache::Hot, Cache::Cold]);
        assert_eq!(r.rows[1].label(), "k [llvm] f32 4 (cold L2)");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["rows"][1]["cache"], "cold");
        assert_eq!(json["config"]["cache"], "both");
        let back: Report = serde_json::from_value(json).unwrap();
        assert_eq!(back, r);

        let cold = r.only(Cache::Cold);
        assert_eq!(cold.rows.len(), 1);
        assert_eq!(
            (cold.config.cache, cold.config.l2_flush_bytes),
            (CacheMode::Cold, Some(120 << 20))
        );
        let hot = r.only(Cache::Hot);
        assert_eq!(
            (hot.config.cache, hot.config.l2_flush_bytes),
            (CacheMode::Hot, None)
        );
        assert_eq!(hot.rows, [row]);

        r.device.name = "NVIDIA H200".into();
        r.date = "2026-11-30T10:00:00Z".into();
        assert_eq!(r.file_stem(), "nvidia-h200-sweep-both-20261130T100000Z");
        // A hot file is named as every file before the choice existed.
        r.config.cache = CacheMode::Hot;
        assert_eq!(r.file_stem(), "nvidia-h200-sweep-20261130T100000Z");
    }

    #[test]
    fn a_mode_is_its_caches() {
        for m in [CacheMode::Hot, CacheMode::Cold, CacheMode::Both] {
            assert_eq!(CacheMode::of(m.caches()), m);
        }
        assert_eq!(CacheMode::Both.caches(), [Cache::Hot, Cache::Cold]);
        assert_eq!(CacheMode::of(&[]), CacheMode::Hot);
    }
}
