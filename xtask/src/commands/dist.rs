//! `cargo xtask dist`: everything a GPU machine without cargo needs, in one folder:
//! `dist/lab`, `dist/xtask` (run-side subcommands find `lab` beside them) and the GPU test
//! binaries under `dist/tests/`, the plain CUDA C++ timing harness (`dist/harness`, from
//! `gpu/harness.cu`), every PTX set once under `dist/ptx/` (the binaries read it from there,
//! `host::ptx`), plus a manifest of what was built from which commit. The binaries are
//! stripped: the folder travels with the tree.

use anyhow::{Context, Result, bail};
use catalog::Backend;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use studies::util;

#[derive(clap::Args)]
pub struct Args {
    /// Output folder
    #[arg(long, default_value = "dist")]
    out: PathBuf,
}

pub fn run(args: &Args) -> Result<()> {
    let root = util::root();
    let out = root.join(&args.out);
    // Fresh PTX first: the binaries load it from dist/ptx/, copied from the build below.
    super::ptx::build_all(&root)?;
    studies::process::run(Command::new("cargo").current_dir(&root).args([
        "build",
        "--release",
        "-p",
        "host",
        "-p",
        "xtask",
    ]))?;
    let tests = test_binaries(&root)?;

    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("removing {}", out.display()))?;
    }
    std::fs::create_dir_all(out.join("tests"))?;
    let mut binaries = Vec::new();
    for bin in ["lab", "xtask"] {
        copy(&root.join("target/release").join(bin), &out.join(bin))?;
        binaries.push(out.join(bin));
    }
    build_harness(&root, &out.join("harness"))?;
    binaries.push(out.join("harness"));
    let mut manifest = format!(
        "commit: {}\nbuilt: {}\n",
        util::git_commit(&root),
        util::now_utc()
    );
    for (name, path) in &tests {
        copy(path, &out.join("tests").join(name))?;
        binaries.push(out.join("tests").join(name));
        manifest += &format!("test binary: tests/{name}\n");
    }
    for set in Backend::ALL
        .map(|b| b.name())
        .into_iter()
        .chain([catalog::ptx::CANARY_SET])
    {
        let to = out.join(catalog::ptx::dist_path(set));
        std::fs::create_dir_all(to.parent().expect("ptx/<set>/"))?;
        gzip(&root.join(catalog::ptx::set_path(set)), &to)?;
        manifest += &format!("ptx: {}\n", catalog::ptx::dist_path(set));
    }
    studies::process::run(Command::new("strip").args(&binaries))?;
    std::fs::write(out.join(catalog::ptx::DIST_MANIFEST), manifest)?;
    eprintln!(
        "dist: {} (run `dist/tests/<name> --show-output` and `dist/xtask ...` there)",
        out.display()
    );
    Ok(())
}

/// `gpu/harness.cu` (the nvcc twins timed by plain CUDA C++) as a static-cudart executable.
fn build_harness(root: &Path, dest: &Path) -> Result<()> {
    let nvcc = util::cuda_tool("nvcc")?;
    // The wheels' libcudart_static.a sits in lib/ beside bin/, where nvcc does not look.
    let lib = nvcc
        .parent()
        .and_then(Path::parent)
        .map(|cuda| cuda.join("lib"))
        .context("nvcc has no parent folder")?;
    studies::process::run(
        Command::new(nvcc)
            .args(["-O3", "-std=c++17", "-arch=sm_90", "-lineinfo"])
            .args(catalog::cdefs::nvcc_defines())
            .arg("-L")
            .arg(lib)
            .arg("-o")
            .arg(dest)
            .arg(root.join("gpu/harness.cu")),
    )
}

/// The `tests` package's integration-test executables, by test name.
fn test_binaries(root: &Path) -> Result<Vec<(String, PathBuf)>> {
    let output = Command::new("cargo")
        .current_dir(root)
        .args([
            "test",
            "--release",
            "-p",
            "tests",
            "--no-run",
            "--message-format=json",
        ])
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo test --no-run")?;
    if !output.status.success() {
        bail!("building the test binaries failed");
    }
    let mut bins = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(exe), Some(kinds)) =
            (msg["executable"].as_str(), msg["target"]["kind"].as_array())
        else {
            continue;
        };
        if kinds.iter().any(|k| k == "test") && msg["target"]["name"] != "tests" {
            bins.push((
                msg["target"]["name"].as_str().unwrap_or("test").to_string(),
                PathBuf::from(exe),
            ));
        }
    }
    if bins.is_empty() {
        bail!("cargo test --no-run listed no test binaries");
    }
    Ok(bins)
}

/// `from` gzipped (level 9) into `to`.
fn gzip(from: &Path, to: &Path) -> Result<()> {
    use std::io::Write;
    let text = std::fs::read(from).with_context(|| format!("reading {}", from.display()))?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&text)?;
    std::fs::write(to, gz.finish()?).with_context(|| format!("writing {}", to.display()))
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    Ok(())
}
