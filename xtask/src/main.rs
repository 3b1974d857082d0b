//! `cargo xtask`: one front end for the lab, in the chapter's workflow order.
//!
//! Build-side commands (`ptx`, `asm`, `dist`) run here; run-side commands (`bench`, `profile`,
//! `ncu-table`, `ncu-transpose`, `nsys`, `sanitize`) need a GPU and work from the compiled
//! xtask binary with the host binary `lab` beside it, so they run on a machine without cargo.

mod commands;
mod nvvm;
mod profiler;
mod ptxcheck;
mod util;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about, long_about = None, disable_help_subcommand = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build the kernels' PTX with both Rust GPU compilers (rustc's NVPTX backend, rust-cuda's NVVM)
    #[command(after_help = "Example: cargo xtask ptx --backend llvm")]
    Ptx(commands::ptx::Args),
    /// Build lab, xtask and the test binaries into dist/ to run on a GPU machine without cargo
    #[command(
        after_help = "Example: cargo xtask dist && scp -r dist gpu: && ssh gpu dist/xtask bench"
    )]
    Dist(commands::dist::Args),
    /// Read what the Rust source became: PTX, SASS for sm_90, counts by class, diffs, checks
    #[command(after_help = "Examples:
  cargo xtask asm --kernel reduce_v1_f32 --sass
  cargo xtask asm --kernel all --stats
  cargo xtask asm --diff reduce_v1 reduce_v3 --sass
  cargo xtask asm --diff reduce_v6_f32 --backend llvm,nvvm --stats
  cargo xtask asm --check")]
    Asm(commands::asm::Args),
    /// Every kernel against CUB and the ceilings measured in the same run, plus the launch gap
    #[command(
        long_about = "Runs `lab bench` (the binary beside this one) with the flags passed through and writes its results file under results/bench/. `cargo xtask bench --help` shows lab's flags; xtask adds `--record \"change; hypothesis\"`, which appends the measured rows to the experiment log.",
        after_help = "Examples: cargo xtask bench; dist/xtask bench --sweep; cargo xtask bench --size 2^20 --kernel v6,cub --record \"unroll x4; more loads in flight\""
    )]
    Bench(commands::bench::Args),
    /// Every kernel under compute-sanitizer (memcheck, racecheck, synccheck, initcheck) at edge sizes
    #[command(
        after_help = "Examples: cargo xtask sanitize; dist/xtask sanitize --tool memcheck,synccheck"
    )]
    Sanitize(commands::sanitize::Args),
    /// The experiment log: every `--record "change; hypothesis"` row, as a table
    #[command(after_help = "Example: cargo xtask log --kernel reduce_v7")]
    Log(commands::log::Args),
    /// Full ncu report (--set full) of kernels, saved under results/profile/, and a summary:
    /// Speed of Light, occupancy, stalls, memory workload, then the diagnosis
    #[command(after_help = "Examples:
  cargo xtask profile --kernel reduce_v3
  cargo xtask profile --kernel all --backend llvm
  dist/xtask profile --kernel transpose_tiled --clock-control base")]
    Profile(commands::profile::Args),
    /// The chapter's key ncu metrics for every reduction (both backends, CUB), per block, with
    /// the chapter's predictions beside the measurements
    #[command(after_help = "Examples: cargo xtask ncu-table; cargo xtask ncu-table --format csv")]
    NcuTable(commands::ncu::TableArgs),
    /// The transposes under ncu at 4096²: sectors per request, wavefronts, bank conflicts,
    /// against the chapter's predictions
    #[command(after_help = "Example: cargo xtask ncu-transpose --rows 4096 --cols 4096")]
    NcuTranspose(commands::ncu::TransposeArgs),
    /// Nsight Systems timelines of the launch-gap demo and the bench; nvtx_sum, cuda_api_sum
    /// and cuda_gpu_kern_sum as text tables (CSV kept)
    #[command(after_help = "Examples: cargo xtask nsys; cargo xtask nsys --what launch-gap")]
    Nsys(commands::nsys::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Ptx(args) => commands::ptx::run(&args),
        Command::Dist(args) => commands::dist::run(&args),
        Command::Asm(args) => commands::asm::run(&args),
        Command::Bench(args) => commands::bench::run(&args),
        Command::Log(args) => commands::log::run(&args),
        Command::Sanitize(args) => commands::sanitize::run(&args),
        Command::Profile(args) => commands::profile::run(&args),
        Command::NcuTable(args) => commands::ncu::table(&args),
        Command::NcuTranspose(args) => commands::ncu::transpose(&args),
        Command::Nsys(args) => commands::nsys::run(&args),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
