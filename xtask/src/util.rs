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

/// Runs `cmd`, echoing it first; fails with the command line and exit status.
pub fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("+ {}", show(cmd));
    let status = cmd
        .status()
        .with_context(|| format!("could not start '{}'", show(cmd)))?;
    if !status.success() {
        bail!("'{}' failed ({status})", show(cmd));
    }
    Ok(())
}

/// A command line as a user would type it.
pub fn show(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}
