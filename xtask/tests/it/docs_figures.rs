//! The figures the docs quote from results files are generated, not typed: every block marked
//! `<!-- results-table PATH SIZE DTYPE -->` … `<!-- /results-table -->` in README.md and docs/
//! must equal `cargo xtask results-table PATH --size SIZE --dtype DTYPE`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// (file, marker arguments, the table between the markers).
fn marked_tables(text: &str) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(args) = line
            .trim()
            .strip_prefix("<!-- results-table ")
            .and_then(|r| r.strip_suffix("-->"))
        else {
            continue;
        };
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| l.trim() != "<!-- /results-table -->")
            .collect();
        out.push((
            args.split_whitespace().map(String::from).collect(),
            body.join("\n") + "\n",
        ));
    }
    out
}

#[test]
fn docs_tables_are_generated_from_their_results_files() {
    let mut files = vec![root().join("README.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        files.push(e.unwrap().path());
    }
    let mut checked = 0;
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(f).unwrap();
        for (args, body) in marked_tables(&text) {
            let [path, size, dtype] = &args[..] else {
                panic!("{}: marker wants PATH SIZE DTYPE: {args:?}", f.display());
            };
            let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
                .current_dir(root())
                .args(["results-table", path, "--size", size, "--dtype", dtype])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                body,
                String::from_utf8(out.stdout).unwrap(),
                "{}: the table marked from {path} differs from the file (regenerate it with \
                 `cargo xtask results-table {path} --size {size} --dtype {dtype}`)",
                f.display()
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 1,
        "no marked table found: the README's results table is marked"
    );
}

#[test]
fn a_marked_table_is_found_and_a_changed_figure_would_differ() {
    let text = "x\n<!-- results-table a.json 2^28 f32 -->\n| k | 1 |\n<!-- /results-table -->\ny\n";
    let t = marked_tables(text);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].0, ["a.json", "2^28", "f32"]);
    assert_eq!(t[0].1, "| k | 1 |\n");
    assert_ne!(t[0].1, "| k | 2 |\n");
}
