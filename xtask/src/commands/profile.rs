//! `cargo xtask profile --kernel K`: a full ncu report (`--set full`) of each selected kernel,
//! saved as `.ncu-rep` for the GUI, and a text summary read from it: Speed of Light,
//! occupancy and its limiter, the dominant stalls, the memory workload (sectors per request,
//! bank conflicts, wavefronts), the launch (waves per SM), then the diagnosis; with `--source`,
//! the kernel's source lines hottest first (see [`crate::profiler::profile`]).

use crate::asm::parse_backends;
use crate::profiler::ncu::NcuOptions;
use crate::profiler::profile::{Request, profile};
use anyhow::Result;
use catalog::Backend;
use clap::parser::ValueSource;

#[derive(clap::Args)]
pub struct Flags {
    /// NAME[,NAME...], all (every reduction and transpose), reductions or transposes;
    /// a wrong name lists the valid ones
    #[arg(long, default_value = "reduce_v3")]
    pub kernel: String,
    /// ncu section set
    #[arg(long, default_value = "full")]
    pub set: String,
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
    #[command(flatten)]
    pub ncu: NcuOptions,
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

pub fn run(args: &Args) -> Result<()> {
    let f = &args.flags;
    if f.rules {
        print!("{}", crate::profiler::diagnose::rules_text());
        return Ok(());
    }
    let reading_back = !f.ncu.from.is_empty();
    let request = Request {
        kernel: &f.kernel,
        set: &f.set,
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
