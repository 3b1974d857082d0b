//! Nothing a document points at is missing. Every Markdown file of README.md, docs/,
//! nvvm/README.md, results/ and the test fixtures' READMEs is scanned for
//!
//! - relative links, `[text](path)`, resolved against the file's folder: the file or folder
//!   must exist;
//! - paths in code, `` `results/…` `` and `` `xtask/tests/fixtures/…` `` in a code span or a
//!   fenced block (commands included): they must exist, read from the repository root. A
//!   brace list (`{txt,json}`) is expanded, a glob (`*`, `?`, `[3-5]`, and `…` for "any") or a
//!   placeholder (`<commit>`) must match at least one file, a prefix (`nsys --from PREFIX`,
//!   a capture's stem) must begin some file's name (`PREFIX_…`, `STEM.…`), and a path written as
//!   `COMMIT:results/…` (a `git show` of a file that left the tree) must exist in that commit
//!   (checked when the clone has it).
//!
//! Usage examples whose files are made up are listed in [`PLACEHOLDERS`].
//!
//! A second test keeps every fixture file under 1 MB.

use regex::Regex;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Paths of usage examples that name no real file (docs/profiling.md's `compare` synopsis,
/// docs/json-schema.md's live output folder).
const PLACEHOLDERS: [&str; 4] = [
    "results/bench/A.json",
    "results/bench/B.json",
    "results/bench/X.json",
    "results/compare/<A>-vs-<B>-<date>/compare.json",
];

/// Where checked paths in code start.
const ROOTS: [&str; 2] = ["results/", "xtask/tests/fixtures/"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        }
        out.push(p);
    }
}

/// The documents this test reads.
fn documents() -> Vec<PathBuf> {
    let r = root();
    let mut docs = vec![r.join("README.md"), r.join("nvvm/README.md")];
    let mut found = Vec::new();
    for d in ["docs", "results", "xtask/tests/fixtures"] {
        walk(&r.join(d), &mut found);
    }
    docs.extend(
        found
            .into_iter()
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md")),
    );
    docs.sort();
    docs
}

/// Every file and folder under the checked roots, as paths from the repository root.
fn tree() -> BTreeSet<String> {
    let r = root();
    let mut all = Vec::new();
    for d in ROOTS {
        walk(&r.join(d), &mut all);
    }
    all.iter()
        .map(|p| p.strip_prefix(&r).unwrap().to_string_lossy().into_owned())
        .chain(ROOTS.iter().map(|d| d.trim_end_matches('/').to_string()))
        .collect()
}

/// `a{b,c}d` → `abd`, `acd` (nested lists too).
fn expand(p: &str) -> Vec<String> {
    let Some(open) = p.find('{') else {
        return vec![p.to_string()];
    };
    let Some(close) = p[open..].find('}').map(|c| open + c) else {
        return vec![p.to_string()];
    };
    p[open + 1..close]
        .split(',')
        .flat_map(|alt| expand(&format!("{}{alt}{}", &p[..open], &p[close + 1..])))
        .collect()
}

/// A glob as a regex over one path: `*` (and `…`, and a `<placeholder>`) any characters but
/// `/`, `?` one, `[…]` a class; a trailing `/` names a folder.
fn pattern(glob: &str) -> Option<Regex> {
    let glob = glob.trim_end_matches('/');
    if !glob.contains(['*', '?', '[', '…', '<']) {
        return None;
    }
    let placeholder = Regex::new(r"<[^>]*>").unwrap();
    let glob = placeholder.replace_all(glob, "*").replace('…', "*");
    let mut re = String::from("^");
    let mut chars = glob.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '[' => {
                re.push('[');
                for c in chars.by_ref() {
                    re.push(c);
                    if c == ']' {
                        break;
                    }
                }
            }
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    Some(Regex::new(&re).unwrap())
}

/// Whether `path` (from the root; expanded, globbed) names something in `tree`.
fn present(path: &str, tree: &BTreeSet<String>) -> bool {
    expand(path).iter().all(|p| match pattern(p) {
        Some(re) => tree.iter().any(|f| re.is_match(f)),
        None => {
            let p = p.trim_end_matches('/');
            // A prefix, as `nsys --from PREFIX` (PREFIX_<report>.csv) and a capture's stem
            // (STEM.raw.csv) are written: a last part without an extension.
            let stem = !p.rsplit('/').next().unwrap_or(p).contains('.');
            tree.contains(p)
                || stem
                    && tree
                        .iter()
                        .any(|f| f.strip_prefix(p).is_some_and(|r| r.starts_with(['_', '.'])))
        }
    })
}

/// The files of `commit` (and their folders), or None when this clone lacks it.
fn tree_at(commit: &str) -> Option<BTreeSet<String>> {
    let out = Command::new("git")
        .current_dir(root())
        .args(["ls-tree", "-r", "--name-only", commit, "--"])
        .args(ROOTS)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut all = BTreeSet::new();
    for f in String::from_utf8_lossy(&out.stdout).lines() {
        let mut p = f;
        all.insert(p.to_string());
        while let Some((dir, _)) = p.rsplit_once('/') {
            all.insert(dir.to_string());
            p = dir;
        }
    }
    Some(all)
}

/// The spans a document quotes code in: inline `` `…` `` (which may run over a line break) and
/// the lines of fenced blocks, each with the line it starts on.
fn code_spans(text: &str) -> Vec<(usize, String)> {
    let mut spans = Vec::new();
    let mut fenced = false;
    // Prose between fences, with the number of its first line.
    let mut prose: Vec<(usize, String)> = vec![(1, String::new())];
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            if !fenced {
                prose.push((n + 2, String::new()));
            }
            continue;
        }
        if fenced {
            spans.push((n + 1, line.to_string()));
        } else {
            let last = prose.last_mut().unwrap();
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    for (first, block) in prose {
        let mut parts = block.split('`');
        let Some(head) = parts.next() else { continue };
        let mut at = head.len() + 1;
        while let (Some(code), Some(tail)) = (parts.next(), parts.next()) {
            let line = first + block[..at].matches('\n').count();
            spans.push((line, code.replace('\n', " ")));
            at += code.len() + tail.len() + 2;
        }
    }
    spans
}

/// The checked paths in one code span: (commit, path) with the commit of a `COMMIT:path`.
fn paths_in(code: &str) -> Vec<(Option<String>, String)> {
    let re = Regex::new(r"(?:\b([0-9a-f]{7,40}):)?((?:results|xtask/tests/fixtures)/\S*)").unwrap();
    re.captures_iter(code)
        .filter(|c| {
            // A path, not the tail of one (`../results/…`, `$work/results/…`).
            let start = c.get(0).unwrap().start();
            start == 0 || !code[..start].ends_with(['/', '.', '$', '_', '-'])
        })
        .map(|c| {
            let path = c[2].trim_end_matches(['.', ',', ';', ':', ')', '"', '\'']);
            (c.get(1).map(|m| m.as_str().to_string()), path.to_string())
        })
        .collect()
}

#[test]
fn every_path_a_document_points_at_exists() {
    let r = root();
    let tree = tree();
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut history: HashMap<String, Option<BTreeSet<String>>> = HashMap::new();
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(&r).unwrap().display().to_string();
        let dir = doc.parent().unwrap();
        for (n, line) in text.lines().enumerate() {
            for c in link.captures_iter(line) {
                let target = c[1].split('#').next().unwrap();
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                if !dir.join(target).exists() {
                    missing.push(format!("{name}:{}: link {target}", n + 1));
                }
            }
        }
        for (n, code) in code_spans(&text) {
            for (commit, path) in paths_in(&code) {
                if PLACEHOLDERS.contains(&path.as_str()) {
                    continue;
                }
                checked += 1;
                match commit {
                    None => {
                        if !present(&path, &tree) {
                            missing.push(format!("{name}:{n}: `{path}`"));
                        }
                    }
                    Some(c) => {
                        let at = history.entry(c.clone()).or_insert_with(|| tree_at(&c));
                        // A path in a commit this clone does not have is not checked.
                        if let Some(at) = at
                            && !present(&path, at)
                        {
                            missing.push(format!("{name}:{n}: `{c}:{path}` (not in {c})"));
                        }
                    }
                }
            }
        }
    }
    assert!(
        checked > 200,
        "only {checked} paths found: is the scan broken?"
    );
    assert!(
        missing.is_empty(),
        "{} paths point at nothing:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

/// The scanner's own rules, on made-up text.
#[test]
fn braces_globs_placeholders_and_history_are_understood() {
    let tree: BTreeSet<String> = [
        "results/bench/a-20261130T1Z.txt",
        "results/bench/a-20261130T1Z.json.gz",
        "results/bench",
        "results",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert!(present("results/bench/a-20261130T1Z.{txt,json.gz}", &tree));
    assert!(!present("results/bench/a-20261130T1Z.{txt,json}", &tree));
    assert!(present("results/bench/*T1Z.txt", &tree));
    assert!(present("results/bench/…T1Z.*", &tree));
    assert!(present("results/bench/<device>-<date>.txt", &tree));
    assert!(present("results/bench/", &tree));
    assert!(!present("results/bench/*T2Z.txt", &tree));
    assert!(present("results/bench/a-20261130T1Z", &tree), "a stem");
    assert!(!present("results/bench/a-2026", &tree), "not a stem");
    assert!(present("results/bench/a-2026113[0-1]T1Z.txt", &tree));
    let spans = code_spans(
        "a `results/x` b\n```\ncargo xtask y --from results/z,\n```\nc `d\nresults/e`\n",
    );
    assert_eq!(spans.len(), 3);
    assert_eq!(spans[2], (5, "d results/e".to_string()), "{spans:?}");
    assert_eq!(
        paths_in(&spans[0].1),
        [(None, "results/z".to_string())],
        "trailing punctuation is not the path's"
    );
    assert_eq!(
        paths_in("git show f69cc64:results/a/b.log and ../results/c and results/d"),
        [
            (Some("f69cc64".to_string()), "results/a/b.log".to_string()),
            (None, "results/d".to_string())
        ]
    );
}

/// Every file under `xtask/tests/fixtures/` (and the profiler crate's `tests/fixtures/`) stays
/// under 1 MB (a larger capture is gzipped, or kept in gzip parts that the test joins, as
/// `nsys/capture/`'s traces are).
#[test]
fn every_fixture_file_is_under_one_megabyte() {
    let mut all = Vec::new();
    for d in ["xtask/tests/fixtures", "profiler/tests/fixtures"] {
        walk(&root().join(d), &mut all);
    }
    let big: Vec<String> = all
        .iter()
        .filter(|p| p.is_file())
        .filter_map(|p| {
            let n = std::fs::metadata(p).unwrap().len();
            (n >= 1_000_000).then(|| format!("{} ({n} bytes)", p.display()))
        })
        .collect();
    assert!(all.len() > 50, "{} fixture files", all.len());
    assert!(big.is_empty(), "fixture files of 1 MB or more: {big:?}");
}
