//! Running a profiler: its command line as a user would type it, and its output forwarded as
//! it comes (a progress bar in place of ncu's and nsys's unfinished lines on a terminal) and
//! returned.

use crate::progress::{Piece, Splitter, Status};
use anyhow::{Context, Result};
pub use sass::tools::show;
use std::io::{ErrorKind, Read, Write};
use std::process::{Command, ExitStatus, Stdio};

/// Runs `cmd`, echoing its command line, forwarding its stdout and stderr to our stderr as
/// they come, and returning its status with everything it printed (its lines, as
/// `BufRead::lines` yields them, stdout's then stderr's, each ended by `\n`).
///
/// On a terminal (and without `LAB_QUIET`) the line being written shows as a progress bar
/// when it is ncu's replay progress or nsys's report generation (see [`crate::progress`]).
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
