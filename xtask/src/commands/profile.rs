//! `cargo xtask profile --kernel K`: a full ncu report (`--set full`) of each selected kernel,
//! saved as `.ncu-rep` for the GUI, and a text summary read from it: Speed of Light,
//! occupancy and its limiter, the dominant stalls, the memory workload (sectors per request,
//! bank conflicts, wavefronts), the launch (waves per SM), then the diagnosis
//! (see [`crate::profiler::profile`]).

use crate::profiler::ncu::NcuOptions;
use crate::profiler::profile::{Request, profile};
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
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
    #[command(flatten)]
    pub ncu: NcuOptions,
}

pub fn run(args: &Args) -> Result<()> {
    if args.rules {
        print!("{}", crate::profiler::diagnose::rules_text());
        return Ok(());
    }
    let request = Request {
        kernel: &args.kernel,
        set: &args.set,
        size: args.size,
        rows: args.rows,
        cols: args.cols,
    };
    profile(&request, &args.ncu)
}
