//! The repository keeps its layers: every crate imports only what README.md's layers table
//! allows it, and no crate's modules import each other in a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn every_crate_imports_only_what_the_readme_table_allows() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let allowed = layers::allowed(&readme).unwrap();
    let crates = layers::crates(&root()).unwrap();
    assert!(crates.len() >= 10, "{crates:?}");
    let broken = layers::forbidden(&crates, &allowed);
    assert!(
        broken.is_empty(),
        "README.md's layers table:\n  {}",
        broken.join("\n  ")
    );
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut found = Vec::new();
    for c in layers::crates(&root()).unwrap() {
        for file in ["src/lib.rs", "src/main.rs"] {
            let path = c.dir.join(file);
            if !path.exists() {
                continue;
            }
            let modules = layers::modules(&path).unwrap();
            for circle in layers::circles(&modules) {
                let text = circle
                    .to_string()
                    .replace(&format!("{}/", root().display()), "");
                found.push(format!("{} ({file}) {text}", c.name));
            }
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// The catalogue's own floor: the vocabulary (`names`) imports no other module of it, the
/// records do not reach the kernel table, and the model stands on both.
#[test]
fn the_catalogue_keeps_its_floor() {
    let modules = layers::modules(&root().join("catalog/src/lib.rs")).unwrap();
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in layers::edges(&modules) {
        if let (Some(a), Some(b)) = (e.from.first(), e.to.first())
            && a != b
        {
            uses.entry(a.clone()).or_default().insert(b.clone());
        }
    }
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
    assert!(uses.get("names").is_none_or(|u| u.is_empty()), "{uses:?}");
    assert!(!reach("records").contains("kernels"), "{uses:?}");
    assert!(
        reach("model").contains("kernels") && reach("model").contains("records"),
        "{uses:?}"
    );
}
