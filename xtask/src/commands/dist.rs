//! `cargo xtask dist`: everything a GPU machine without cargo needs, in one folder.
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: &Args) -> Result<()> {
    anyhow::bail!("not yet implemented")
}
