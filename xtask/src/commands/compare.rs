//! `cargo xtask compare A B`: two kernels, one kernel from two compilers, or two results files,
//! compared by time (with a verdict), counters (with the recorded prediction checked) and code
//! (see [`studies::compare`]).

use anyhow::Result;
use catalog::{Backend, Dtype, Format};
use std::path::PathBuf;
use studies::compare::{self, CompareRequest};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A: a kernel (reduce_v3, v3) or a results file (results/bench/….json)
    a: String,
    /// B: a second kernel, or a second results file; leave it out to compare A's kernel on the
    /// two compilers of --backend
    b: Option<String>,
    /// Compilers, comma-separated: two with one kernel (llvm,nvcc); with two kernels, each
    /// compiler's pair [default: llvm live, every row from files]
    #[arg(long, value_enum, value_delimiter = ',')]
    backend: Vec<Backend>,
    /// Element types, comma-separated [default: f32 live, every row from files]
    #[arg(long, value_enum, value_delimiter = ',')]
    dtype: Vec<Dtype>,
    /// Only these kernels' rows of two results files, comma-separated
    #[arg(long, value_delimiter = ',')]
    kernel: Vec<String>,
    /// Read the two kernels' rows from results files instead of running them: one file (both
    /// kernels) or two (A's, then B's)
    #[arg(long, value_name = "JSON", num_args = 1..=2)]
    from: Vec<PathBuf>,
    /// Reduction size for lab bench (2^k or an integer) [default: lab's, 2^28]
    #[arg(long, value_name = "N")]
    size: Option<String>,
    /// Transpose edge for lab bench [default: lab's]
    #[arg(long, value_name = "EDGE")]
    transpose: Option<String>,
    /// Timed launches per row in each lab bench run
    #[arg(long, default_value_t = 20)]
    reps: u32,
    /// Stop starting rounds once this many seconds have passed (a round: one lab bench of A
    /// and one of B)
    #[arg(long, default_value_t = 60.0)]
    max_seconds: f64,
    /// No counters (no ncu run)
    #[arg(long)]
    no_ncu: bool,
    /// Counters from raw pages captured earlier (`<name>-<backend>.raw.csv`, as ncu-table
    /// writes them) instead of running ncu
    #[arg(long, value_name = "CSV", num_args = 1..)]
    ncu_from: Vec<PathBuf>,
    /// Check this prediction too: "COUNTER up|down|same [N%], …" (an ncu metric, a column of
    /// ncu-table such as inst or dram_pct, or time)
    #[arg(long, value_name = "PREDICTION")]
    predict: Option<String>,
    /// What to print on stdout
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also draw the two time distributions into this SVG file
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Folder for the runs, ncu captures and compare.{txt,json,csv} [default: live
    /// results/compare/<A>-vs-<B>-<time>; from files, nothing is written]
    #[arg(long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// The lab binary [default: `lab` beside this xtask binary]
    #[arg(long, value_name = "PATH")]
    lab: Option<PathBuf>,
    /// The experiment log whose pending predictions are checked and updated
    /// [default: results/experiment-log.csv]
    #[arg(long, value_name = "CSV")]
    log: Option<PathBuf>,
    /// Further lab bench flags, after `--` (e.g. -- --cache cold)
    #[arg(last = true, value_name = "LAB BENCH FLAGS")]
    lab_args: Vec<String>,
}

pub fn run(args: &Args) -> Result<()> {
    compare::run(&request(args))
}

fn request(a: &Args) -> CompareRequest {
    CompareRequest {
        a: a.a.clone(),
        b: a.b.clone(),
        backends: a.backend.clone(),
        dtypes: a.dtype.clone(),
        kernels: a.kernel.clone(),
        from: a.from.clone(),
        size: a.size.clone(),
        transpose: a.transpose.clone(),
        reps: a.reps,
        max_seconds: a.max_seconds,
        no_ncu: a.no_ncu,
        ncu_from: a.ncu_from.clone(),
        predict: a.predict.clone(),
        format: a.format,
        svg: a.svg.clone(),
        output: a.output.clone(),
        lab: a.lab.clone(),
        log: a.log.clone(),
        lab_args: a.lab_args.clone(),
    }
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

    fn parse(argv: &[&str]) -> CompareRequest {
        let cli =
            Cli::try_parse_from(std::iter::once("compare").chain(argv.iter().copied())).unwrap();
        request(&cli.args)
    }

    #[test]
    fn the_command_line_becomes_a_request() {
        let r = parse(&[
            "reduce_v4",
            "--backend",
            "llvm,nvcc",
            "--",
            "--cache",
            "cold",
        ]);
        assert_eq!((r.a.as_str(), r.b.as_deref()), ("reduce_v4", None));
        assert_eq!(r.backends, [Backend::Llvm, Backend::Nvcc]);
        assert_eq!(r.lab_args, ["--cache", "cold"]);
        assert_eq!((r.reps, r.max_seconds, r.no_ncu), (20, 60.0, false));
        let r = parse(&[
            "v3",
            "v5",
            "--from",
            "x.json",
            "--format",
            "json",
            "--max-seconds",
            "5",
        ]);
        assert_eq!(r.b.as_deref(), Some("v5"));
        assert_eq!(r.from, [PathBuf::from("x.json")]);
        assert_eq!((r.format, r.max_seconds), (Format::Json, 5.0));
    }
}
