//! The catalogue's modules form layers: no module reaches, through `crate::` paths (its own or
//! those the crate root re-exports), a module that reaches back to it. Comments are left out,
//! so a doc link may name any module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every `.rs` file under `dir`, with its top-level module (`kernels` for `kernels/table.rs`).
fn files(dir: &Path, top: Option<&str>, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            files(&p, Some(top.unwrap_or(&stem)), out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let module = top.unwrap_or(&stem).to_string();
            let code: String = std::fs::read_to_string(&p)
                .unwrap()
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            out.push((module, code));
        }
    }
}

/// What the crate root re-exports, by name: `Family` → `names`.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = rest.trim_end_matches(';').split_once("::") else {
            continue;
        };
        for n in names.trim_matches(|c| c == '{' || c == '}').split(',') {
            out.insert(n.trim().to_string(), module.to_string());
        }
    }
    out
}

#[test]
fn no_module_of_the_catalogue_reaches_back_to_one_that_reaches_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, None, &mut all);
    let modules: BTreeSet<String> = all
        .iter()
        .map(|(m, _)| m.clone())
        .filter(|m| m != "lib")
        .collect();
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let reexported = reexports(&lib);
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in all.iter().filter(|(m, _)| m != "lib") {
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            // `crate::x`, or each name of `crate::{x, y::z}`.
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
                None => vec![rest],
            };
            for name in names {
                let first: String = name
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let target = if modules.contains(&first) {
                    Some(first)
                } else {
                    reexported.get(&first).cloned()
                };
                if let Some(t) = target.filter(|t| t != module) {
                    uses.entry(module.clone()).or_default().insert(t);
                }
            }
        }
    }
    // Every module a module reaches, directly or through others.
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for t in uses.get(&m).into_iter().flatten() {
                if seen.insert(t.clone()) {
                    todo.push(t.clone());
                }
            }
        }
        seen
    };
    let mut circles = Vec::new();
    for m in &modules {
        if reach(m).contains(m) {
            circles.push(format!("{m} (uses {:?})", uses.get(m)));
        }
    }
    assert!(circles.is_empty(), "modules in a circle: {circles:#?}");
    // The layers stand: the vocabulary at the floor, the records above it, the model on top.
    assert!(uses.get("names").is_none_or(|u| u.is_empty()), "{uses:?}");
    assert!(!reach("records").contains("kernels"), "{uses:?}");
    assert!(reach("model").contains("kernels") && reach("model").contains("records"));
}
