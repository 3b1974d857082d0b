//! Progress of ncu's replays and nsys's report generation while they run.
//!
//! Both print their progress without a newline (ncu: `0%....50%....100%` a few bytes at a
//! time; nsys: `\r[1/1] [==50%   ] name` chunks), so a line reader shows nothing until the
//! step is over. [`Splitter`] cuts the byte stream into lines (exactly as `BufRead::lines`
//! would, for the text callers parse) and into display segments on `\n` and `\r`; [`parse`]
//! reads the progress from a line still being written; [`Status`] draws it as one bar on
//! stderr, only on a terminal and not under `--quiet` (`LAB_QUIET`).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use regex::Regex;
use std::borrow::Cow;
use std::ffi::OsStr;
use std::io::Write;
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

/// What a profiler is doing, as read from its unfinished line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// ncu replaying one launch: `==PROF== Profiling "NAME" - K: 0%....50%..`.
    Ncu {
        kernel: String,
        launch: u64,
        percent: u8,
    },
    /// nsys writing its report: `[i/N] [===NN%   ] name`.
    Nsys {
        step: u64,
        steps: u64,
        percent: u8,
        name: String,
    },
}

impl Progress {
    pub fn percent(&self) -> u8 {
        match self {
            Progress::Ncu { percent, .. } | Progress::Nsys { percent, .. } => *percent,
        }
    }

    /// The bar's message: `ncu: reduce_v3_f32 (#2)`, `nsys: generating report`.
    pub fn label(&self) -> String {
        match self {
            Progress::Ncu { kernel, launch, .. } => {
                // Demangled template names can be longer than the terminal.
                let short: String = if kernel.chars().count() > 48 {
                    kernel.chars().take(47).chain(['…']).collect()
                } else {
                    kernel.clone()
                };
                format!("ncu: {short} (#{launch})")
            }
            Progress::Nsys { step, steps, .. } if *steps > 1 => {
                format!("nsys: generating report ({step}/{steps})")
            }
            Progress::Nsys { .. } => "nsys: generating report".into(),
        }
    }

    /// Same step of the same tool (the percent may differ): the bar carries on.
    pub fn same_step(&self, other: &Progress) -> bool {
        match (self, other) {
            (
                Progress::Ncu { kernel, launch, .. },
                Progress::Ncu {
                    kernel: k,
                    launch: l,
                    ..
                },
            ) => kernel == k && launch == l,
            (
                Progress::Nsys { step, steps, .. },
                Progress::Nsys {
                    step: s, steps: n, ..
                },
            ) => step == s && steps == n,
            _ => false,
        }
    }
}

static NCU: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"==PROF== Profiling "([^"]*)" - (\d+): ([0-9.%]*)"#).unwrap());
static NSYS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[(\d+)/(\d+)\] \[=*(\d+)%[ =]*\] ?([^\[\r\n]*)").unwrap());

/// The progress in `partial`, the text of a line not yet finished; the later of ncu's and
/// nsys's forms if both occur.
pub fn parse(partial: &str) -> Option<Progress> {
    let ncu = NCU.captures_iter(partial).last().map(|c| {
        let at = c.get(0).expect("match").start();
        let p = Progress::Ncu {
            kernel: c[1].to_string(),
            launch: c[2].parse().unwrap_or(0),
            percent: ncu_percent(&c[3]),
        };
        (at, p)
    });
    // A chunk cut off before its `%]` does not match: the one before it is the latest.
    let nsys = NSYS.captures_iter(partial).last().map(|c| {
        let at = c.get(0).expect("match").start();
        let p = Progress::Nsys {
            step: c[1].parse().unwrap_or(0),
            steps: c[2].parse().unwrap_or(0),
            percent: c[3].parse::<u8>().unwrap_or(0).min(100),
            name: c[4].trim_end().to_string(),
        };
        (at, p)
    });
    match (ncu, nsys) {
        (Some(a), Some(b)) => Some(if a.0 > b.0 { a.1 } else { b.1 }),
        (a, b) => a.or(b).map(|(_, p)| p),
    }
}

/// ncu prints `0%`, four dots, `50%`, four dots, `100%`: the last mark reached plus one step
/// per dot after it (a step is the gap between marks over the dots between them, else 10).
fn ncu_percent(tail: &str) -> u8 {
    let mut marks: Vec<(u32, u32)> = Vec::new(); // (percent, dots before it)
    let (mut digits, mut dots) = (String::new(), 0u32);
    for ch in tail.chars() {
        match ch {
            '0'..='9' => digits.push(ch),
            '%' => {
                if let Ok(n) = digits.parse() {
                    marks.push((n, dots));
                }
                digits.clear();
                dots = 0;
            }
            _ => {
                digits.clear();
                dots += 1;
            }
        }
    }
    let step = match marks.as_slice() {
        [.., (a, _), (b, d)] if b > a => (b - a) / (d + 1),
        _ => 10,
    };
    let last = marks.last().map_or(0, |m| m.0);
    (last + dots * step).min(100) as u8
}

/// A piece of output, as [`Splitter`] cuts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// A line as `BufRead::lines` yields it (`text`, for the returned output), and what a
    /// terminal shows of it (`show`: the part after its last `\r`, or nothing when that part
    /// was already shown).
    Line { text: String, show: Option<String> },
    /// A part ended by `\r` that is not progress: a terminal shows it as a line.
    Segment(String),
}

/// Cuts a byte stream into lines (on `\n`, like `BufRead::lines`) and display segments (on
/// `\n` and `\r`), keeping the unfinished rest.
#[derive(Default)]
pub struct Splitter {
    /// The current line so far, `\r`s included.
    line: Vec<u8>,
    /// Where the current segment starts in `line`.
    seg: usize,
    /// The last `\r` segment, when it was progress (drawn by the bar, not printed yet).
    held: Option<String>,
    /// This line had a non-empty `\r` segment.
    split: bool,
}

impl Splitter {
    pub fn push(&mut self, bytes: &[u8], out: &mut impl FnMut(Piece)) {
        for &b in bytes {
            if b == b'\n' {
                out(self.end_line(true));
                continue;
            }
            self.line.push(b);
            if b == b'\r' {
                let seg =
                    String::from_utf8_lossy(&self.line[self.seg..self.line.len() - 1]).into_owned();
                self.seg = self.line.len();
                if seg.is_empty() {
                    continue;
                }
                self.split = true;
                if parse(&seg).is_some() {
                    self.held = Some(seg);
                } else {
                    self.held = None;
                    out(Piece::Segment(seg));
                }
            }
        }
    }

    /// End of input: the unfinished line, if any, as `BufRead::lines` yields it.
    pub fn finish(&mut self, out: &mut impl FnMut(Piece)) {
        if !self.line.is_empty() {
            out(self.end_line(false));
        }
    }

    /// The unfinished segment (lossy: a character cut by a read shows as U+FFFD).
    pub fn pending(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.line[self.seg..])
    }

    /// Progress in the unfinished segment, else in the last `\r` segment of this line.
    pub fn progress(&self) -> Option<Progress> {
        parse(&self.pending()).or_else(|| self.held.as_deref().and_then(parse))
    }

    fn end_line(&mut self, newline: bool) -> Piece {
        let last = String::from_utf8_lossy(&self.line[self.seg..]).into_owned();
        let show = if !last.is_empty() {
            Some(last)
        } else if let Some(held) = self.held.take() {
            Some(held)
        } else if !self.split {
            Some(String::new())
        } else {
            None
        };
        let mut bytes = std::mem::take(&mut self.line);
        // `lines` drops "\n" and "\r\n"; a last line without "\n" keeps its "\r".
        if newline && bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        let text = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        *self = Splitter::default();
        Piece::Line { text, show }
    }
}

/// Whether to draw progress: `LAB_QUIET` unset or empty, and stderr a terminal.
pub fn wanted(quiet: Option<&OsStr>, terminal: bool) -> bool {
    quiet.is_none_or(|q| q.is_empty()) && terminal
}

const STYLE: &str = "  {spinner} {msg} {pos:>3}%  [{elapsed}]";
const STYLE_ETA: &str = "  {spinner} {msg} {pos:>3}% [{bar:20}] [{elapsed}, ETA {eta}]";

struct Shown {
    bar: ProgressBar,
    what: Progress,
    /// The stream whose unfinished line this is; its next complete line clears the bar.
    stream: usize,
    eta: bool,
}

/// One progress bar on stderr shared by the readers of a child's stdout and stderr; off
/// (nothing drawn, lines printed by the caller as before) off a terminal or when quiet.
pub struct Status {
    on: bool,
    target: fn() -> ProgressDrawTarget,
    shown: Mutex<Option<Shown>>,
}

impl Status {
    /// On for a terminal stderr, unless `LAB_QUIET` is set.
    pub fn for_stderr() -> Self {
        let terminal = !ProgressDrawTarget::stderr().is_hidden();
        let on = wanted(std::env::var_os("LAB_QUIET").as_deref(), terminal);
        Self::new(on, ProgressDrawTarget::stderr)
    }

    pub fn new(on: bool, target: fn() -> ProgressDrawTarget) -> Self {
        Status {
            on,
            target,
            shown: Mutex::new(None),
        }
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Shown>> {
        self.shown.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `stream`'s unfinished line shows `p`: move the bar, or start one for a new step.
    pub fn update(&self, stream: usize, p: Progress) {
        if !self.on {
            return;
        }
        let mut shown = self.lock();
        if let Some(s) = shown.as_mut().filter(|s| s.what.same_step(&p)) {
            s.stream = stream;
            // ETA only once the percent has moved: at 0% the rate is unknown.
            if !s.eta && p.percent() > 0 {
                s.bar.set_style(style(STYLE_ETA));
                s.eta = true;
            }
            s.bar.set_position(p.percent().into());
            s.what = p;
            return;
        }
        if let Some(old) = shown.take() {
            old.bar.finish_and_clear();
        }
        // Styled and labelled before it can draw: the first frame already names the kernel.
        let bar = ProgressBar::hidden()
            .with_style(style(STYLE))
            .with_message(p.label())
            .with_position(p.percent().into());
        bar.set_length(100);
        bar.set_draw_target((self.target)());
        bar.enable_steady_tick(Duration::from_millis(120));
        *shown = Some(Shown {
            bar,
            what: p,
            stream,
            eta: false,
        });
    }

    /// `stream` finished a line: its bar, if it has the bar, goes.
    pub fn end_line(&self, stream: usize) {
        let mut shown = self.lock();
        if shown.as_ref().is_some_and(|s| s.stream == stream)
            && let Some(s) = shown.take()
        {
            s.bar.finish_and_clear();
        }
    }

    /// Prints `  {line}` on stderr, above the bar when one is drawn.
    pub fn print(&self, line: &str) {
        let shown = self.lock();
        let print = || {
            let _ = writeln!(std::io::stderr().lock(), "  {line}");
        };
        match shown.as_ref() {
            Some(s) => s.bar.suspend(print),
            None => print(),
        }
    }

    /// The bar's message and percent, if one is up (for the tests).
    #[cfg(test)]
    pub fn showing(&self) -> Option<(String, u8)> {
        self.lock()
            .as_ref()
            .map(|s| (s.what.label(), s.what.percent()))
    }
}

impl Drop for Status {
    fn drop(&mut self) {
        if let Some(s) = self.lock().take() {
            s.bar.finish_and_clear();
        }
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ncu_at(kernel: &str, launch: u64, percent: u8) -> Progress {
        Progress::Ncu {
            kernel: kernel.into(),
            launch,
            percent,
        }
    }

    #[test]
    fn bar_only_on_a_terminal_and_not_quiet() {
        assert!(wanted(None, true));
        assert!(wanted(Some(OsStr::new("")), true));
        assert!(!wanted(Some(OsStr::new("1")), true));
        assert!(!wanted(None, false));
        assert!(!wanted(Some(OsStr::new("1")), false));

        let off = Status::new(false, ProgressDrawTarget::hidden);
        off.update(0, ncu_at("k", 0, 50));
        assert_eq!(off.showing(), None);
    }

    /// The bar follows the unfinished line that owns it, and goes when that line is finished.
    #[test]
    fn bar_follows_the_line_being_written() {
        let bar = Status::new(true, ProgressDrawTarget::hidden);
        assert_eq!(bar.showing(), None);
        bar.update(0, ncu_at("reduce_v1_f32", 0, 0));
        bar.update(0, ncu_at("reduce_v1_f32", 0, 50));
        assert_eq!(bar.showing(), Some(("ncu: reduce_v1_f32 (#0)".into(), 50)));
        // A line finished on the other stream (the app's own output) leaves it up.
        bar.print("lab run: NVIDIA H200");
        bar.end_line(1);
        assert_eq!(bar.showing(), Some(("ncu: reduce_v1_f32 (#0)".into(), 50)));
        bar.end_line(0);
        assert_eq!(bar.showing(), None);

        bar.update(0, ncu_at("reduce_v1_f32", 0, 100));
        bar.update(0, ncu_at("reduce_v2_f32", 1, 10));
        assert_eq!(bar.showing(), Some(("ncu: reduce_v2_f32 (#1)".into(), 10)));
        let nsys = parse("[1/1] [====25%   ] r").unwrap();
        bar.update(1, nsys);
        assert_eq!(bar.showing(), Some(("nsys: generating report".into(), 25)));
        bar.end_line(0);
        assert!(bar.showing().is_some());
        bar.end_line(1);
        assert_eq!(bar.showing(), None);
    }
}
