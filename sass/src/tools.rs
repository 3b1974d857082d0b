//! The CUDA tools this crate runs, `ptxas` and `nvdisasm`: where they are, and one run of each
//! with its command line echoed on stderr (`+ ptxas -arch=sm_90 …`) and its failure named.

use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::process::Command;

/// Where `ptxas` and `nvdisasm` are.
#[derive(Debug, Clone)]
pub struct Tools {
    pub ptxas: PathBuf,
    pub nvdisasm: PathBuf,
}

impl Tools {
    /// Both from `$CUDA_PATH/bin`, else from `PATH`.
    pub fn find() -> Result<Tools> {
        let dirs: Vec<PathBuf> = std::env::var_os("CUDA_PATH")
            .map(|c| PathBuf::from(c).join("bin"))
            .into_iter()
            .chain(
                std::env::var_os("PATH")
                    .iter()
                    .flat_map(std::env::split_paths),
            )
            .collect();
        let find = |name: &str| {
            dirs.iter()
                .map(|d| d.join(name))
                .find(|p| p.is_file())
                .with_context(|| {
                    format!("'{name}' not found in $CUDA_PATH/bin nor on PATH: install the CUDA toolkit or set CUDA_PATH")
                })
        };
        Ok(Tools {
            ptxas: find("ptxas")?,
            nvdisasm: find("nvdisasm")?,
        })
    }
}

/// A command line as a user would type it (arguments with spaces quoted).
pub fn show(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        let a = a.to_string_lossy();
        s.push(' ');
        if a.contains(' ') || a.is_empty() {
            s += &format!("'{a}'");
        } else {
            s += &a;
        }
    }
    s
}

/// What a finished child process printed.
pub struct Captured {
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd`, echoing it to stderr first, and returns its output; fails with the command
/// line, the exit status and the tail of its stderr.
pub fn capture(cmd: &mut Command) -> Result<Captured> {
    eprintln!("+ {}", show(cmd));
    let out = cmd
        .output()
        .with_context(|| format!("could not start '{}'", show(cmd)))?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(10).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "'{}' failed ({})\n{}",
            show(cmd),
            out.status,
            tail.join("\n")
        );
    }
    Ok(Captured {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    })
}
