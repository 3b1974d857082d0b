//! `cargo xtask nsys`: Nsight Systems timelines of the launch-gap demo and of the bench, or of
//! any program (`-- PROGRAM ARGS…`): per NVTX range whether the time is dispatch-, host- or
//! kernel-bound, the top kernels, and the three tables the chapter reads (see
//! [`profiler::nsys`]).

use anyhow::{Context, Result};
use catalog::Format;
use profiler::nsys;
use profiler::tools::NSYS;
use std::path::PathBuf;
use studies::profiles::ncu::emit;
use studies::util;

/// Which program to trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum What {
    /// The bench's launch-gap demo alone (1000 tiny kernels three ways)
    LaunchGap,
    /// The whole bench
    Bench,
    /// Both, one report each
    Both,
}

#[derive(clap::Args)]
pub struct Args {
    /// What to trace
    #[arg(long, value_enum, default_value_t = What::Both)]
    what: What,
    /// lab's arguments for the launch-gap timeline
    #[arg(
        long,
        default_value = "bench --kernel launch_gap",
        allow_hyphen_values = true
    )]
    launch_gap_args: String,
    /// lab's arguments for the bench timeline
    #[arg(long, default_value = "bench", allow_hyphen_values = true)]
    bench_args: String,
    /// Folder for reports, CSV and tables [default: results/profile]
    #[arg(long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// What to print on stdout
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// The lab binary [default: `lab` beside this xtask binary]
    #[arg(long, value_name = "PATH")]
    lab: Option<PathBuf>,
    /// Re-read stats CSVs captured earlier: PREFIX as in PREFIX_nvtx_sum.csv (e.g.
    /// results/profile/nsys-launch-gap after `cargo xtask nsys`, or the committed
    /// xtask/tests/fixtures/nsys/capture/nsys-bench; PREFIX_<report>.csv.gz is read too); the
    /// verdicts need the three traces beside the tables; nothing is written unless --output is
    /// given
    #[arg(long = "from", value_name = "PREFIX", num_args = 1..)]
    from: Vec<PathBuf>,
    /// Any program instead of the lab's, after `--` (`-- python3 train.py --steps 3`): its
    /// timeline, the verdict per NVTX range, its top kernels, and the `profile` line for the
    /// one that dominates
    #[arg(last = true, value_name = "PROGRAM")]
    program: Vec<String>,
}

pub fn run(args: &Args) -> Result<()> {
    let out_dir = args
        .output
        .clone()
        .unwrap_or_else(|| util::root().join("results/profile"));
    if let Some((exe, rest)) = args.program.split_first() {
        util::require_cuda_driver()?;
        let nsys = NSYS.find()?;
        std::fs::create_dir_all(&out_dir)
            .with_context(|| format!("creating {}", out_dir.display()))?;
        let name = studies::profiles::program::capture_name(&args.program)
            .replacen("profile-", "nsys-", 1);
        let rest: Vec<std::ffi::OsString> = rest.iter().map(Into::into).collect();
        let trace = nsys::trace(&nsys, &out_dir, &name, exe.as_ref(), &rest)?;
        let program = args.program.join(" ");
        let (text, json, csv) = nsys::render(&[trace], Some(&program))?;
        return emit(Some(&out_dir), &name, args.format, &text, &json, &csv);
    }
    let traces = if args.from.is_empty() {
        let lab = util::lab_binary(args.lab.as_deref())?;
        let nsys = NSYS.find()?;
        std::fs::create_dir_all(&out_dir)
            .with_context(|| format!("creating {}", out_dir.display()))?;
        let mut targets = Vec::new();
        if args.what != What::Bench {
            targets.push(("nsys-launch-gap", args.launch_gap_args.as_str()));
        }
        if args.what != What::LaunchGap {
            targets.push(("nsys-bench", args.bench_args.as_str()));
        }
        let mut traces = Vec::new();
        for (name, lab_args) in targets {
            let args: Vec<std::ffi::OsString> =
                lab_args.split_whitespace().map(Into::into).collect();
            traces.push(nsys::trace(&nsys, &out_dir, name, lab.as_os_str(), &args)?);
        }
        traces
    } else {
        args.from
            .iter()
            .map(|prefix| nsys::read_back(prefix))
            .collect::<Result<Vec<_>>>()?
    };

    let (text, json, csv) = nsys::render(&traces, None)?;
    let write = (args.from.is_empty() || args.output.is_some()).then_some(out_dir);
    emit(write.as_deref(), "nsys", args.format, &text, &json, &csv)
}
