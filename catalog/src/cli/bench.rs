//! `lab bench` flags (clap derive), and the plan they resolve to.

use super::size;
pub use crate::records::CacheMode;
pub use crate::{Backend, Dtype, Format};
use std::path::PathBuf;

/// Measure every kernel against CUB and the measured ceilings, plus the launch-gap demo.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Examples:
  lab bench                                 every row at 2^28 elements
  lab bench --sweep --kernel v6,cub         v6 and CUB from 2^10 to 2^30
  lab bench --sweep --kernel v6,cub --cache both
                                            the same, each row hot and with the L2 flushed
  lab bench --size 2^20,2^24 --backend llvm --format csv
  lab bench --kernel transpose --transpose 8192,16384
  lab bench --out results/bench             also write the results file")]
pub struct Args {
    /// Elements per reduction: 2^k or an integer, comma-separated for several [default: 2^28]
    #[arg(long, value_name = "N", value_parser = size::parse, value_delimiter = ',', conflicts_with = "sweep")]
    pub size: Vec<u64>,
    /// Every power of two from 2^10 to 2^30 (where each version leaves L2, where launches dominate)
    #[arg(long)]
    pub sweep: bool,
    /// Transpose matrix edges (square f32 matrices), comma-separated [default: 4096,8192]
    #[arg(long, value_name = "EDGE", value_parser = size::parse, value_delimiter = ',')]
    pub transpose: Vec<u64>,
    /// Only these compilers' kernels: llvm, nvvm, nvcc (the CUDA C++ twins) [default: every
    /// backend built into this binary]
    #[arg(long, value_enum, value_delimiter = ',')]
    pub backend: Vec<Backend>,
    /// Only these kernels: a name, a family (ceiling, reduce, transpose, launch_gap, faults,
    /// rows) or a unique part of a name (e.g. reduce_v6, v6, cub, padded, bump, fma_peak),
    /// comma-separated. The ceilings, CUB and the copy always run when a row needs them as its
    /// reference (fma_peak whenever a reduction runs: the roofline's compute roof); the fault
    /// catalogue and the row-wise family run only when named here, at their own sizes
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub kernel: Vec<String>,
    /// Only these element types: f32, i32 for the reductions [default: both]; f32, bf16 for the
    /// row-wise family [default: both]
    #[arg(long, value_enum, value_delimiter = ',')]
    pub dtype: Vec<Dtype>,
    /// The row-wise family's matrices, ROWSxCOLS, comma-separated [default: the seven,
    /// 65536x512 to 256x262144]
    #[arg(long, value_name = "RxC", value_parser = size::parse_shape, value_delimiter = ',')]
    pub shape: Vec<(u32, u32)>,
    /// Timed repetitions per row: one CUDA-event pair around each launch
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,
    /// Untimed launches before the timed ones
    #[arg(long, default_value_t = 3)]
    pub warmup: u32,
    /// The L2 before every launch: hot keeps what the last launch left; cold flushes it first
    /// (a buffer larger than the L2 written, then read back, outside the timing; the header
    /// states its size); both measures each row hot, then cold
    #[arg(long, value_enum, default_value_t = CacheMode::Hot)]
    pub cache: CacheMode,
    /// What to print on stdout
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also print every ceiling and roof row after their summary (the results file always
    /// holds them)
    #[arg(long)]
    pub roof_rows: bool,
    /// Also write the results (JSON, and the table as printed) into this folder
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seed of the random inputs
    #[arg(long, default_value_t = 4)]
    pub seed: u64,
    /// No progress bar and no per-row lines on stderr (the bar is also off when stderr is not
    /// a terminal; the lines are not)
    #[arg(long, short)]
    pub quiet: bool,
}

/// What one run measures: the flags, resolved.
#[derive(Debug, Clone)]
pub struct Plan {
    pub sizes: Vec<u64>,
    pub transpose: Vec<u64>,
    pub backends: Vec<Backend>,
    pub dtypes: Vec<Dtype>,
    /// The row-wise family's element types and shapes (rows, cols).
    pub row_dtypes: Vec<Dtype>,
    pub shapes: Vec<(u32, u32)>,
    pub kernel_filter: Vec<String>,
    /// The catalogue's kernels `kernel_filter` selects (empty: no filter).
    pub selected: Vec<&'static str>,
    pub reps: u32,
    pub warmup: u32,
    pub cache: CacheMode,
    pub seed: u64,
    pub sweep: bool,
}

impl Plan {
    /// The flags, with defaults filled in; `available` are the backends built into the binary.
    pub fn new(args: &Args, available: &[Backend]) -> Result<Plan, String> {
        let sizes = if args.sweep {
            size::SWEEP.map(|k| 1u64 << k).collect()
        } else if args.size.is_empty() {
            vec![size::DEFAULT]
        } else {
            dedup(args.size.clone())
        };
        let transpose = if args.transpose.is_empty() {
            size::TRANSPOSE_DEFAULT.to_vec()
        } else {
            dedup(args.transpose.clone())
        };
        if let Some(&t) = transpose.iter().find(|&&t| t > u32::MAX as u64) {
            return Err(format!(
                "transpose edge {t} does not fit the kernels' u32 rows/cols"
            ));
        }
        let backends = if args.backend.is_empty() {
            available.to_vec()
        } else {
            let b = dedup(args.backend.clone());
            if let Some(m) = b.iter().find(|b| !available.contains(b)) {
                return Err(format!(
                    "backend '{m}' is not built into this binary (it has {}): run `cargo xtask ptx` and rebuild",
                    names(available)
                ));
            }
            b
        };
        if backends.is_empty() {
            return Err("no backend's PTX is built into this binary: run `cargo xtask ptx`".into());
        }
        let dtypes = if args.dtype.is_empty() {
            vec![Dtype::F32, Dtype::I32]
        } else {
            dedup(args.dtype.clone())
        };
        let row_dtypes: Vec<Dtype> = crate::rows::DTYPES
            .into_iter()
            .filter(|d| args.dtype.is_empty() || args.dtype.contains(d))
            .collect();
        let shapes = if args.shape.is_empty() {
            crate::rows::SHAPES.to_vec()
        } else {
            let mut s = args.shape.clone();
            s.dedup();
            s
        };
        let kernel_filter: Vec<String> = args
            .kernel
            .iter()
            .map(|k| k.trim().to_lowercase())
            .filter(|k| !k.is_empty())
            .collect();
        let selected = if kernel_filter.is_empty() {
            Vec::new()
        } else {
            crate::select(&kernel_filter.join(","))
                .map_err(|e| format!("--kernel: {e}"))?
                .iter()
                .map(|s| s.kernel.name)
                .collect()
        };
        if row_dtypes.is_empty()
            && selected
                .iter()
                .any(|k| crate::kernels::find(k).is_some_and(|k| k.family == crate::Family::Rows))
        {
            return Err(format!(
                "--dtype {}: the row-wise kernels take f32 and bf16",
                names_of(&dtypes)
            ));
        }
        Ok(Plan {
            sizes,
            transpose,
            backends,
            dtypes,
            row_dtypes,
            shapes,
            kernel_filter,
            selected,
            reps: args.reps,
            warmup: args.warmup,
            cache: args.cache,
            seed: args.seed,
            sweep: args.sweep,
        })
    }

    /// Whether the user asked for the catalogue's `kernel`: no filter, or `--kernel` selects it
    /// (`catalog::select`: a name, a family, or a unique part of a name).
    pub fn wants(&self, kernel: &str) -> bool {
        self.kernel_filter.is_empty() || self.selected.contains(&kernel)
    }

    /// Whether `--kernel` names the catalogue's `kernel` (a name, a family, `all`, or a unique
    /// part of a name): what the fault catalogue needs to run, which no run without
    /// `--kernel` includes.
    pub fn names(&self, kernel: &str) -> bool {
        !self.kernel_filter.is_empty() && self.selected.contains(&kernel)
    }

    /// `default` (no flags that change what is measured), `sweep`, or `custom`.
    pub fn mode(&self) -> &'static str {
        if self.sweep && self.kernel_filter.is_empty() {
            "sweep"
        } else if self.sizes == [size::DEFAULT]
            && self.cache == CacheMode::Hot
            && self.transpose == size::TRANSPOSE_DEFAULT
            && self.kernel_filter.is_empty()
            && self.dtypes.len() == 2
        {
            "default"
        } else {
            "custom"
        }
    }
}

fn dedup<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v.dedup();
    v
}

fn names_of(d: &[Dtype]) -> String {
    d.iter().map(|d| d.name()).collect::<Vec<_>>().join(",")
}

fn names(b: &[Backend]) -> String {
    if b.is_empty() {
        return "none".into();
    }
    b.iter().map(|b| b.name()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn plan(argv: &[&str]) -> Result<Plan, String> {
        let cli = Cli::try_parse_from(std::iter::once("bench").chain(argv.iter().copied()))
            .map_err(|e| e.to_string())?;
        Plan::new(&cli.args, &[Backend::Llvm])
    }

    #[test]
    fn defaults() {
        let p = plan(&[]).unwrap();
        assert_eq!(p.sizes, [1 << 28]);
        assert_eq!(p.transpose, [4096, 8192]);
        assert_eq!(p.backends, [Backend::Llvm]);
        assert_eq!(p.dtypes, [Dtype::F32, Dtype::I32]);
        assert_eq!((p.reps, p.warmup), (20, 3));
        assert_eq!(p.cache, CacheMode::Hot);
        assert_eq!(p.mode(), "default");
    }

    #[test]
    fn the_cache_is_hot_cold_or_both() {
        let c = plan(&["--cache", "cold"]).unwrap();
        assert_eq!(c.cache, CacheMode::Cold);
        // A cold run is not the default run, whose numbers are hot.
        assert_eq!(c.mode(), "custom");
        let b = plan(&["--sweep", "--cache", "both"]).unwrap();
        assert_eq!((b.cache, b.mode()), (CacheMode::Both, "sweep"));
        let e = plan(&["--cache", "warm"]).unwrap_err();
        assert!(e.contains("possible values: hot, cold, both"), "{e}");
    }

    #[test]
    fn sizes_lists_and_sweep() {
        let p = plan(&["--size", "2^20,1000,2^20", "--size", "2^24"]).unwrap();
        assert_eq!(p.sizes, [1000, 1 << 20, 1 << 24]);
        assert_eq!(p.mode(), "custom");
        let s = plan(&["--sweep"]).unwrap();
        assert_eq!(s.sizes.len(), 21);
        assert_eq!(s.mode(), "sweep");
        assert!(plan(&["--sweep", "--size", "2^20"]).is_err());
        assert!(plan(&["--size", "2^x"]).is_err());
        assert!(plan(&["--reps", "0"]).is_err());
    }

    #[test]
    fn an_unknown_or_ambiguous_kernel_is_refused() {
        let e = plan(&["--kernel", "nope"]).unwrap_err();
        assert!(e.starts_with("--kernel: 'nope' matches no kernel"), "{e}");
        assert!(
            plan(&["--kernel", "stream"])
                .unwrap_err()
                .contains("copy_stream")
        );
    }

    #[test]
    fn missing_backend_is_an_error_that_says_why() {
        let e = plan(&["--backend", "nvvm"]).unwrap_err();
        assert!(e.contains("'nvvm' is not built into this binary"), "{e}");
    }

    #[test]
    fn kernel_filter_matches_substrings_and_sections() {
        let p = plan(&["--kernel", "v6,CUB", "--kernel", "launch_gap"]).unwrap();
        assert!(p.wants("reduce_v6"));
        assert!(p.wants("cub_reduce_sum"));
        assert!(!p.wants("reduce_v5"));
        assert!(!p.wants("transpose_padded"));
        assert!(p.wants("bump"));
        let all = plan(&[]).unwrap();
        assert!(all.wants("transpose_naive"));
        let t = plan(&["--kernel", "transpose"]).unwrap();
        assert!(t.wants("transpose_tiled"));
        assert!(!t.wants("reduce_v1"));
    }

    #[test]
    fn the_row_family_takes_its_own_types_and_shapes() {
        let p = plan(&[]).unwrap();
        assert_eq!(p.row_dtypes, [Dtype::F32, Dtype::Bf16]);
        assert_eq!(p.shapes.len(), 7);
        assert!(p.wants("softmax_warp") && !p.names("softmax_warp"));
        let r = plan(&[
            "--kernel",
            "rows",
            "--dtype",
            "bf16",
            "--shape",
            "8x1024,4x2^18",
        ])
        .unwrap();
        assert_eq!(r.row_dtypes, [Dtype::Bf16]);
        assert_eq!(r.shapes, [(8, 1024), (4, 262144)]);
        assert!(r.names("layernorm_cluster") && !r.names("reduce_v6"));
        let e = plan(&["--kernel", "rows", "--dtype", "i32"]).unwrap_err();
        assert!(e.contains("take f32 and bf16"), "{e}");
        assert!(plan(&["--shape", "8"]).is_err());
    }

    /// The fault catalogue runs only when `--kernel` names it: never in the default run.
    #[test]
    fn faults_run_only_when_named() {
        let default = plan(&[]).unwrap();
        assert!(default.wants("coalescing_fault") && !default.names("coalescing_fault"));
        let f = plan(&["--kernel", "faults"]).unwrap();
        assert!(f.names("coalescing_fault") && f.names("tensor_cores_fixed"));
        assert!(!f.names("reduce_v1") && !f.wants("bump"));
        let one = plan(&["--kernel", "spills_fault"]).unwrap();
        assert!(one.names("spills_fault") && !one.names("spills_fixed"));
        assert!(plan(&["--kernel", "all"]).unwrap().names("barrier_fixed"));
    }
}
