//! `cargo xtask explore`: a kernel's source, PTX and SASS as one self-contained HTML page,
//! linked both ways, with control bits and, from a capture, warp-state samples
//! ([`studies::explore`]).
//!
//! Needs no GPU: the PTX from `cargo xtask ptx`, the CUDA 13 tools, and for samples a capture
//! already made (`--capture`, default [`studies::explore::CAPTURE`]).

use anyhow::{Result, bail};
use catalog::Backend;
use std::path::PathBuf;
use studies::asm;
use studies::explore::{self, CAPTURE, ExploreRequest};

#[derive(clap::Args)]
pub struct Args {
    /// The kernel (reduce_v3: a page per entry point, reduce_v3_f32 and reduce_v3_i32), or two
    /// kernels to put side by side (reduce_v3 reduce_v5)
    #[arg(value_name = "KERNEL", num_args = 0..=2)]
    kernels: Vec<String>,
    /// The kernel, as `asm --kernel` takes it (instead of the first KERNEL)
    #[arg(long, short)]
    kernel: Option<String>,
    /// The compiler: llvm, nvvm or nvcc; two (llvm,nvvm) put one kernel's two builds side by
    /// side
    #[arg(long, value_parser = parse_backends, default_value = "llvm")]
    backend: BackendList,
    /// Heat the SASS with the warp-state samples of this capture (a folder holding
    /// src-<backend>.source-sass.csv or .csv.gz); alone, the committed one
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = CAPTURE)]
    capture: Option<PathBuf>,
    /// Where to write the pages
    #[arg(long, value_name = "DIR", default_value = "target/explore")]
    out: PathBuf,
    /// Read this PTX file instead of the lab's: one written elsewhere (Triton's, `nvcc -ptx`),
    /// its compiler read from its header (one or two of its kernels; not with two --backend);
    /// twice, one kernel of two files side by side (before and after a change)
    #[arg(long, value_name = "FILE")]
    ptx: Vec<PathBuf>,
}

/// `--backend`'s value (see [`asm::parse_backends`]).
#[derive(Clone)]
pub struct BackendList(Vec<Backend>);

fn parse_backends(s: &str) -> Result<BackendList, String> {
    asm::parse_backends(s).map(BackendList)
}

pub fn run(args: &Args) -> Result<()> {
    let mut kernels: Vec<String> = args.kernel.iter().cloned().collect();
    kernels.extend(args.kernels.iter().cloned());
    if kernels.len() > 2 {
        bail!(
            "explore takes one or two kernels, got {}",
            kernels.join(", ")
        );
    }
    let root = studies::util::root();
    let at_root = |p: &PathBuf| {
        if p.is_absolute() {
            p.clone()
        } else {
            root.join(p)
        }
    };
    if !args.ptx.is_empty() && args.backend.0.len() > 1 {
        bail!("--ptx reads its files' own compilers: name no second --backend");
    }
    let req = ExploreRequest {
        kernels,
        backends: args.backend.0.clone(),
        ptx: args.ptx.clone(),
        capture: args.capture.as_ref().map(at_root),
        out: at_root(&args.out),
    };
    for page in explore::run(&req)? {
        println!("{}", page.display());
    }
    Ok(())
}
