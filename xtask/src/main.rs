//! `cargo xtask`: one front end for the lab, in the chapter's workflow order.
//!
//! Build-side commands (`ptx`, `asm`, `dist`) run here; run-side commands (`bench`, `profile`,
//! `ncu-table`, `ncu-transpose`, `nsys`, `sanitize`) need a GPU and work from the compiled
//! xtask binary with the host binary `lab` beside it, so they run on a machine without cargo.

mod commands;
mod nvvm;
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
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Ptx(args) => commands::ptx::run(&args),
        Command::Dist(args) => commands::dist::run(&args),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
