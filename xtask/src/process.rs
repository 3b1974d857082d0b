//! Running child processes, the one way every command does it: the command line is echoed on
//! stderr as `+ cmd args` before it starts, and a failure is an error naming the command line
//! and its exit status.
//!
//! - [`run`]: output passes through; fails unless the exit status is success.
//! - [`capture`]: output captured and returned; a failure carries the tail of its stderr.
//! - [`run_tee`]: output forwarded as it comes (with a progress bar for ncu and nsys on a
//!   terminal) and returned with the status, for callers that read the status themselves.
//! - [`output`]: not echoed (a version query, a listing); returns stdout.

use crate::profiler::progress::{Piece, Splitter, Status};
use anyhow::{Context, Result, bail};
use std::io::{ErrorKind, Read, Write};
use std::process::{Command, ExitStatus, Stdio};

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

/// Runs `cmd`, echoing its command line, forwarding its stdout and stderr to our stderr as
/// they come, and returning its status with everything it printed (its lines, as
/// `BufRead::lines` yields them, stdout's then stderr's, each ended by `\n`).
///
/// On a terminal (and without `LAB_QUIET`) the line being written shows as a progress bar
/// when it is ncu's replay progress or nsys's report generation (see [`crate::profiler::progress`]).
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

