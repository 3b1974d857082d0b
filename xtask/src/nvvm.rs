//! The second kernel build: rust-cuda's `rustc_codegen_nvvm` (libnvvm 11.8) on the old nightly.
//!
//! `nvvm/` is a small cargo project for `nightly-2021-12-04` (cargo 1.58) whose binary calls
//! `cuda_builder` on `gpu-kernels/` with feature `nvvm`. Everything it needs was laid out in
//! `.tools/nvvm` by `scripts/setup-nvvm.sh`: the patched codegen, LLVM (behind an llvm-config
//! wrapper), libnvvm 11.8, and the vendored crates that cargo 1.58 reads offline through its own
//! `CARGO_HOME`. See `nvvm/README.md`.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The toolchain rustc_codegen_nvvm 0.3.0 is written against.
const TOOLCHAIN: &str = "nightly-2021-12-04";

/// Builds `gpu-kernels` with rustc_codegen_nvvm; returns `target/ptx/nvvm/gpu_kernels.ptx`:
/// libnvvm's PTX raised to sm_90 PTX 8.1 (`catalog::ptx::raised_to_sm90`, for the cluster
/// schedule), with the launch bounds the catalogue gives rust-cuda's entries
/// (`catalog::rows::launch_bounds` says why).
pub fn build(root: &Path) -> Result<PathBuf> {
    let tools = root.join(".tools/nvvm");
    check_setup(root, &tools)?;

    // libnvvm's own PTX, kept apart: the host's set is written only once raised.
    let built = root.join("target/nvvm/gpu_kernels.libnvvm.ptx");
    let out = root.join(catalog::ptx::path(catalog::Backend::Nvvm));
    let mut cmd = Command::new("cargo");
    cmd.current_dir(root.join("nvvm"))
        .args(["run", "--release", "--locked", "--"])
        .arg(root.join("gpu-kernels"))
        .arg(root.join("target/nvvm/kernels"))
        .arg(&built);
    // Nothing of the modern build may leak into the 2021 one.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CUDA_ROOT",
        "CUDA_TOOLKIT_ROOT_DIR",
        "CUDA_LIBRARY_PATH",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("RUSTUP_TOOLCHAIN", TOOLCHAIN)
        // cargo 1.58 reads its offline, vendored-crates configuration from here.
        .env("CARGO_HOME", tools.join("cargo-home"))
        .env("CARGO_TARGET_DIR", root.join("target/nvvm/builder"))
        .env("LLVM_CONFIG", tools.join("bin/llvm-config"))
        // find_cuda_helper's CUDA root: libnvvm, libdevice (and a stub cuda.h).
        .env("CUDA_PATH", tools.join("cuda-11.8"))
        // The builder and the codegen library load libnvvm.so.4 at run time.
        .env("LD_LIBRARY_PATH", tools.join("cuda-11.8/nvvm/lib64"))
        // LLVM 9's headers warn a lot under g++ 12 while the codegen's C++ shim compiles.
        .env("CXXFLAGS", "-w");
    eprintln!("rust-cuda (rustc_codegen_nvvm, {TOOLCHAIN}): gpu-kernels --features nvvm");
    studies::process::run(&mut cmd)?;
    let ptx = std::fs::read_to_string(&built).with_context(|| {
        format!(
            "the nvvm build reported success but wrote no readable '{}'",
            built.display()
        )
    })?;
    let ptx = catalog::ptx::raised_to_sm90(&ptx).map_err(|line| {
        anyhow::anyhow!(
            "'{}' lacks the header line '{line}' libnvvm 11.8 writes: run scripts/setup.sh",
            built.display()
        )
    })?;
    let ptx = catalog::ptx::with_launch_bounds(&ptx, |e| {
        catalog::kernels::launch_bounds(catalog::Backend::Nvvm, e)
    });
    std::fs::create_dir_all(out.parent().unwrap())?;
    files::write_atomic(&out, ptx.as_bytes())?;
    Ok(out)
}

/// Fails with one clear line unless `scripts/setup-nvvm.sh` finished after the last change
/// to what it reads (patches, lockfiles).
fn check_setup(root: &Path, tools: &Path) -> Result<()> {
    let ready = tools.join(".ready");
    let Ok(ready_at) = std::fs::metadata(&ready).and_then(|m| m.modified()) else {
        bail!("rust-cuda toolchain not set up: run scripts/setup.sh");
    };
    let mut inputs = vec![
        root.join("nvvm/Cargo.lock"),
        root.join("gpu-kernels/Cargo.lock"),
    ];
    let patches = root.join("nvvm/patches");
    for entry in
        std::fs::read_dir(&patches).with_context(|| format!("reading '{}'", patches.display()))?
    {
        inputs.push(entry?.path());
    }
    for input in inputs {
        let changed = std::fs::metadata(&input)
            .and_then(|m| m.modified())
            .with_context(|| format!("reading '{}'", input.display()))?;
        if changed > ready_at {
            let name = input.strip_prefix(root).unwrap_or(&input);
            bail!(
                "rust-cuda toolchain out of date ('{}' changed): run scripts/setup.sh",
                name.display()
            );
        }
    }
    Ok(())
}
