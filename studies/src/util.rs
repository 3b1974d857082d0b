//! Paths and process helpers shared by the subcommands.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (xtask's parent directory when built here; the current directory
/// when the binary was copied to a machine without the source tree).
pub fn root() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    if built.join("Cargo.toml").exists() {
        built
    } else {
        std::env::current_dir().expect("current directory")
    }
}

/// The commit what runs was built from: a `dist/` binary's own (its `MANIFEST.txt`, even inside
/// a checkout, whose HEAD may differ from what was built), else `git rev-parse --short HEAD`
/// with `-dirty` when the tree has changes; "unknown" outside git.
pub fn git_commit(root: &Path) -> String {
    if let Some(c) = dist_commit() {
        return c;
    }
    let out = |args: &[&str]| {
        Command::new("git")
            .current_dir(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match out(&["rev-parse", "--short", "HEAD"]) {
        Some(c) if out(&["status", "--porcelain"]).is_some_and(|s| !s.is_empty()) => {
            format!("{c}-dirty")
        }
        Some(c) => c,
        None => "unknown".into(),
    }
}

/// `commit:` from the `MANIFEST.txt` that `cargo xtask dist` writes beside this binary.
fn dist_commit() -> Option<String> {
    let manifest = std::env::current_exe().ok()?.with_file_name("MANIFEST.txt");
    let text = std::fs::read_to_string(manifest).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("commit: "))
        .map(|c| c.trim().to_string())
}

/// The current UTC time as `2026-11-29T12:00:00Z`.
pub fn now_utc() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A CUDA tool (`ptxas`, `nvdisasm`, `cuobjdump`): the project's own CUDA 13 tools in
/// `.tools/cuda13/bin` first (what `scripts/setup.sh` installs), then `$CUDA_PATH/bin`, then
/// `PATH`.
pub fn cuda_tool(name: &str) -> Result<PathBuf> {
    let mut dirs = vec![root().join(".tools/cuda13/bin")];
    if let Some(cuda) = std::env::var_os("CUDA_PATH") {
        dirs.push(root().join(cuda).join("bin"));
    }
    dirs.extend(
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths),
    );
    dirs.into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| anyhow::anyhow!("'{name}' not found (looked in .tools/cuda13/bin, $CUDA_PATH/bin, PATH): run scripts/setup.sh"))
}

/// `ptxas` and `nvdisasm` as [`cuda_tool`] finds them, for the `sass` crate.
pub fn sass_tools() -> Result<sass::Tools> {
    Ok(sass::Tools {
        ptxas: cuda_tool("ptxas")?,
        nvdisasm: cuda_tool("nvdisasm")?,
    })
}

/// The lab's source tree, for source lines: the device layer (`gpu-kernels/src/device/`,
/// thin wrappers over `core::arch` and rust-cuda) is library code, charged to the kernel
/// line that called it; a capture made in another checkout finds its kernel sources and CUDA
/// headers under this one.
pub fn source_tree() -> sass::source::Tree {
    sass::source::Tree {
        root: root(),
        libraries: vec!["gpu-kernels/src/device/".into()],
        folders: vec!["gpu-kernels".into(), ".tools".into()],
    }
}

/// A tool's version as its `--version` reports it: the line naming the release
/// (`Cuda compilation tools, release 13.0, V13.0.88`), else the build line, else "unknown".
pub fn tool_version(tool: &Path) -> String {
    let Ok(out) = Command::new(tool).arg("--version").output() else {
        return "unknown".into();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |word: &str| {
        text.lines()
            .find(|l| l.contains(word))
            .map(|l| l.trim().to_string())
    };
    line("release")
        .or_else(|| line("Build"))
        .unwrap_or_else(|| "unknown".into())
}

/// Fails with one line when this machine has no CUDA driver: `libcuda.so.1`, which `lab` (and
/// every CUDA program) loads before it starts, does not load.
pub fn require_cuda_driver() -> Result<()> {
    // SAFETY: dlopen takes a NUL-terminated name and returns a handle or null; the handle is
    // only closed again, never used.
    let handle =
        unsafe { libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
    if handle.is_null() {
        bail!(
            "no CUDA driver on this machine (libcuda.so.1 does not load): this command runs on \
             an NVIDIA GPU; build dist/ here (cargo xtask dist), copy the repository with dist/ \
             to a GPU machine and run the same command there as dist/xtask, or read committed \
             results here (cargo xtask compare A.json B.json, cargo xtask profile --from DIR)"
        );
    }
    // SAFETY: `handle` came from dlopen above and is closed once.
    unsafe { libc::dlclose(handle) };
    Ok(())
}

/// The `lab` binary: `explicit` (`--lab PATH`), else the one beside this executable. Under
/// `cargo xtask` in a source tree (cargo sets `CARGO`) it is rebuilt first so it is never
/// stale; from a copied `dist/` it is used as it is. lab cannot start without the CUDA driver,
/// so a machine without one is refused here first ([`require_cuda_driver`]).
pub fn lab_binary(explicit: Option<&Path>) -> Result<PathBuf> {
    require_cuda_driver()?;
    let root = root();
    if explicit.is_none()
        && let Some(cargo) = std::env::var_os("CARGO")
        && root.join("Cargo.toml").exists()
    {
        crate::process::run(Command::new(cargo).current_dir(&root).args([
            "build",
            "--release",
            "--quiet",
            "-p",
            "host",
            "--bin",
            "lab",
        ]))?;
    }
    let lab = match explicit {
        Some(p) => p.to_path_buf(),
        None => std::env::current_exe()
            .context("locating the xtask binary")?
            .with_file_name("lab"),
    };
    if !lab.is_file() {
        bail!(
            "the lab binary is not at {}: build it (`cargo build --release -p host`, or `cargo xtask dist`) or pass --lab PATH",
            lab.display()
        );
    }
    Ok(lab)
}
