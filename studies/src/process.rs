//! Running child processes, the one way every command does it: the command line is echoed on
//! stderr as `+ cmd args` before it starts, and a failure is an error naming the command line
//! and its exit status.
//!
//! - [`run`]: output passes through; fails unless the exit status is success.
//! - [`run_keeping_stderr`]: as [`run`], and returns what the child printed on stderr.
//! - [`capture`]: output captured and returned; a failure carries the tail of its stderr.
//! - [`run_tee`]: output forwarded as it comes (with a progress bar for ncu and nsys on a
//!   terminal) and returned with the status, for callers that read the status themselves
//!   (the profiler crate's, which runs ncu and nsys).
//! - [`output`]: not echoed (a version query, a listing); returns stdout.
//! - [`run_parallel`], [`output_within`]: several runs at once, each within a time limit.

use anyhow::{Context, Result, bail};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use profiler::process::{run_tee, show};
pub use sass::tools::{Captured, capture};

/// A child that failed after starting: it has printed why, so `main` ends with its exit code
/// and adds no line of its own (unless a caller gave the failure context).
#[derive(Debug)]
pub struct ChildFailed {
    pub command: String,
    pub status: ExitStatus,
}

impl ChildFailed {
    /// The exit code to end with: the child's, or 128 + the signal that ended it.
    pub fn code(&self) -> i32 {
        use std::os::unix::process::ExitStatusExt;
        self.status
            .code()
            .or(self.status.signal().map(|s| 128 + s))
            .unwrap_or(1)
    }
}

impl std::fmt::Display for ChildFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "'{}' failed ({})", self.command, self.status)
    }
}

impl std::error::Error for ChildFailed {}

/// Runs `cmd`, echoing it first; fails with [`ChildFailed`].
pub fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("+ {}", show(cmd));
    let status = cmd
        .status()
        .with_context(|| format!("could not start '{}'", show(cmd)))?;
    if !status.success() {
        return Err(ChildFailed {
            command: show(cmd),
            status,
        }
        .into());
    }
    Ok(())
}

/// Runs `cmd` as [`run`] does, its stderr forwarded as it comes and also returned (for the
/// `wrote PATH` lines `lab` prints). The child's stderr is a pipe, not the terminal, so a
/// progress bar it would draw there gives way to its plain lines.
pub fn run_keeping_stderr(cmd: &mut Command) -> Result<String> {
    eprintln!("+ {}", show(cmd));
    let mut child = cmd
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("could not start '{}'", show(cmd)))?;
    let mut pipe = child.stderr.take().expect("piped");
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let _ = std::io::stderr().write_all(&buf[..n]);
                kept.extend_from_slice(&buf[..n]);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let status = child
        .wait()
        .with_context(|| format!("waiting for '{}'", show(cmd)))?;
    if !status.success() {
        return Err(ChildFailed {
            command: show(cmd),
            status,
        }
        .into());
    }
    Ok(String::from_utf8_lossy(&kept).into_owned())
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

/// A finished run's exit code (-1 when a signal ended it) and everything it printed, stdout
/// then stderr.
pub type Outcome = Result<(i32, String)>;

/// Runs the jobs `width` at a time; each within `limit`, when given.
pub fn run_parallel(
    jobs: Vec<(String, String, Command)>,
    width: usize,
    limit: Option<Duration>,
) -> Vec<(String, String, Command, Outcome)> {
    let jobs = std::sync::Mutex::new(jobs.into_iter().enumerate().collect::<Vec<_>>());
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..width {
            s.spawn(|| {
                loop {
                    let Some((i, (tool, label, mut cmd))) = jobs.lock().unwrap().pop() else {
                        break;
                    };
                    eprintln!("sanitize: {tool} · {label}");
                    let outcome = match limit {
                        Some(limit) => output_within(&mut cmd, limit),
                        None => cmd
                            .output()
                            .with_context(|| format!("starting {}", crate::process::show(&cmd)))
                            .map(|o| {
                                let text = String::from_utf8_lossy(&o.stdout).into_owned()
                                    + &String::from_utf8_lossy(&o.stderr);
                                (o.status.code().unwrap_or(-1), text)
                            }),
                    };
                    done.lock().unwrap().push((i, (tool, label, cmd, outcome)));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// How long to wait, once a run has ended, for its output pipes to close.
pub const PIPE_GRACE: Duration = Duration::from_secs(2);

/// A run stopped at its time limit, with what it had printed by then.
#[derive(Debug)]
pub struct TimedOut {
    pub limit: Duration,
    pub text: String,
}

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "did not finish in {} s", self.limit.as_secs())
    }
}

impl std::error::Error for TimedOut {}

/// Like `cmd.output()`, but for at most `limit`: past it, `cmd`'s process group (it gets one of
/// its own, so compute-sanitizer and the lab it started) is killed and the run is [`TimedOut`].
pub fn output_within(cmd: &mut Command, limit: Duration) -> Outcome {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", crate::process::show(cmd)))?;
    let pipes = [drain(child.stdout.take()), drain(child.stderr.take())];
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() >= limit {
            let group = -i32::try_from(child.id())?;
            // SAFETY: kill(2) takes no pointers; a negative pid names the process group that
            // `process_group(0)` gave the child, whose id is the child's pid.
            unsafe { libc::kill(group, libc::SIGKILL) };
            child.wait()?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // A process that left the group could hold the pipes open: read what came, then go on.
    let ended = Instant::now();
    while pipes.iter().any(|(_, reader)| !reader.is_finished()) && ended.elapsed() < PIPE_GRACE {
        std::thread::sleep(Duration::from_millis(10));
    }
    let text: String = pipes
        .iter()
        .map(|(buf, _)| String::from_utf8_lossy(&buf.lock().unwrap()).into_owned())
        .collect();
    match status {
        Some(status) => Ok((status.code().unwrap_or(-1), text)),
        None => Err(TimedOut { limit, text }.into()),
    }
}

/// Reads `pipe` to its end on a thread of its own, into a buffer the caller can read at any time.
fn drain(
    pipe: Option<impl Read + Send + 'static>,
) -> (Arc<Mutex<Vec<u8>>>, std::thread::JoinHandle<()>) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let shared = Arc::clone(&buf);
    let reader = std::thread::spawn(move || {
        let Some(mut pipe) = pipe else { return };
        let mut chunk = [0u8; 8192];
        while let Ok(n @ 1..) = pipe.read(&mut chunk) {
            shared.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
    });
    (buf, reader)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_is_kept_and_a_failure_is_an_error() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo 'wrote a b.json' >&2; echo done >&2"]);
        assert_eq!(
            run_keeping_stderr(&mut cmd).unwrap(),
            "wrote a b.json\ndone\n"
        );
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo no >&2; exit 3"]);
        let e = run_keeping_stderr(&mut cmd).unwrap_err().to_string();
        assert!(e.starts_with("'sh -c 'echo no >&2; exit 3'' failed"), "{e}");
    }
}
