//! `cargo xtask`: one front end for the lab, its subcommands in the chapter's workflow order:
//! build the PTX and read it (`ptx`, `asm`, `explore`), measure (`bench`), find where the time goes
//! (`nsys`, `profile`, `ncu-table`, `ncu-transpose`), re-measure two versions (`compare`),
//! check correctness (`sanitize`), keep the log (`log`), draw the results (`plot`), and ship
//! (`dist`).
//!
//! Build-side commands (`ptx`, `asm`, `explore`, `log`, `plot`, `dist`) need no GPU; run-side commands
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
    /// A kernel's source, PTX and SASS as one HTML page, linked both ways, with control bits and warp-state samples
    ///
    /// One self-contained page per kernel (or per pair: two kernels, or one kernel on two
    /// compilers) under target/explore/: select a source line and its PTX and SASS light up,
    /// select an instruction and its line does. SASS rows carry their control bits, the live
    /// registers and what each scoreboard wait is for; with --capture, ncu's warp-state samples
    /// per instruction as a heat column.
    #[command(after_help = "Examples:
  cargo xtask explore --kernel reduce_v3
  cargo xtask explore reduce_v3 reduce_v5 --capture
  cargo xtask explore reduce_v6_f32 --backend llvm,nvvm --capture xtask/tests/fixtures/ncu/capture")]
    Explore(commands::explore::Args),
    /// Every kernel against CUB and the ceilings measured in the same run, plus the launch gap
    #[command(
        long_about = "Runs `lab bench` (the binary beside this one) with the flags passed through and writes its results file under results/bench/. `cargo xtask bench --help` shows lab's flags; xtask adds two of its own: `--record \"change; hypothesis\"` appends the measured rows to the experiment log, and `--plot DIR` draws the run's charts into DIR (as `cargo xtask plot`).",
        after_help = "Examples:
  cargo xtask bench
  dist/xtask bench --sweep --plot docs/plots
  cargo xtask bench --size 2^20 --kernel v6,cub --record \"unroll x4; more loads in flight\""
    )]
    Bench(commands::bench::Args),
    /// Two kernels, one kernel from two compilers, or two results files: time with a verdict, counters, SASS
    ///
    /// Time: both distributions and a verdict (faster, slower, or same within noise) by one
    /// stated rule; live, rounds of `lab bench` (A and B alternating, each a fresh process)
    /// until the verdict holds twice in a row or --max-seconds. Counters: the chapter's ncu
    /// metrics side by side, and the prediction recorded with the experiment (`bench --record …
    /// --predict …`) checked and its outcome written to the experiment log. Code: the SASS
    /// statistics that differ.
    #[command(after_help = "Examples:
  cargo xtask compare reduce_v3 reduce_v5
  cargo xtask compare reduce_v4 --backend llvm,nvcc --svg v4.svg
  cargo xtask compare results/bench/A.json results/bench/B.json --kernel reduce_v6
  cargo xtask compare v3 v6 --from results/bench/nvidia-h200-default-20261130T092735Z.json
  cargo xtask compare v6 v7 --predict \"dram__bytes_read.sum same, time down\" -- --cache cold")]
    Compare(commands::compare::Args),
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
  dist/xtask profile --kernel transpose_tiled --clock-control base
  dist/xtask profile --kernel reduce_v3 --source --backend llvm,nvcc
  cargo xtask profile --kernel reduce_v3 --source --from xtask/tests/fixtures/ncu/capture")]
    Profile(commands::profile::Args),
    /// How right the diagnosis is: each headline against a stated truth, on the catalogue's
    /// faults and the chapter's kernels, or on corpora written elsewhere
    ///
    /// A list, the tally (faults named, healthy kernels clean, false alarms) and a confusion
    /// table of expected verdicts against the headlines'. The catalogue's kernels are profiled
    /// (or read back); --corpus grades the held-out C++, Triton and PyTorch captures of
    /// gpu/corpus/; --truth grades what `profile --format json` printed for any program.
    /// Exits non-zero when any kernel is missed.
    #[command(after_help = "Examples:
  dist/xtask accuracy --backend both
  cargo xtask accuracy --from xtask/tests/fixtures/ncu/faults
  cargo xtask accuracy --corpus all
  dist/xtask accuracy --corpus cuda --pages corpus-out
  dist/xtask accuracy --truth gpu/corpus/torch_corpus.truth.csv --document torch.json")]
    Accuracy(commands::accuracy::Args),
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
    /// Part II's table: the row-wise kernels beside PyTorch, torch.compile, Liger and Triton
    ///
    /// Each op x shape x dtype as GB/s and x the D2D copy of the same matrix measured in its
    /// own run; whether Rust reaches 0.90 x copy and the best peer (and by what margin);
    /// --plot draws it.
    #[command(after_help = "Examples:
  cargo xtask rows-table results/rows/rows-nvidia-h200-custom-<date>.json --peers results/rows/peers.json
  dist/xtask bench --kernel rows --peers      (bench, the peers, then this table)")]
    RowsTable(commands::rows_table::Args),
    /// The model held to results files: each reduction and transpose row's predicted time against its measured one
    ///
    /// Every reduction at 2^24, 2^26, 2^28, 2^30 and every transpose at 4096², 8192², 16384²,
    /// on every backend: the binding roof, predicted and measured µs, within 10 % or a miss,
    /// and the share within 10 %. Roofs from each file; --assume fills the ones it did not
    /// measure, printed as assumed.
    #[command(after_help = "Examples:
  cargo xtask model-check results/bench/nvidia-h200-default-20261130T092735Z.json
  cargo xtask model-check results/bench/nvidia-h200-sweep-20261130T084720Z.json.gz --assume results/model-check/assumed-roofs.json")]
    ModelCheck(commands::model_check::Args),
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
  cargo xtask plot results/bench/nvidia-h200-default-20261130T110804Z.json
  cargo xtask plot results/bench/nvidia-h200-sweep-20261130T084720Z.json.gz --out docs/plots
  cargo xtask bench --plot docs/plots          (bench, then plot its results)")]
    Plot(commands::plot::Args),
    /// Build lab, xtask and the test binaries into dist/ to run on a GPU machine without cargo
    #[command(
        after_help = "Example: cargo xtask dist && scp -r dist gpu: && ssh gpu dist/xtask bench"
    )]
    Dist(commands::dist::Args),
}

fn main() {
    end_quietly_on_a_closed_pipe();
    let cli = Cli::parse();
    if cli.quiet {
        // Read by the profilers' progress line (`profiler::progress`) here and in children.
        // SAFETY: set before any other thread exists.
        unsafe { std::env::set_var("LAB_QUIET", "1") };
    }
    let result = match cli.command {
        Command::Ptx(args) => commands::ptx::run(&args),
        Command::Accuracy(args) => commands::accuracy::run(&args),
        Command::Asm(args) => commands::asm::run(&args),
        Command::Explore(args) => commands::explore::run(&args),
        Command::Bench(args) => commands::bench::run(&args, cli.quiet),
        Command::Compare(args) => commands::compare::run(&args),
        Command::Nsys(args) => commands::nsys::run(&args),
        Command::Profile(args) => commands::profile::run(&args),
        Command::ResultsTable(args) => commands::results_table::run(&args),
        Command::RowsTable(args) => commands::rows_table::run(&args),
        Command::NcuTable(args) => commands::ncu::table(&args),
        Command::NcuTranspose(args) => commands::ncu::transpose(&args),
        Command::Sanitize(args) => commands::sanitize::run(&args),
        Command::ModelCheck(args) => commands::model_check::run(&args),
        Command::Log(args) => commands::log::run(&args),
        Command::Plot(args) => commands::plot::run(&args),
        Command::Dist(args) => commands::dist::run(&args),
    };
    if let Err(e) = result {
        // A child that failed has said why: end with its code, one error line in all.
        if let Some(child) = e.downcast_ref::<studies::process::ChildFailed>()
            && e.chain().count() == 1
        {
            std::process::exit(child.code());
        }
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// A closed pipe (`| head`, a pager that quits) ends the program as it ends any Unix filter:
/// quietly, by SIGPIPE, instead of a panic on the next print. Rust's runtime ignores SIGPIPE;
/// this restores the default.
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: called first in `main`, before any other thread exists; `signal` with the
    // default disposition has no other precondition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
