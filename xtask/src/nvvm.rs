//! Placeholder until the rust-cuda build lands (helper owns this file).
use std::path::{Path, PathBuf};
pub fn build(_root: &Path) -> anyhow::Result<PathBuf> {
    anyhow::bail!("rust-cuda toolchain not set up: run scripts/setup.sh")
}
