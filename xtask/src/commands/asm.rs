//! `cargo xtask asm`: what the Rust source became. Prints a kernel's PTX (default) or its
//! SASS for sm_90 (`--sass`: `ptxas -arch=sm_90 -lineinfo`, then `nvdisasm`), optionally with
//! the source lines interleaved (`--source`: Rust, or the `.cu` lines for nvcc) or the
//! registers live at each instruction (`--live`); counts instructions by class per kernel and
//! backend (`--stats`); compares two kernels, or one kernel across the compilers (`--diff`);
//! and runs the checks that keep the chapter's claims true (`--check`).
//!
//! Needs no GPU: only the PTX from `cargo xtask ptx` and the CUDA 13 tools that
//! `scripts/setup.sh` puts in `.tools/cuda13/bin`.

use anyhow::{Result, bail};
use catalog::{Backend, Format};
use std::path::PathBuf;
use studies::asm::{self, View, checks, diff, listing, report};

#[derive(clap::Args)]
pub struct Args {
    /// Kernel(s), comma-separated: an entry point (reduce_v1_f32), a prefix naming several
    /// (reduce_v1 = reduce_v1_f32 and reduce_v1_i32; reduce = every reduction), or all
    #[arg(long, short, value_delimiter = ',', default_value = "all")]
    kernel: Vec<String>,
    /// Which compiler's PTX: llvm (rustc's NVPTX backend), nvvm (rust-cuda), nvcc (the CUDA C++
    /// twins), both (llvm,nvvm), all, or a list such as llvm,nvcc [default: both, skipping one
    /// that is not built; with --check: all]
    #[arg(long, value_parser = parse_backends)]
    backend: Option<BackendList>,
    /// Print SASS for sm_90 instead of PTX (also what --diff compares)
    #[arg(long)]
    sass: bool,
    /// Interleave the source lines the PTX's line info points to (Rust; the .cu lines for
    /// nvcc): code inlined from core, core::arch and the device layer is charged to the kernel
    /// line that called it, with the inner lines beneath. A backend without line info is
    /// listed without them, and a note says why
    #[arg(long)]
    source: bool,
    /// SASS with the registers live at each instruction (nvdisasm's life ranges), then the
    /// kernel's peak and its instruction mix
    #[arg(long, conflicts_with_all = ["check", "stats", "diff"])]
    live: bool,
    /// Instruction counts by class (the mix), registers (allocated and peak live), stack,
    /// spills and unrolling, one row per kernel and backend (with --diff: only the counts)
    #[arg(long, conflicts_with = "check")]
    stats: bool,
    /// Compare two kernels (A B), or one kernel across two backends (A --backend llvm,nvvm):
    /// the counts that differ, then a unified diff of the PTX (or SASS with --sass)
    #[arg(long, num_args = 1..=2, value_names = ["A", "B"], conflicts_with = "check")]
    diff: Option<Vec<String>>,
    /// Run the PTX and SASS checks (CI); exits 1 if any fails
    #[arg(long)]
    check: bool,
    /// Output format (csv: --stats only)
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Read this PTX file instead of target/ptx/<backend>/gpu_kernels.ptx (its backend is
    /// read from its header); twice, two files side by side (`--diff KERNEL --ptx old.ptx
    /// --ptx new.ptx`: a kernel before and after a change)
    #[arg(long, value_name = "FILE", conflicts_with = "backend")]
    ptx: Vec<PathBuf>,
}

/// `--backend`'s value (see [`asm::parse_backends`]).
#[derive(Clone)]
pub struct BackendList(Vec<Backend>);

fn parse_backends(s: &str) -> Result<BackendList, String> {
    asm::parse_backends(s).map(BackendList)
}

pub fn run(args: &Args) -> Result<()> {
    if args.format == Format::Csv && !(args.stats && args.diff.is_none()) {
        bail!("--format csv applies to --stats (one row per kernel and backend)");
    }
    let view = View {
        sass: args.sass,
        source: args.source,
        live: args.live,
        stats: args.stats,
        format: args.format,
    };
    let backends = args.backend.as_ref().map(|l| l.0.as_slice());
    let mut builds = asm::load_builds(&args.ptx, backends, args.check)?;
    if args.check {
        return checks::run(&mut builds, args.format);
    }
    if let Some(sides) = &args.diff {
        return diff::diff(&mut builds, sides, view);
    }
    for p in &args.kernel {
        if !builds
            .iter()
            .any(|b| !b.kernels(std::slice::from_ref(p)).is_empty())
        {
            let names: Vec<String> = builds[0].kernels(&["all".into()]);
            bail!("no kernel matches '{p}' (kernels: {})", names.join(", "));
        }
    }
    if args.stats {
        return report::stats(&mut builds, &args.kernel, args.format);
    }
    listing::print(&mut builds, &args.kernel, view)
}
