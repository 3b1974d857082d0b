//! The map of unsafe code in `host/src/lib.rs` is true: every source file with an `unsafe`
//! block or function is one of the places it lists (a file, or under a listed folder).

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_file_with_unsafe_code_is_on_the_map() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    // `//! - `ffi.rs`: …`, `//! - `launchers/`: …`.
    let places: Vec<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//! - `"))
        .filter_map(|l| l.split_once("`:").map(|(p, _)| p.to_string()))
        .collect();
    assert!(places.contains(&"ffi.rs".to_string()), "{places:?}");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut off_map = Vec::new();
    for f in files {
        let code: String = std::fs::read_to_string(&f)
            .unwrap()
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        if !code.contains("unsafe ") {
            continue;
        }
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let listed = places
            .iter()
            .any(|p| rel == *p || (p.ends_with('/') && rel.starts_with(p.as_str())));
        if !listed {
            off_map.push(rel);
        }
    }
    assert!(
        off_map.is_empty(),
        "unsafe code in files host/src/lib.rs does not list: {off_map:?}"
    );
}
