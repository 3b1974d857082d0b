//! `cargo xtask bench`: the chapter's `make bench`. Runs `lab bench` with every flag passed
//! through (see [`crate::bench`]); works from `dist/` on a GPU machine without cargo:
//! `dist/xtask bench --sweep`.
//!
//! `cargo xtask bench --help` shows `lab bench --help`, then xtask's own flags (`--record`,
//! `--plot`).

use anyhow::Result;

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// `lab bench` flags, passed through (`cargo xtask bench --help` lists them)
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "LAB BENCH FLAGS"
    )]
    args: Vec<String>,
}

/// `quiet`: xtask's global `--quiet`, which clap takes before the pass-through flags; it is
/// handed on to lab.
pub fn run(args: &Args, quiet: bool) -> Result<()> {
    crate::bench::run(&args.args, quiet)
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

    fn parse(argv: &[&str]) -> Vec<String> {
        Cli::try_parse_from(std::iter::once("bench").chain(argv.iter().copied()))
            .unwrap()
            .args
            .args
    }

    #[test]
    fn every_flag_passes_through_unchanged() {
        let argv = [
            "--size",
            "2^20,2^24",
            "--kernel",
            "v6",
            "--format",
            "json",
            "-q",
        ];
        assert_eq!(parse(&argv), argv);
        assert_eq!(parse(&["--help"]), ["--help"]);
        assert!(parse(&[]).is_empty());
    }
}
