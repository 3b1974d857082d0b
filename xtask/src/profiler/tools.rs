//! Finding and running ncu and nsys, and turning their known failures into one clear line.

use super::progress::{Piece, Splitter, Status};
use anyhow::{Context, Result, bail};
use std::ffi::OsStr;
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// A profiler binary: its name, the variable that overrides it, where NVIDIA installs it.
pub struct Tool {
    pub name: &'static str,
    pub what: &'static str,
    /// Environment variable holding an explicit path.
    pub env: &'static str,
    /// Known locations; a `*` stands for one directory level (a version), newest first.
    pub known: &'static [&'static str],
}

pub const NCU: Tool = Tool {
    name: "ncu",
    what: "Nsight Compute",
    env: "NCU",
    known: &[
        "/opt/nvidia/nsight-compute/*/ncu",
        "/usr/local/cuda/bin/ncu",
        "/usr/local/cuda/nsight-compute*/ncu",
    ],
};

pub const NSYS: Tool = Tool {
    name: "nsys",
    what: "Nsight Systems",
    env: "NSYS",
    known: &[
        "/opt/nvidia/nsight-systems/*/bin/nsys",
        "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",
        "/usr/local/cuda/bin/nsys",
    ],
};

pub const SANITIZER: Tool = Tool {
    name: "compute-sanitizer",
    what: "CUDA Compute Sanitizer",
    env: "COMPUTE_SANITIZER",
    known: &[
        "/usr/local/cuda/bin/compute-sanitizer",
        "/usr/local/cuda/compute-sanitizer/compute-sanitizer",
        "/opt/nvidia/compute-sanitizer/compute-sanitizer",
    ],
};

impl Tool {
    /// `$NCU`, else `ncu` on PATH, else the newest known location. None found: one line that
    /// says where it looked and what to do.
    pub fn find(&self) -> Result<PathBuf> {
        if let Some(p) = std::env::var_os(self.env).filter(|p| !p.is_empty()) {
            let p = PathBuf::from(p);
            if is_executable(&p) {
                return Ok(p);
            }
            bail!(
                "{}={} is not an executable file: point it at the {} binary or unset it",
                self.env,
                p.display(),
                self.name
            );
        }
        self.find_in(std::env::var_os("PATH").as_deref(), self.known)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{} ({}) not found on PATH nor in {}: install it, add it to PATH, or set {}=/path/to/{}",
                    self.name,
                    self.what,
                    self.known.join(", "),
                    self.env,
                    self.name
                )
            })
    }

    /// The search itself, for a given PATH and list of known patterns.
    pub fn find_in(&self, path: Option<&OsStr>, known: &[&str]) -> Option<PathBuf> {
        if let Some(path) = path {
            for dir in std::env::split_paths(path) {
                let p = dir.join(self.name);
                if is_executable(&p) {
                    return Some(p);
                }
            }
        }
        known.iter().find_map(|pattern| expand(pattern))
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable matching `pattern` (`*` = one path component, highest version first).
pub fn expand(pattern: &str) -> Option<PathBuf> {
    let mut candidates = vec![PathBuf::from("/")];
    for part in Path::new(pattern).components().skip(1) {
        let part = part.as_os_str().to_string_lossy();
        let mut next = Vec::new();
        for dir in &candidates {
            if part.contains('*') {
                let (pre, post) = part.split_once('*').expect("contains *");
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                let mut names: Vec<String> = entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| {
                        n.starts_with(pre) && n.ends_with(post) && n.len() >= pre.len() + post.len()
                    })
                    .collect();
                names.sort_by_key(|n| std::cmp::Reverse(version_key(n)));
                next.extend(names.into_iter().map(|n| dir.join(n)));
            } else {
                next.push(dir.join(&*part));
            }
        }
        candidates = next;
    }
    candidates.into_iter().find(|p| is_executable(p))
}

/// `2025.3.1` sorts after `2025.10.0`? No: numbers compare as numbers.
fn version_key(s: &str) -> Vec<u64> {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}

/// A failure of ncu or nsys that has a known cause and remedy.
pub fn known_problem(tool: &str, output: &str) -> Option<String> {
    if output.contains("ERR_NVGPUCTRPERM") {
        return Some(
            "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): run it as root, \
             or in a container started with --cap-add SYS_ADMIN, or have the host load the nvidia \
             module with NVreg_RestrictProfilingToAdminUsers=0"
                .into(),
        );
    }
    if output.contains("libdw.so.1") || output.contains("libelf.so.1") {
        return Some(format!(
            "{tool}'s importer cannot load libdw.so.1/libelf.so.1: extract Debian's libdw1 and libelf1 \
             (`apt-get download libdw1 libelf1`, `dpkg -x`) and put their usr/lib/x86_64-linux-gnu on \
             LD_LIBRARY_PATH (gpu/profile.sh does this from dist/debs)"
        ));
    }
    None
}

/// ncu profiled nothing.
pub fn profiled_nothing(output: &str) -> bool {
    output.contains("No kernels were profiled")
}

/// Runs `cmd`, echoing its command line, forwarding its stdout and stderr to our stderr as
/// they come, and returning its status with everything it printed (its lines, as
/// `BufRead::lines` yields them, stdout's then stderr's, each ended by `\n`).
///
/// On a terminal (and without `LAB_QUIET`) the line being written shows as a progress bar
/// when it is ncu's replay progress or nsys's report generation (see [`super::progress`]).
pub fn run_tee(cmd: &mut Command) -> Result<(ExitStatus, String)> {
    eprintln!("+ {}", show(cmd));
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("could not start '{}'", show(cmd)))?;
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    let bar = Status::for_stderr();
    let bar = &bar;
    std::thread::scope(|s| {
        let a = s.spawn(move || forward(out, 0, bar));
        let b = s.spawn(move || forward(err, 1, bar));
        let status = child.wait().context("waiting for the profiler");
        let text = a.join().unwrap_or_default() + &b.join().unwrap_or_default();
        Ok((status?, text))
    })
}

/// Reads `r` as it comes (ncu and nsys print progress without a newline), forwards each
/// line as `  {line}` and returns the lines.
fn forward(mut r: impl Read, stream: usize, bar: &Status) -> String {
    let mut text = String::new();
    let mut emit = |piece: Piece| match piece {
        Piece::Line { text: line, show } => {
            bar.end_line(stream);
            if !bar.is_on() {
                // Off a terminal: every line exactly as before.
                let _ = writeln!(std::io::stderr().lock(), "  {line}");
            } else if let Some(show) = show {
                bar.print(&show);
            }
            text += &line;
            text.push('\n');
        }
        Piece::Segment(seg) if bar.is_on() => bar.print(&seg),
        Piece::Segment(_) => {}
    };
    let mut lines = Splitter::default();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                lines.push(&buf[..n], &mut emit);
                if bar.is_on()
                    && let Some(p) = lines.progress()
                {
                    bar.update(stream, p);
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    lines.finish(&mut emit);
    text
}

/// Runs `cmd` quietly and returns its stdout; on failure, an error with its stderr.
pub fn output(cmd: &mut Command) -> Result<String> {
    let o = cmd
        .output()
        .with_context(|| format!("could not start '{}'", show(cmd)))?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let first = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        bail!("'{}' failed ({}): {}", show(cmd), o.status, first.trim());
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
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

/// A temporary sibling of `path` (same folder, so a rename is atomic), unique to this process.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp{}", std::process::id()))
}

/// Writes `bytes` to a temporary sibling, then renames it over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temp_path(path);
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("renaming {} to {}", tmp.display(), path.display())
    })
}

/// Moves a finished file into place (a rename within one folder).
pub fn commit(tmp: &Path, path: &Path) -> Result<()> {
    std::fs::rename(tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}
