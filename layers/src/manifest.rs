//! The crates of the repository, what each depends on among them (its `Cargo.toml`), and the
//! table of what each may depend on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One crate of the repository and the crates of the repository it depends on (normal, dev and
/// build dependencies alike: a test's import is an import).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crate {
    pub name: String,
    pub dir: PathBuf,
    pub deps: BTreeSet<String>,
}

/// `name = "x"` of a manifest's `[package]`.
fn package_name(toml: &str) -> Option<String> {
    let mut in_package = false;
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package && let Some(v) = value(line, "name") {
            return Some(v);
        }
    }
    None
}

/// The string value of `key = "value"`.
fn value(line: &str, key: &str) -> Option<String> {
    let (k, v) = line.split_once('=')?;
    (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
}

/// The dependencies a manifest names with a `path`: (name, path), from every dependency table.
fn path_deps(toml: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
            continue;
        }
        let Some((name, rest)) = line.split_once('=') else {
            continue;
        };
        // `[dependencies]` then `x = { path = "…" }`, or `[dependencies.x]` then `path = "…"`.
        let table = section
            .rsplit_once('.')
            .filter(|(head, _)| head.ends_with("dependencies"));
        if section.ends_with("dependencies")
            && let Some(i) = rest.find("path =").or_else(|| rest.find("path="))
        {
            let path = rest[i..].split('"').nth(1).unwrap_or("");
            out.push((name.trim().to_string(), path.to_string()));
        } else if let Some((_, dep)) = table
            && name.trim() == "path"
        {
            out.push((dep.to_string(), rest.trim().trim_matches('"').to_string()));
        }
    }
    out
}

/// The crates under `root`: the workspace's members and the crates it excludes (each with a
/// `Cargo.toml` of its own), with their dependencies among themselves.
pub fn crates(root: &Path) -> std::io::Result<Vec<Crate>> {
    let top = std::fs::read_to_string(root.join("Cargo.toml"))?;
    let mut dirs = Vec::new();
    for key in ["members", "exclude"] {
        let Some(i) = top.find(&format!("{key} = [")) else {
            continue;
        };
        let list = top[i..].split(['[', ']']).nth(1).unwrap_or("");
        dirs.extend(
            list.split(',')
                .map(|s| s.trim().trim_matches('"').to_string())
                .filter(|s| !s.is_empty()),
        );
    }
    let mut named = Vec::new();
    for d in dirs {
        let dir = root.join(&d);
        let toml = std::fs::read_to_string(dir.join("Cargo.toml"))?;
        let name = package_name(&toml).unwrap_or(d);
        named.push((name, dir, toml));
    }
    let by_dir: BTreeMap<PathBuf, String> = named
        .iter()
        .map(|(n, d, _)| (d.canonicalize().unwrap_or(d.clone()), n.clone()))
        .collect();
    Ok(named
        .iter()
        .map(|(name, dir, toml)| Crate {
            name: name.clone(),
            dir: dir.clone(),
            deps: path_deps(toml)
                .into_iter()
                .filter_map(|(_, p)| {
                    let d = dir.join(p);
                    by_dir.get(&d.canonicalize().unwrap_or(d)).cloned()
                })
                .collect(),
        })
        .collect())
}

/// The table between `<!-- layers -->` and `<!-- /layers -->` in `markdown`: per crate (the
/// first cell, in backticks), the crates it may import (the backticked names of the second).
pub fn allowed(markdown: &str) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let start = markdown
        .find("<!-- layers -->")
        .ok_or("no `<!-- layers -->` table")?;
    let end = markdown[start..]
        .find("<!-- /layers -->")
        .ok_or("no `<!-- /layers -->` after the table")?
        + start;
    let mut out = BTreeMap::new();
    for row in markdown[start..end].lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let ticked = |cell: &str| -> Vec<String> {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect()
        };
        let (Some(name), Some(may)) = (
            cells.get(1).and_then(|c| ticked(c).into_iter().next()),
            cells.get(2),
        ) else {
            continue;
        };
        out.insert(name, ticked(may).into_iter().collect());
    }
    if out.is_empty() {
        return Err("the layers table has no rows".into());
    }
    Ok(out)
}

/// What breaks the table: a dependency it does not allow, a crate it lacks or names that does
/// not exist, a circle among the crates it allows. One line each; empty when the crates keep
/// their layers.
pub fn forbidden(crates: &[Crate], allowed: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = Vec::new();
    let names: BTreeSet<&String> = crates.iter().map(|c| &c.name).collect();
    for c in crates {
        let Some(may) = allowed.get(&c.name) else {
            out.push(format!(
                "crate `{}` is not in the layers table: add its row",
                c.name
            ));
            continue;
        };
        for d in c.deps.iter().filter(|d| !may.contains(*d)) {
            out.push(format!(
                "`{}` imports `{d}`, which its row of the layers table does not allow",
                c.name
            ));
        }
    }
    for (name, may) in allowed {
        for n in std::iter::once(name)
            .chain(may)
            .filter(|n| !names.contains(n))
        {
            out.push(format!(
                "the layers table names `{n}`, which is no crate here"
            ));
        }
    }
    // The table itself must be layers: no crate may reach itself through what it allows.
    for name in allowed.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = allowed[name].iter().collect();
        while let Some(n) = todo.pop() {
            if seen.insert(n) {
                todo.extend(allowed.get(n).into_iter().flatten());
            }
        }
        if seen.contains(name) {
            out.push(format!("the layers table lets `{name}` reach itself"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
<!-- layers -->
| crate | may import | what |
|---|---|---|
| `floor` | — | std only |
| `middle` | `floor` | |
| `top` | `middle`, `floor` | |
<!-- /layers -->";

    fn krate(name: &str, deps: &[&str]) -> Crate {
        Crate {
            name: name.into(),
            dir: PathBuf::from(name),
            deps: deps.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn the_table_is_read() {
        let t = allowed(TABLE).unwrap();
        assert_eq!(t.len(), 3);
        assert!(t["floor"].is_empty());
        assert_eq!(
            t["top"],
            BTreeSet::from(["middle".to_string(), "floor".into()])
        );
    }

    #[test]
    fn crates_within_their_layers_pass() {
        let crates = [
            krate("floor", &[]),
            krate("middle", &["floor"]),
            krate("top", &["middle"]),
        ];
        assert_eq!(
            forbidden(&crates, &allowed(TABLE).unwrap()),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_import_upward_or_a_crate_missing_from_the_table_fails() {
        let crates = [
            krate("floor", &["top"]),
            krate("middle", &["floor"]),
            krate("top", &[]),
            krate("stray", &[]),
        ];
        let found = forbidden(&crates, &allowed(TABLE).unwrap());
        assert_eq!(
            found,
            [
                "`floor` imports `top`, which its row of the layers table does not allow",
                "crate `stray` is not in the layers table: add its row",
            ]
        );
    }

    #[test]
    fn a_table_with_a_circle_or_an_unknown_crate_fails() {
        let table = TABLE.replace("| `floor` | — |", "| `floor` | `top`, `ghost` |");
        let crates = [krate("floor", &[]), krate("middle", &[]), krate("top", &[])];
        let found = forbidden(&crates, &allowed(&table).unwrap());
        assert!(
            found.contains(&"the layers table names `ghost`, which is no crate here".to_string()),
            "{found:?}"
        );
        assert!(
            found.contains(&"the layers table lets `floor` reach itself".to_string()),
            "{found:?}"
        );
    }

    #[test]
    fn path_dependencies_of_every_table_are_read() {
        let toml = "[package]\nname = \"x\"\n[dependencies]\na = { path = \"../a\" }\nserde = \"1\"\n\
                    [dev-dependencies]\nb = { version = \"1\", path = \"../b\" }\n[build-dependencies.c]\npath = \"../c\"\n";
        assert_eq!(package_name(toml).as_deref(), Some("x"));
        let deps: Vec<String> = path_deps(toml).into_iter().map(|(n, _)| n).collect();
        assert_eq!(deps, ["a", "b", "c"]);
    }
}
