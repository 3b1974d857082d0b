//! `cargo xtask profile --kernel K`: a full ncu report (`--set full`) of each selected kernel,
//! saved as `.ncu-rep` for the GUI, and a text summary read from it: Speed of Light,
//! occupancy and its limiter, the dominant stalls, the memory workload (sectors per request,
//! bank conflicts, wavefronts), the launch (waves per SM), then the diagnosis; with `--source`,
//! the kernel's source lines hottest first (see [`studies::profiles::profile`]).

use anyhow::Result;
use catalog::Backend;
use clap::parser::ValueSource;
use profiler::ncu::run::{Collect, Filter, Set, Settings};
use std::path::PathBuf;
use studies::asm::parse_backends;
use studies::profiles::ncu::NcuOptions;
use studies::profiles::profile::{ProfileRequest, profile};
use studies::profiles::program::{self, Output};

#[derive(clap::Args)]
pub struct Flags {
    /// NAME[,NAME...], all (every reduction and transpose), reductions or transposes;
    /// a wrong name lists the valid ones
    #[arg(long, default_value = "reduce_v3")]
    pub kernel: String,
    /// ncu section set
    #[arg(long, value_enum, default_value_t = Set::Full)]
    pub set: Set,
    /// Elements per reduction
    #[arg(long, default_value_t = 1 << 24)]
    pub size: u64,
    /// Transpose rows
    #[arg(long, default_value_t = 4096)]
    pub rows: u32,
    /// Transpose columns
    #[arg(long, default_value_t = 4096)]
    pub cols: u32,
    /// Print the diagnosis rules (when each fires, which way its fix goes) and exit
    #[arg(long)]
    pub rules: bool,
    /// Also per source line (Rust; the .cu line for nvcc), hottest first: warp-stall samples by
    /// reason, instructions executed, shared wavefronts and global sectors beyond the minimum,
    /// the line's text and its hottest SASS instructions; code inlined from core, core::arch and
    /// the device layer counts at the kernel line that called it. The diagnosis names the line.
    /// A kernel without line tables (nvvm) gets its hottest SASS instructions
    #[arg(long)]
    pub source: bool,
    /// With --source: every SASS instruction under its line, not just the hottest three
    #[arg(long, requires = "source")]
    pub sass: bool,
    /// With `-- PROGRAM`: only kernels whose demangled name matches this regular expression
    #[arg(long, value_name = "REGEX", requires = "program")]
    pub kernel_name: Option<String>,
    /// With `-- PROGRAM`: launches (of matching kernels) to let pass before profiling
    #[arg(long, value_name = "N", requires = "program")]
    pub launch_skip: Option<u64>,
    /// With `-- PROGRAM`: launches to profile at most (0: every one; a long program can take
    /// hours under --set full) [default: 20]
    #[arg(long, value_name = "N", requires = "program")]
    pub launch_count: Option<u64>,
    /// With `-- PROGRAM`: only launches inside this NVTX range (ncu's syntax: `range/` for a
    /// push/pop range, `domain@range/` in a domain); may be repeated
    #[arg(long = "nvtx-range", value_name = "RANGE", requires = "program")]
    pub nvtx_range: Vec<String>,
    /// With `-- PROGRAM`: only launches between cudaProfilerStart and cudaProfilerStop
    /// (`torch.cuda.cudart().cudaProfilerStart()`)
    #[arg(long, requires = "program")]
    pub cuda_profiler_range: bool,
    /// A report made elsewhere (another machine, the GUI, a plain `ncu -o`): diagnose every
    /// launch in it (reading it needs ncu on this machine)
    #[arg(long, value_name = "FILE.ncu-rep", conflicts_with = "program")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub ncu: NcuOptions,
    /// Any program instead of the lab's kernels, after `--` (`-- python3 train.py`): ncu runs
    /// it with --set full and the diagnosis metrics, and every profiled launch is diagnosed
    #[arg(last = true, value_name = "PROGRAM")]
    pub program: Vec<String>,
}

/// `profile`'s arguments: the flags, with `--backend` also kept as the list it was given
/// (`NcuOptions` reads it as the smallest compiler set holding it) and `--kernel` marked when
/// given, which filters a capture read back with `--from`.
pub struct Args {
    pub flags: Flags,
    pub backends: Vec<Backend>,
    pub backend_given: bool,
    pub kernel_given: bool,
}

impl clap::FromArgMatches for Args {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let flags = Flags::from_arg_matches(m)?;
        let given = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
        let raw = m
            .get_raw("backend")
            .and_then(|mut v| v.next())
            .map(|v| v.to_string_lossy().into_owned())
            .unwrap_or_else(|| flags.ncu.backend.name().to_string());
        let backends = parse_backends(&raw)
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, e))?;
        Ok(Args {
            backends,
            backend_given: given("backend"),
            kernel_given: given("kernel"),
            flags,
        })
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for Args {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        Flags::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Flags::augment_args_for_update(cmd)
    }
}

/// Launches `-- PROGRAM` profiles without `--launch-count`: enough for the kernels of a step,
/// few enough that `--set full` (dozens of replays each) ends in minutes.
pub const PROGRAM_LAUNCHES: u64 = 20;

pub fn run(args: &Args) -> Result<()> {
    let f = &args.flags;
    if f.rules {
        print!("{}", profiler::diagnose::rules_text());
        return Ok(());
    }
    let out = Output {
        dir: f.ncu.write_dir(),
        format: f.ncu.format,
        source: f.source,
        all_sass: f.sass,
    };
    if !f.program.is_empty() {
        let settings = Settings {
            ncu: profiler::tools::NCU.find()?,
            clock_control: f.ncu.clock_control,
            cache_control: f.ncu.cache_control,
            collect: Collect {
                set: Some(f.set),
                sections: Vec::new(),
                metrics: studies::profiles::metrics::diagnosis(),
            },
            filter: Filter {
                kernel_regex: f.kernel_name.clone(),
                launch_skip: f.launch_skip,
                launch_count: match f.launch_count {
                    None => Some(PROGRAM_LAUNCHES),
                    Some(0) => None,
                    Some(n) => Some(n),
                },
                nvtx_include: f.nvtx_range.clone(),
                profiler_api_range: f.cuda_profiler_range,
            },
            source: f.source,
        };
        return program::profile_program(&settings, &f.program, &out);
    }
    if let Some(report) = &f.report {
        return program::profile_report(report, &out);
    }
    let reading_back = !f.ncu.from.is_empty();
    // Raw pages that no lab capture wrote (`<name>-<backend>.raw.csv`): a program's.
    if reading_back && !studies::profiles::capture::lab_pages(&f.ncu.from)? {
        return program::profile_pages(&studies::profiles::capture::raw_pages(&f.ncu.from)?, &out);
    }
    let request = ProfileRequest {
        kernel: &f.kernel,
        set: f.set,
        size: f.size,
        rows: f.rows,
        cols: f.cols,
        source: f.source,
        all_sass: f.sass,
        // Read back, every compiler in the files unless --backend was given.
        backends: if reading_back && !args.backend_given {
            Vec::new()
        } else {
            args.backends.clone()
        },
        from_kernels: (reading_back && args.kernel_given).then_some(f.kernel.as_str()),
    };
    profile(&request, &f.ncu)
}
