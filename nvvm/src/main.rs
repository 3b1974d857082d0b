//! Compiles the `gpu-kernels` crate with rust-cuda's `rustc_codegen_nvvm` and copies the PTX.
//!
//! Usage: `nvvm-builder <kernel crate dir> <kernels target dir> <output .ptx>`
//! (normally run by `cargo xtask ptx`, which sets the toolchain and the environment).
//!
//! `cuda_builder` starts a nested `cargo build -Zbuild-std=core,alloc --target nvptx64-nvidia-cuda`
//! in the kernel crate with `-Zcodegen-backend=librustc_codegen_nvvm.so`; it finds that library on
//! `LD_LIBRARY_PATH`, where `cargo run` puts this crate's own dependency directory.

use cuda_builder::{CudaBuilder, NvvmArch};
use std::path::PathBuf;
use std::process::exit;

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let (krate, target_dir, out) = match args.as_slice() {
        [k, t, o] => (k, t, o),
        _ => {
            eprintln!("usage: nvvm-builder <kernel crate dir> <kernels target dir> <output .ptx>");
            exit(2);
        }
    };
    if let Some(parent) = out.parent() {
        if let Err(e) = std::fs::create_dir_all(parent) {
            eprintln!("cannot create '{}': {}", parent.display(), e);
            exit(1);
        }
    }
    let target_dir = target_dir.to_string_lossy().into_owned();
    // nvvm 0.1.1 names architectures up to compute_80: the PTX targets sm_80, and `cargo xtask
    // ptx` raises it to sm_90 for the cluster schedule (catalog::ptx::raised_to_sm90).
    let result = CudaBuilder::new(krate)
        .arch(NvvmArch::Compute80)
        .build_args(&[
            "--locked",
            "--features",
            "nvvm",
            "--target-dir",
            target_dir.as_str(),
        ])
        .copy_to(out)
        .build();
    match result {
        Ok(path) => println!("{}", path.display()),
        Err(e) => {
            eprintln!(
                "rustc_codegen_nvvm build of '{}' failed: {}",
                krate.display(),
                e
            );
            exit(1);
        }
    }
}
