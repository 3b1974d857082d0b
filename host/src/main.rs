//! `lab`: runs the lab's kernels on this machine's GPU.
use anyhow::Result;
use clap::Parser;

#[derive(Parser)]
#[command(name = "lab", about = "Runs the kernel lab's kernels on the GPU")]
enum Cmd {
    /// Print the GPU's facts and the backends (llvm, nvvm, nvcc)
    Info,
    /// Launch kernels once each for a profiler (ncu, nsys): an untimed warm-up, then exactly
    /// one launch inside the NVTX range `profile`, then a check of the result (ok / FAILED)
    #[command(
        after_help = "Example: ncu --nvtx --nvtx-include 'kernel-lab@profile/' lab run --kernel reduce_v3"
    )]
    Run(RunArgs),
    /// Measure every kernel against CUB and the ceilings measured in the same run, plus the
    /// launch-gap demo; verify every result
    Bench(host::bench::Args),
    /// Launch one deliberately wrong kernel, for `xtask sanitize` to check that compute-sanitizer's
    /// TOOL flags it
    #[command(hide = true)]
    Canary {
        #[arg(value_enum)]
        tool: host::canary::Canary,
    },
    /// Time reductions with the result word at each of 64 addresses: same-address atomics
    /// cost more at some addresses than at others, and this shows both groups
    Placement(PlacementArgs),
}

/// `lab placement`'s arguments; the logic is in `host::placement`.
#[derive(clap::Args)]
struct PlacementArgs {
    /// Reductions: names, `reduce`, or unique parts of names, comma-separated [default: every
    /// reduction with one block per fixed share of the input, whose atomics the slot decides]
    #[arg(long, value_delimiter = ',')]
    kernel: Vec<String>,
    /// Compilers, comma-separated
    #[arg(long, value_enum, value_delimiter = ',', default_value = "llvm,nvcc")]
    backend: Vec<host::Backend>,
    /// f32 elements: 2^k or an integer
    #[arg(long, default_value = "2^28", value_parser = host::bench::size::parse)]
    size: u64,
    /// Timed launches per slot (the median counts)
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    reps: u32,
    /// Seed of the random inputs
    #[arg(long, default_value_t = 4)]
    seed: u64,
    /// Also write every (kernel, slot) median as CSV to FILE
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
}

/// `lab run`'s arguments; the logic is in `host::run`.
#[derive(clap::Args)]
struct RunArgs {
    /// NAME[,NAME...]: a kernel, a PTX entry, a family (reduce, transpose, ceiling,
    /// launch_gap, faults, rows), all, or a unique part of a name (`--list` shows every name);
    /// the fault catalogue's kernels run at their own sizes, whatever --size says
    #[arg(long, required_unless_present_any = ["list", "from_plan"])]
    kernel: Option<String>,
    /// Which compiler's PTX: llvm (rustc's NVPTX backend), nvvm (rust-cuda), both (the two
    /// Rust compilers), nvcc (the CUDA C++ twins) or all
    #[arg(long, value_enum, default_value_t = host::Which::Both)]
    backend: host::Which,
    /// Elements of the reductions and of bump
    #[arg(long, default_value_t = host::run::DEFAULT_N)]
    size: u64,
    /// Rows of the transposes' input and of the row-wise kernels' matrix
    #[arg(long, default_value_t = host::run::DEFAULT_EDGE)]
    rows: u32,
    /// Columns of the transposes' input and of the row-wise kernels' matrix (a row-wise
    /// kernel whose schedule cannot hold them is left out, with the reason)
    #[arg(long, default_value_t = host::run::DEFAULT_EDGE)]
    cols: u32,
    /// Start the reduction inputs this many elements (0-3) past a 16-byte boundary
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=3))]
    offset: u32,
    /// Seed of the random inputs
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Where the reductions' result word goes: first (slot 0, no calibration), fast or slow
    /// (the fastest or slowest of 64 slots for same-address atomics; calibration launches run
    /// outside the NVTX range `profile`, so select the profiled launch by NVTX, not launch-skip)
    #[arg(long, value_enum, default_value_t = host::placement::SlotChoice::First)]
    placement: host::placement::SlotChoice,
    /// Print the launch plan as JSON and exit, without touching the GPU
    #[arg(long)]
    plan: bool,
    /// Run the launches of this plan (what --plan printed, or some of its launches) as it is,
    /// at its sizes, instead of resolving --kernel and --backend
    #[arg(long, value_name = "FILE", conflicts_with_all = [
        "kernel", "backend", "size", "rows", "cols", "offset", "plan", "predict", "list",
    ])]
    from_plan: Option<std::path::PathBuf>,
    /// Print every valid kernel name and exit
    #[arg(long)]
    list: bool,
    /// Also write the launches (configs, checks) as JSON to FILE
    #[arg(long, value_name = "FILE")]
    manifest: Option<std::path::PathBuf>,
    /// Print each kernel's predicted time (its counts over a bench run's measured roofs) and
    /// exit, without touching the GPU
    #[arg(long)]
    predict: bool,
    /// The bench results file whose roofs --predict divides by [default: the newest under
    /// results/bench/]
    #[arg(long, value_name = "FILE", requires = "predict")]
    roofs: Option<std::path::PathBuf>,
}

fn main() {
    end_quietly_on_a_closed_pipe();
    if let Err(e) = run(Cmd::parse()) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cmd: Cmd) -> Result<()> {
    match cmd {
        Cmd::Info => {
            let lab = host::Lab::new()?;
            println!("{}", serde_json::to_string_pretty(&lab.info)?);
            println!("backends: {:?}", lab.backends());
        }
        Cmd::Bench(args) => {
            let outcome = host::bench::run(&args)?;
            if outcome.failed > 0 {
                anyhow::bail!("{} bench row(s) FAILED (see the table)", outcome.failed);
            }
        }
        Cmd::Placement(a) => {
            let kernels = host::placement::reductions(&a.kernel.join(","))?;
            host::placement::run_cli(&host::placement::PlacementRequest {
                kernels,
                backends: a.backend,
                n: a.size,
                reps: a.reps as usize,
                seed: a.seed,
                out: a.out,
            })?;
        }
        Cmd::Canary { tool } => host::canary::run(tool)?,
        Cmd::Run(a) => {
            if a.list {
                print!("{}", host::run::names_help());
                return Ok(());
            }
            let named = host::run::Named {
                kernels: a.kernel.unwrap_or_default(),
                which: a.backend,
                sizes: catalog::records::Sizes {
                    n: a.size,
                    rows: a.rows,
                    cols: a.cols,
                    offset: a.offset,
                },
            };
            if a.predict {
                host::run::predict::run_cli(&named, a.roofs.as_deref())?;
                return Ok(());
            }
            let launches = match &a.from_plan {
                Some(path) => host::run::Launches::Planned(host::run::read_plan(path)?),
                None => host::run::Launches::Named(named),
            };
            let req = host::run::RunRequest {
                launches,
                seed: a.seed,
                placement: a.placement,
                plan_only: a.plan,
                manifest: a.manifest,
            };
            if !host::run::run_cli(&req)? {
                std::process::exit(1);
            }
        }
    }
    Ok(())
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
