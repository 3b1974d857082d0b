//! `cargo xtask`: one front end for the lab, its subcommands in the chapter's workflow order:
//! build the PTX and read it (`ptx`, `asm`), measure (`bench`), find where the time goes
//! (`nsys`, `profile`, `ncu-table`, `ncu-transpose`), check correctness (`sanitize`), keep the
//! log (`log`), draw the results (`plot`), and ship (`dist`).
//!
//! Build-side commands (`ptx`, `asm`, `log`, `plot`, `dist`) need no GPU; run-side commands
//! (`bench`, `nsys`, `profile`, `ncu-table`, `ncu-transpose`, `sanitize`) need one and work from
//! the compiled xtask binary with the host binary `lab` beside it, so they run on a machine
//! without cargo.

use clap::{Parser, Subcommand};
use xtask::commands;

#[derive(Parser)]
#[command(name = "cargo xtask", about, long_about = None, disable_help_subcommand = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// No progress bars (they are also off when stderr is not a terminal)
    #[arg(long, short, global = true)]
    quiet: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Build the kernels' PTX with both Rust GPU compilers (rustc's NVPTX backend, rust-cuda's NVVM) and nvcc (their CUDA C++ twins)
    #[command(after_help = "Examples:
  cargo xtask ptx
  cargo xtask ptx --backend llvm
  cargo xtask ptx --backend nvcc")]
    Ptx(commands::ptx::Args),
    /// Read what the Rust source became: PTX, SASS for sm_90, counts by class, diffs, checks
    #[command(after_help = "Examples:
  cargo xtask asm --kernel reduce_v1_f32 --sass
  cargo xtask asm --kernel all --stats
  cargo xtask asm --diff reduce_v1 reduce_v3 --sass
  cargo xtask asm --diff reduce_v6_f32 --backend llvm,nvvm --stats
  cargo xtask asm --diff reduce_v2_f32 --backend llvm,nvcc --sass
  cargo xtask asm --check")]
    Asm(commands::asm::Args),
    /// Every kernel against CUB and the ceilings measured in the same run, plus the launch gap
    #[command(
        long_about = "Runs `lab bench` (the binary beside this one) with the flags passed through and writes its results file under results/bench/. `cargo xtask bench --help` shows lab's flags; xtask adds two of its own: `--record \"change; hypothesis\"` appends the measured rows to the experiment log, and `--plot DIR` draws the run's charts into DIR (as `cargo xtask plot`).",
        after_help = "Examples:
  cargo xtask bench
  dist/xtask bench --sweep --plot docs/plots
  cargo xtask bench --size 2^20 --kernel v6,cub --record \"unroll x4; more loads in flight\""
    )]
    Bench(commands::bench::Args),
    /// Nsight Systems timelines of the launch-gap demo and the bench, as text tables
    ///
    /// nvtx_sum, cuda_api_sum and cuda_gpu_kern_sum as text tables; the CSV is kept.
    #[command(after_help = "Examples:
  cargo xtask nsys
  cargo xtask nsys --what launch-gap")]
    Nsys(commands::nsys::Args),
    /// Full ncu report of kernels, and a summary that ends in the diagnosis
    ///
    /// ncu --set full, saved under results/profile/; the summary: Speed of Light, occupancy,
    /// stalls, memory workload, then the diagnosis.
    #[command(after_help = "Examples:
  cargo xtask profile --kernel reduce_v3
  cargo xtask profile --kernel all --backend llvm
  dist/xtask profile --kernel transpose_tiled --clock-control base")]
    Profile(commands::profile::Args),
    /// The chapter's key ncu metrics for every reduction, beside the chapter's predictions
    ///
    /// Both backends and CUB, per block, with the chapter's predictions beside the
    /// measurements.
    #[command(after_help = "Examples:
  cargo xtask ncu-table
  cargo xtask ncu-table --format csv")]
    NcuTable(commands::ncu::TableArgs),
    /// The transposes under ncu: sectors per request, wavefronts, bank conflicts
    ///
    /// At 4096² by default, against the chapter's predictions.
    #[command(after_help = "Example: cargo xtask ncu-transpose --rows 4096 --cols 4096")]
    NcuTranspose(commands::ncu::TransposeArgs),
    /// Every kernel under compute-sanitizer (memcheck, racecheck, synccheck, initcheck) at edge sizes
    #[command(after_help = "Examples:
  cargo xtask sanitize
  dist/xtask sanitize --tool memcheck,synccheck")]
    Sanitize(commands::sanitize::Args),
    /// A results file's reductions as the README's table (Markdown), so docs quote the file
    #[command(
        after_help = "Example: cargo xtask results-table results/bench/nvidia-h200-default-20261130T075647Z.json"
    )]
    ResultsTable(commands::results_table::Args),
    /// The experiment log: every `--record "change; hypothesis"` row, as a table
    #[command(after_help = "Examples:
  cargo xtask log --kernel reduce_v6
  cargo xtask log --format json")]
    Log(commands::log::Args),
    /// SVG charts of a bench results file: bandwidth bars, size sweep, roofline
    ///
    /// Bandwidth per kernel as bars with the measured ceilings; the size sweep with the L2 size
    /// marked (from a --sweep file); the roofline under the measured bandwidth and compute roofs.
    #[command(after_help = "Examples:
  cargo xtask plot results/bench/nvidia-h200-default-20261129T120000Z.json
  cargo xtask plot results/bench/nvidia-h200-sweep-20261129T121500Z.json --out docs/plots
  cargo xtask bench --plot docs/plots          (bench, then plot its results)")]
    Plot(commands::plot::Args),
    /// Build lab, xtask and the test binaries into dist/ to run on a GPU machine without cargo
    #[command(
        after_help = "Example: cargo xtask dist && scp -r dist gpu: && ssh gpu dist/xtask bench"
    )]
    Dist(commands::dist::Args),
}

fn main() {
    let cli = Cli::parse();
    if cli.quiet {
        // Read by the profilers' progress line (`profiler::progress`) here and in children.
        // SAFETY: set before any other thread exists.
        unsafe { std::env::set_var("LAB_QUIET", "1") };
    }
    let result = match cli.command {
        Command::Ptx(args) => commands::ptx::run(&args),
        Command::Asm(args) => commands::asm::run(&args),
        Command::Bench(args) => commands::bench::run(&args, cli.quiet),
        Command::Nsys(args) => commands::nsys::run(&args),
        Command::Profile(args) => commands::profile::run(&args),
        Command::ResultsTable(args) => commands::results_table::run(&args),
        Command::NcuTable(args) => commands::ncu::table(&args),
        Command::NcuTranspose(args) => commands::ncu::transpose(&args),
        Command::Sanitize(args) => commands::sanitize::run(&args),
        Command::Log(args) => commands::log::run(&args),
        Command::Plot(args) => commands::plot::run(&args),
        Command::Dist(args) => commands::dist::run(&args),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
