//! Progress of ncu and nsys while they run (`profiler::progress`, `process::run_tee`): the
//! parser on the real H200 console logs (`xtask/tests/fixtures/ncu/*.ncu.log`,
//! `xtask/tests/fixtures/nsys/*.nsys.log` and `xtask/tests/fixtures/progress/*.log.gz`: ncu's replay
//! progress, nsys's `\r`-separated report chunks), the byte splitter against `BufRead::lines`, and
//! `run_tee` on a small script that prints like they do. The bar itself: `progress.rs`'s tests.

use crate::lab_fixtures;
use profiler::progress::{Piece, Progress, Splitter, parse};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The folders of the logs: the c7486e2 capture's ncu and nsys consoles, and gpu/profile.sh's
/// own logs of the first capture (gzipped).
fn logs() -> Vec<PathBuf> {
    let fixtures = lab_fixtures();
    ["ncu", "nsys", "progress"]
        .iter()
        .map(|d| fixtures.join(d))
        .collect()
}

fn log(name: &str) -> String {
    let path = logs()
        .iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no log {name}"));
    profiler::gzip::read_text(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

/// Every `*.log` (or `*.log.gz`) of the capture, by name.
fn all_logs() -> Vec<(String, String)> {
    let mut names: Vec<String> = logs()
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log") || n.ends_with(".log.gz"))
        .collect();
    names.sort();
    assert!(names.len() >= 9, "{names:?}");
    names
        .into_iter()
        .map(|n| (log(&n), n))
        .map(|(t, n)| (n, t))
        .collect()
}

/// What the old reader (`BufReader::lines`, each line plus `\n`) returned for `bytes`.
fn old_text(bytes: &[u8]) -> String {
    let mut text = String::new();
    for line in BufReader::new(bytes).lines().map_while(|l| l.ok()) {
        text += &line;
        text.push('\n');
    }
    text
}

/// `bytes` through a [`Splitter`], `chunk` bytes per read.
fn split(bytes: &[u8], chunk: usize) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut s = Splitter::default();
    for c in bytes.chunks(chunk) {
        s.push(c, &mut |p| pieces.push(p));
    }
    s.finish(&mut |p| pieces.push(p));
    pieces
}

fn text_of(pieces: &[Piece]) -> String {
    let mut text = String::new();
    for p in pieces {
        if let Piece::Line { text: t, .. } = p {
            text += t;
            text.push('\n');
        }
    }
    text
}

fn ncu(kernel: &str, launch: u64, percent: u8) -> Progress {
    Progress::Ncu {
        kernel: kernel.into(),
        launch,
        percent,
    }
}

#[test]
fn ncu_replay_progress_from_its_unfinished_line() {
    let cases = [
        (r#"==PROF== Profiling "reduce_v3_f32" - 2: "#, 0),
        (r#"==PROF== Profiling "reduce_v3_f32" - 2: 0%"#, 0),
        (r#"==PROF== Profiling "reduce_v3_f32" - 2: 0%."#, 10),
        (r#"==PROF== Profiling "reduce_v3_f32" - 2: 0%...."#, 40),
        (r#"==PROF== Profiling "reduce_v3_f32" - 2: 0%....5"#, 40),
        (r#"==PROF== Profiling "reduce_v3_f32" - 2: 0%....50%"#, 50),
        (
            r#"==PROF== Profiling "reduce_v3_f32" - 2: 0%....50%..."#,
            80,
        ),
        (
            r#"==PROF== Profiling "reduce_v3_f32" - 2: 0%....50%....10"#,
            90,
        ),
        (
            r#"==PROF== Profiling "reduce_v3_f32" - 2: 0%....50%....100% - 17 passes"#,
            100,
        ),
    ];
    for (line, percent) in cases {
        assert_eq!(
            parse(line),
            Some(ncu("reduce_v3_f32", 2, percent)),
            "{line}"
        );
    }
    assert_eq!(
        parse(r#"==PROF== Profiling "reduce_v3_f32" - 2: 0%"#)
            .unwrap()
            .label(),
        "ncu: reduce_v3_f32 (#2)"
    );
    // Not yet known which kernel, or not ncu's progress at all.
    for line in [
        r#"==PROF== Profiling "reduce_v"#,
        r#"==PROF== Profiling "reduce_v3_f32" - 2"#,
        "==PROF== Connected to process 2374 (/work/main/dist/lab)",
        "==PROF== Disconnected from process 2374",
        "",
    ] {
        assert_eq!(parse(line), None, "{line}");
    }
}

/// Every ncu progress line of the capture, cut after each byte: the kernel and launch index
/// once they are known, a percent that only grows, 100 at the end.
#[test]
fn ncu_progress_on_the_real_logs() {
    let mut seen = 0;
    for (name, text) in all_logs() {
        for line in text.lines() {
            let Some(at) = line.find("==PROF== Profiling \"") else {
                if !line.contains("[1/1] [") {
                    assert_eq!(parse(line), None, "{name}: {line}");
                }
                continue;
            };
            let line = &line[at..];
            let (kernel, rest) = line[20..].split_once('"').unwrap();
            let launch: u64 = rest[3..rest.find(':').unwrap()].parse().unwrap();
            let known = line.find(": ").unwrap() + 2;
            let mut last = 0;
            for cut in (0..=line.len()).filter(|&i| line.is_char_boundary(i)) {
                let p = parse(&line[..cut]);
                if cut < known {
                    assert_eq!(p, None, "{name}: {}", &line[..cut]);
                    continue;
                }
                let p = p.unwrap_or_else(|| panic!("{name}: {}", &line[..cut]));
                assert!(p.same_step(&ncu(kernel, launch, 0)), "{p:?}");
                assert!(p.percent() >= last, "{name}: {}", &line[..cut]);
                last = p.percent();
            }
            assert_eq!(last, 100, "{name}: {line}");
            seen += 1;
        }
    }
    // 2 (CUB) + 7 + 7 (reductions) + 4 + 4 (transposes) + 1 + 1 (profile) and the combined logs.
    assert!(seen >= 26, "{seen}");
}

#[test]
fn nsys_report_progress_takes_the_last_chunk() {
    // Without separators (as the console log shows them) and with nsys's `\r`s.
    let joined = "[1/1] [=10%  ] x[1/1] [==50%  ] x";
    assert_eq!(
        parse(joined),
        Some(Progress::Nsys {
            step: 1,
            steps: 1,
            percent: 50,
            name: "x".into()
        })
    );
    let chunks = "\r[1/1] [0%                          ] .nsys-bench.tmp2559.nsys-rep\
                  \r[1/1] [====26%                     ] .nsys-bench.tmp2559.nsys-rep\
                  \r[1/1] [==1";
    let p = parse(chunks).unwrap();
    assert_eq!(
        p,
        Progress::Nsys {
            step: 1,
            steps: 1,
            percent: 26,
            name: ".nsys-bench.tmp2559.nsys-rep".into()
        }
    );
    assert_eq!(p.label(), "nsys: generating report");
    let done = "[1/1] [========================100%] .nsys-bench.tmp2559.nsys-rep";
    assert_eq!(parse(done).unwrap().percent(), 100);
    assert_eq!(
        parse("[2/3] [=====30%                    ] r")
            .unwrap()
            .label(),
        "nsys: generating report (2/3)"
    );
    for line in [
        "Generating '/tmp/nsys-report-b1ab.qdstrm'",
        "[1/1] [==1",
        "Generated:",
        "| reduce_v1      | llvm    | f32   | 2^28 | 1073.7 |      2067 |",
    ] {
        assert_eq!(parse(line), None, "{line}");
    }
}

/// The report-generation line of both nsys runs, cut after each byte: step 1/1 and the percent
/// of the last complete chunk; 100 at the end.
#[test]
fn nsys_progress_on_the_real_logs() {
    for name in ["nsys-bench.nsys.log", "nsys-launch-gap.nsys.log"] {
        let text = log(name);
        let line = text
            .lines()
            .find(|l| l.contains("[1/1] ["))
            .unwrap_or_else(|| panic!("{name}: no report progress"));
        assert!(
            line.starts_with('\r'),
            "{name}: nsys separates its chunks by \\r"
        );
        let chunks: Vec<&str> = line.split('\r').filter(|c| !c.is_empty()).collect();
        assert!(chunks.len() > 30, "{name}: {}", chunks.len());
        let percent = |c: &str| -> u8 {
            let end = c.find('%').unwrap();
            let start = c[..end].rfind(|ch: char| !ch.is_ascii_digit()).unwrap() + 1;
            c[start..end].parse().unwrap()
        };
        let mut expected = None;
        let mut from = 0;
        for (i, c) in chunks.iter().enumerate() {
            let end = line[from..].find(c).unwrap() + from + c.len();
            for cut in from..=end {
                let p = parse(&line[..cut]);
                match p {
                    None => assert_eq!(expected, None, "{name}: chunk {i}"),
                    Some(p) => {
                        let p_pct = p.percent();
                        assert!(p.same_step(&parse("[1/1] [0%] r").unwrap()));
                        // The chunk being written counts once its `%]` is in.
                        let now = percent(c);
                        assert!(
                            Some(p_pct) == expected || p_pct == now,
                            "{name}: chunk {i} cut {cut}: {p_pct}"
                        );
                    }
                }
            }
            expected = Some(percent(c));
            from = end;
        }
        assert_eq!(parse(line).unwrap().percent(), 100, "{name}");
    }
}

/// The text the splitter returns is what `BufRead::lines` gave, however the reads cut it.
#[test]
fn splitter_returns_what_lines_did() {
    let mut inputs: Vec<Vec<u8>> = all_logs().into_iter().map(|(_, t)| t.into()).collect();
    for s in [
        "",
        "\n",
        "\n\n",
        "no newline",
        "a\r\nb\r\n",
        "ends in cr\r",
        "a\rb\r\n\rc\rd",
        "\r[1/1] [=10%  ] x\r[1/1] [==50%  ] x\n",
        "==PROF== Profiling \"k\" - 0: 0%....50%....100% - 3 passes\n",
        "wide × chars ✓ split by reads\n",
    ] {
        inputs.push(s.into());
    }
    for bytes in &inputs {
        let old = old_text(bytes);
        for chunk in [1, 2, 3, 7, 64, 8192] {
            assert_eq!(
                text_of(&split(bytes, chunk)),
                old,
                "chunk {chunk}: {:?}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(80)])
            );
        }
    }
}

/// On a terminal: each `\r` part is shown once, progress parts only in the bar, and a line's
/// last part when it ends.
#[test]
fn splitter_shows_parts_split_by_cr() {
    let line = |text: &str, show: Option<&str>| Piece::Line {
        text: text.into(),
        show: show.map(Into::into),
    };
    assert_eq!(
        split(b"a\rb\n", 1),
        [Piece::Segment("a".into()), line("a\rb", Some("b"))]
    );
    assert_eq!(split(b"\n", 1), [line("", Some(""))]);
    assert_eq!(split(b"\r\n", 1), [line("", Some(""))]);
    assert_eq!(
        split(b"x\r\n", 1),
        [Piece::Segment("x".into()), line("x", None)]
    );
    assert_eq!(
        split(b"[1/1] [=10%] r\r\n", 1),
        [line("[1/1] [=10%] r", Some("[1/1] [=10%] r"))]
    );

    // nsys's real line: no part of it printed but the last chunk.
    let text = log("nsys-bench.nsys.log");
    let real = text.lines().find(|l| l.contains("[1/1] [")).unwrap();
    let pieces = split(format!("{real}\n").as_bytes(), 5);
    assert_eq!(
        pieces,
        [line(
            real,
            Some("[1/1] [========================100%] .nsys-bench.tmp2210.nsys-rep")
        )]
    );

    // While it is being written, the splitter knows the progress (also right after a `\r`).
    let mut s = Splitter::default();
    let mut out = Vec::new();
    let cut = real.find("====26%").unwrap() + 30;
    s.push(&real.as_bytes()[..cut], &mut |p| out.push(p));
    assert!(out.is_empty());
    assert_eq!(s.progress().unwrap().percent(), 26);
    let cr = cut + real[cut..].find('\r').unwrap() + 1;
    s.push(&real.as_bytes()[cut..cr], &mut |p| out.push(p));
    assert_eq!(s.pending(), "");
    assert_eq!(s.progress().unwrap().percent(), 26);

    let mut s = Splitter::default();
    s.push(
        b"==PROF== Profiling \"reduce_v1_f32\" - 0: 0%....50%..",
        &mut |p| out.push(p),
    );
    assert_eq!(s.progress(), Some(ncu("reduce_v1_f32", 0, 70)));
    assert!(out.is_empty());
}

/// What the old `run_tee` returned: stdout's lines, then stderr's.
fn old_run_tee(cmd: &mut Command) -> String {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read = |r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            for line in BufReader::new(r).lines().map_while(|l| l.ok()) {
                text += &line;
                text.push('\n');
            }
            text
        })
    };
    let a = read(Box::new(child.stdout.take().unwrap()));
    let b = read(Box::new(child.stderr.take().unwrap()));
    child.wait().unwrap();
    a.join().unwrap() + &b.join().unwrap()
}

fn sh(script: &str) -> Command {
    let mut c = Command::new("sh");
    c.args(["-c", script]);
    c
}

#[test]
fn run_tee_returns_the_same_lines() {
    let script = r#"printf "==PROF== Profiling \"k\" - 0: 0%%...."; sleep 0.1; printf "50%%....100%% - 3 passes\n"; printf "[1/1] [=10%%  ] x[1/1] [==50%%  ] x\n" >&2"#;
    let (status, text) = profiler::process::run_tee(&mut sh(script)).unwrap();
    assert!(status.success());
    assert_eq!(
        text,
        "==PROF== Profiling \"k\" - 0: 0%....50%....100% - 3 passes\n\
         [1/1] [=10%  ] x[1/1] [==50%  ] x\n"
    );
    assert_eq!(text, old_run_tee(&mut sh(script)));

    // nsys's `\r`s, CRLF, a blank line, a last line without a newline, a failing exit.
    let script = r#"printf 'a\r\nb\rc\n\n\r[1/1] [=5%%] r'; sleep 0.1; printf '\r[1/1] [=9%%] r\n'; printf 'err\r\ntail\r' >&2; printf 'out tail'; exit 3"#;
    let (status, text) = profiler::process::run_tee(&mut sh(script)).unwrap();
    assert_eq!(status.code(), Some(3));
    assert_eq!(
        text,
        "a\nb\rc\n\n\r[1/1] [=5%] r\r[1/1] [=9%] r\nout tail\nerr\ntail\r\n"
    );
    assert_eq!(text, old_run_tee(&mut sh(script)));
}
