//! `cargo xtask ptx`: the kernels' PTX, from both Rust GPU compilers and, for comparison, from
//! nvcc (the same algorithms in CUDA C++, `gpu-kernels/cuda/kernels.cu`), written where the
//! host loads it from (`target/ptx/<backend>/gpu_kernels.ptx`). With the llvm backend it also
//! builds the sanitizer's canaries (feature `canaries`) into their own PTX,
//! `target/ptx/canary/gpu_kernels.ptx`.

use anyhow::{Context, Result};
use catalog::{Backend, Which};
use std::path::{Path, PathBuf};
use std::process::Command;
use studies::util;

#[derive(clap::Args)]
pub struct Args {
    /// Which compiler(s): llvm (rustc's NVPTX backend), nvvm (rust-cuda), nvcc (the CUDA C++
    /// twins), or all
    #[arg(long, value_enum, default_value_t = Which::All)]
    backend: Which,
}

pub fn run(args: &Args) -> Result<()> {
    build(&util::root(), args.backend)
}

/// Every PTX set, as the host build needs them.
pub fn build_all(root: &Path) -> Result<()> {
    build(root, Which::All)
}

fn build(root: &Path, which: Which) -> Result<()> {
    let backends = which.backends();
    if backends.contains(&Backend::Llvm) {
        let ptx = build_llvm(root, false)?;
        eprintln!("llvm PTX: {}", ptx.display());
        let ptx = build_llvm(root, true)?;
        eprintln!("canary PTX: {}", ptx.display());
    }
    if backends.contains(&Backend::Nvvm) {
        let ptx = crate::nvvm::build(root)?;
        eprintln!("nvvm PTX: {}", ptx.display());
    }
    if backends.contains(&Backend::Nvcc) {
        let ptx = build_nvcc(root)?;
        eprintln!("nvcc PTX: {}", ptx.display());
    }
    Ok(())
}

/// The CUDA C++ twins of the chapter's kernels, through nvcc 13 with the flags a CUDA user
/// would pick: `-O3 -arch=sm_90`, and `-lineinfo` like the llvm build's line tables; the
/// launch constants as `-D` flags (`catalog::cdefs`).
fn build_nvcc(root: &Path) -> Result<PathBuf> {
    let dest = ptx_path(root, "nvcc");
    std::fs::create_dir_all(dest.parent().unwrap())?;
    let tmp = dest.with_extension("ptx.tmp");
    studies::process::run(
        Command::new(util::cuda_tool("nvcc")?)
            .args(["-ptx", "-O3", "-std=c++17", "-arch=sm_90", "-lineinfo"])
            .args(catalog::cdefs::nvcc_defines())
            .arg("-o")
            .arg(&tmp)
            .arg(root.join(NVCC_SOURCE)),
    )?;
    // Renamed into place only when whole, so a failed build never leaves a PTX that looks new.
    std::fs::rename(&tmp, &dest).with_context(|| format!("writing {}", dest.display()))?;
    Ok(dest)
}

/// The CUDA C++ source nvcc compiles (relative to the workspace root).
pub const NVCC_SOURCE: &str = "gpu-kernels/cuda/kernels.cu";

/// Where the host loads a backend's PTX from (or the canaries', `catalog::ptx::CANARY_SET`).
pub fn ptx_path(root: &Path, set: &str) -> PathBuf {
    root.join(catalog::ptx::set_path(set))
}

/// rustc's own NVPTX backend: `-Z build-std=core` for `nvptx64-nvidia-cuda`, sm_90; the lab's
/// kernels, or with `canaries` the canaries alone (in their own target folder: a cdylib's
/// output name does not change with its features, so the two builds must not share one).
fn build_llvm(root: &Path, canaries: bool) -> Result<PathBuf> {
    let (set, features): (_, &[&str]) = if canaries {
        (catalog::ptx::CANARY_SET, &["--features", "canaries"])
    } else {
        ("llvm", &[])
    };
    let target_dir = root.join(format!("target/kernels-{set}"));
    studies::process::run(
        Command::new("cargo")
            .current_dir(root.join("gpu-kernels"))
            .args([
                "build",
                "--release",
                "--target",
                "nvptx64-nvidia-cuda",
                "-Z",
                "build-std=core",
            ])
            .args(features)
            .env("CARGO_TARGET_DIR", &target_dir)
            // Line tables let ncu's Source page and `asm --source` map SASS back to Rust
            // lines; cargo's release profile would strip them at link time. PTX 8.1, not
            // LLVM's default 7.8, for the cluster schedule's `st.async`.
            .env(
                "RUSTFLAGS",
                "-C target-cpu=sm_90 -C target-feature=+ptx81 -C debuginfo=line-tables-only",
            )
            .env("CARGO_PROFILE_RELEASE_STRIP", "none"),
    )?;
    let built = target_dir.join("nvptx64-nvidia-cuda/release/gpu_kernels.ptx");
    let ptx =
        std::fs::read_to_string(&built).with_context(|| format!("reading {}", built.display()))?;
    // With debug info LLVM marks the module `.target sm_90, debug`, which makes ptxas compile
    // without optimisation (like nvcc -G). Line tables alone are nvcc's -lineinfo: keep the
    // `.loc` lines, drop the `debug` flag.
    let ptx = ptx.replacen(".target sm_90, debug", ".target sm_90", 1);
    let ptx = catalog::ptx::with_launch_bounds(&ptx, |e| {
        catalog::kernels::launch_bounds(catalog::Backend::Llvm, e)
    });
    let dest = ptx_path(root, set);
    std::fs::create_dir_all(dest.parent().unwrap())?;
    std::fs::write(&dest, ptx).with_context(|| format!("writing {}", dest.display()))?;
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use studies::sanitize::CANARIES;

    fn ptx_text(set: &str) -> String {
        let path = ptx_path(&util::root(), set);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}: run cargo xtask ptx", path.display()))
    }

    fn entries(set: &str) -> Vec<String> {
        let text = ptx_text(set);
        catalog::ptx::entries(&text)
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// Each entry of the two Rust compilers' PTX that the catalogue bounds carries its bounds,
    /// and no other entry any (`catalog::rows::launch_bounds`: rustc's LayerNorm clusters,
    /// rust-cuda's RMSNorm f32 cluster, and the six pair kernels of each).
    #[test]
    fn entries_carry_the_catalogues_launch_bounds() {
        for (set, backend, want_bounded) in [
            ("llvm", catalog::Backend::Llvm, 2 + 6),
            ("nvvm", catalog::Backend::Nvvm, 1 + 6),
        ] {
            let text = ptx_text(set);
            let mut bounded = 0;
            for (at, _) in text.match_indices(".visible .entry ") {
                // The entry's declaration up to its body's `{`.
                let head = &text[at..];
                let head = &head[..head.find('{').unwrap_or(head.len())];
                let entry = catalog::ptx::entry_name(head.lines().next().unwrap()).unwrap();
                let want = catalog::kernels::launch_bounds(backend, entry)
                    .map(|(t, k)| format!(".maxntid {t}, 1, 1\n.minnctapersm {k}\n"));
                assert_eq!(
                    want.as_deref().filter(|w| head.ends_with(w)),
                    want.as_deref(),
                    "{set} {entry}: {head}"
                );
                assert_eq!(head.contains(".maxntid"), want.is_some(), "{set} {entry}");
                bounded += want.is_some() as usize;
            }
            assert_eq!(bounded, want_bounded, "{set}");
        }
    }

    /// The canary PTX holds the four canaries and nothing else; no backend's PTX holds any.
    #[test]
    fn canaries_are_only_in_their_own_ptx() {
        let mut canaries = entries(catalog::ptx::CANARY_SET);
        canaries.sort();
        let mut expected: Vec<&str> = CANARIES.iter().map(|c| c.kernel).collect();
        expected.sort();
        assert_eq!(canaries, expected);
        for backend in ["llvm", "nvvm", "nvcc"] {
            let main = entries(backend);
            assert!(main.len() > 10, "{backend}: {main:?}");
            assert!(
                !main.iter().any(|e| e.starts_with("canary")),
                "{backend}: {main:?}"
            );
        }
    }
}
