//! A crate's modules, the imports between them, and the circles those imports make.

use crate::lex::{Tok, tokens};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path inside a crate: `[]` for the crate root, `["asm", "sass"]` for `asm::sass`.
pub type ModPath = Vec<String>;

/// One module: its path, its file (or its parent's, for an inline `mod x { … }`), and the
/// tokens of its file.
#[derive(Debug, Clone)]
pub struct Module {
    pub path: ModPath,
    pub file: PathBuf,
    /// The file's text, for a module read from a file; empty for an inline module (its text is
    /// its file's, read once under the file's module).
    pub source: String,
    /// Declared `#[cfg(test)]`: its imports are not the crate's layers (a test may reach
    /// anywhere), but a module may import it as any other.
    pub test: bool,
}

/// One import: module `from` names module `to` at `file:line` as `text`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub from: ModPath,
    pub to: ModPath,
    pub file: PathBuf,
    pub line: u32,
    pub text: String,
}

/// Modules under one parent that reach each other both ways.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circle {
    /// The parent whose children these are.
    pub parent: ModPath,
    pub members: Vec<String>,
    /// The imports among the members.
    pub edges: Vec<Edge>,
}

impl std::fmt::Display for Circle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parent = if self.parent.is_empty() {
            "the crate root".to_string()
        } else {
            self.parent.join("::")
        };
        write!(
            f,
            "under {parent}: {} reach each other:",
            self.members.join(", ")
        )?;
        // Per pair of members, the first import and how many more.
        let mut pairs: BTreeMap<(&String, &String), Vec<&Edge>> = BTreeMap::new();
        let at = self.parent.len();
        for e in &self.edges {
            pairs.entry((&e.from[at], &e.to[at])).or_default().push(e);
        }
        for ((a, b), es) in pairs {
            let e = es[0];
            let more = match es.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            write!(
                f,
                "\n    {a} -> {b}: {}:{} `{}`{more}",
                e.file.display(),
                e.line,
                e.text
            )?;
        }
        Ok(())
    }
}

/// The modules of the crate whose root file is `root` (`src/lib.rs` or `src/main.rs`).
pub fn modules(root: &Path) -> std::io::Result<Vec<Module>> {
    let mut out = Vec::new();
    let source = std::fs::read_to_string(root)?;
    add(Vec::new(), root, source, true, false, &mut out, &|p| {
        std::fs::read_to_string(p)
    })?;
    Ok(out)
}

/// The modules of a crate given as files in memory: `files[0]` is the root; a `mod` declaration
/// finds its file among them by path, as on disk.
pub fn modules_from(files: &[(&str, &str)]) -> std::io::Result<Vec<Module>> {
    let read = |p: &Path| {
        files
            .iter()
            .find(|(name, _)| Path::new(name) == p)
            .map(|(_, text)| text.to_string())
            .ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotFound, p.display().to_string())
            })
    };
    let mut out = Vec::new();
    let (root, text) = files[0];
    add(
        Vec::new(),
        Path::new(root),
        text.to_string(),
        true,
        false,
        &mut out,
        &read,
    )?;
    Ok(out)
}

type Read<'a> = &'a dyn Fn(&Path) -> std::io::Result<String>;

/// Adds the module at `path` read from `file`, then the modules its `mod x;` declarations name.
/// `owns_dir`: the file is a `mod.rs` or crate root, whose children sit beside it.
#[allow(clippy::too_many_arguments)]
fn add(
    path: ModPath,
    file: &Path,
    source: String,
    owns_dir: bool,
    test: bool,
    out: &mut Vec<Module>,
    read: Read,
) -> std::io::Result<()> {
    let toks = tokens(&source);
    let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    let child_dir = if owns_dir {
        dir.clone()
    } else {
        dir.join(file.file_stem().unwrap_or_default())
    };
    out.push(Module {
        path: path.clone(),
        file: file.to_path_buf(),
        source,
        test,
    });
    // Inline modules (`mod tests { … }`) by brace depth; `mod x;` only at the file's level.
    let mut depth = 0usize;
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut attr: Option<String> = None;
    for i in 0..toks.len() {
        match &toks[i].0 {
            Tok::Open => depth += 1,
            Tok::Close => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Tok::PathAttr(p) => attr = Some(p.clone()),
            Tok::Ident(m) if m == "mod" => {
                let Some((Tok::Ident(name), _)) = toks.get(i + 1) else {
                    continue;
                };
                let mut child = path.clone();
                child.extend(inline.iter().map(|(n, _)| n.clone()));
                child.push(name.clone());
                let test = test || cfg_test(&toks[..i]);
                match toks.get(i + 2).map(|t| &t.0) {
                    Some(Tok::Open) => {
                        inline.push((name.clone(), depth));
                        out.push(Module {
                            path: child,
                            file: file.to_path_buf(),
                            source: String::new(),
                            test,
                        });
                    }
                    Some(Tok::Semi) if inline.is_empty() => {
                        let candidates = match attr.take() {
                            Some(p) => vec![(dir.join(p), false)],
                            None => vec![
                                (child_dir.join(format!("{name}.rs")), false),
                                (child_dir.join(name).join("mod.rs"), true),
                            ],
                        };
                        let found = candidates
                            .into_iter()
                            .find_map(|(p, owns)| read(&p).ok().map(|t| (p, t, owns)));
                        match found {
                            Some((p, text, owns)) => add(child, &p, text, owns, test, out, read)?,
                            None => {
                                return Err(std::io::Error::new(
                                    std::io::ErrorKind::NotFound,
                                    format!("{}: no file for `mod {name};`", file.display()),
                                ));
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether the tokens before a `mod` end in `#[cfg(test)]`.
fn cfg_test(before: &[(Tok, u32)]) -> bool {
    let want = [
        Tok::Other('#'),
        Tok::Other('['),
        Tok::Ident("cfg".into()),
        Tok::Other('('),
        Tok::Ident("test".into()),
        Tok::Other(')'),
        Tok::Other(']'),
    ];
    before.len() >= want.len()
        && before[before.len() - want.len()..]
            .iter()
            .map(|t| &t.0)
            .eq(want.iter())
}

/// A path as written: its segments, where it starts, and whether it is a `use` (and `pub use`).
struct Written {
    segments: Vec<String>,
    line: u32,
    /// `Some(true)` for `pub use`, `Some(false)` for `use`, None for a path in code.
    using: Option<bool>,
    /// The inline module it is written in, relative to the file's module.
    inline: Vec<String>,
}

/// Every path in a file of two segments or more (`use` groups expanded).
fn written(toks: &[(Tok, u32)]) -> Vec<Written> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut using: Option<bool> = None;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Open => depth += 1,
            Tok::Close => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Tok::Semi => using = None,
            Tok::Ident(m)
                if m == "mod" && matches!(toks.get(i + 2).map(|t| &t.0), Some(Tok::Open)) =>
            {
                if let Some((Tok::Ident(name), _)) = toks.get(i + 1) {
                    inline.push((name.clone(), depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Tok::Ident(u) if u == "use" => {
                // `pub use`, `pub(crate) use`, `pub(super) use`.
                let public = (1..=4)
                    .any(|k| i >= k && matches!(&toks[i - k].0, Tok::Ident(p) if p == "pub"));
                using = Some(public);
            }
            Tok::Ident(first) if i == 0 || toks[i - 1].0 != Tok::Path => {
                let line = toks[i].1;
                let mut paths = Vec::new();
                let end = tree(toks, i, vec![first.clone()], &mut paths);
                let here: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
                for segments in paths.into_iter().filter(|p| p.len() >= 2) {
                    out.push(Written {
                        segments,
                        line,
                        using,
                        inline: here.clone(),
                    });
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Reads the path (or `use` tree) whose last segment so far, `prefix`'s, is token `i`; pushes
/// each complete path; returns the index after it.
fn tree(
    toks: &[(Tok, u32)],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    i += 1;
    while toks.get(i).map(|t| &t.0) == Some(&Tok::Path) {
        match toks.get(i + 1).map(|t| &t.0) {
            Some(Tok::Ident(s)) => {
                prefix.push(s.clone());
                i += 2;
            }
            Some(Tok::Open) => {
                i += 2;
                // `{a, b::c, self, d::{e, f}}`
                loop {
                    match toks.get(i).map(|t| &t.0) {
                        Some(Tok::Ident(s)) if s == "self" => {
                            out.push(prefix.clone());
                            i += 1;
                        }
                        Some(Tok::Ident(s)) => {
                            let mut p = prefix.clone();
                            p.push(s.clone());
                            i = tree(toks, i, p, out);
                        }
                        Some(Tok::Comma) => i += 1,
                        Some(Tok::Close) => {
                            i += 1;
                            break;
                        }
                        None => break,
                        // `*`, `as` aliases' punctuation: skip
                        Some(_) => i += 1,
                    }
                }
                return i;
            }
            _ => break,
        }
    }
    out.push(prefix);
    i
}

/// Resolves `segments`, written in module `at` (whose declared children are known), to the
/// module they name: the longest known module they begin with, through re-exports.
fn resolve(
    at: &ModPath,
    segments: &[String],
    known: &BTreeSet<ModPath>,
    reexports: &BTreeMap<(ModPath, String), ModPath>,
) -> Option<ModPath> {
    let mut base: ModPath = match segments[0].as_str() {
        "crate" => Vec::new(),
        "self" => at.clone(),
        "super" => {
            let mut p = at.clone();
            p.pop()?;
            p
        }
        child => {
            let mut p = at.clone();
            p.push(child.to_string());
            if !known.contains(&p) {
                return None;
            }
            p
        }
    };
    let mut rest = &segments[1..];
    if segments[0] == "super" {
        while rest.first().is_some_and(|s| s == "super") {
            base.pop()?;
            rest = &rest[1..];
        }
    }
    for s in rest {
        let mut next = base.clone();
        next.push(s.clone());
        if known.contains(&next) {
            base = next;
        } else if let Some(m) = reexports.get(&(base.clone(), s.clone())) {
            return Some(m.clone());
        } else {
            break;
        }
    }
    Some(base)
}

/// Every import between two different modules of `modules`.
pub fn edges(modules: &[Module]) -> Vec<Edge> {
    let known: BTreeSet<ModPath> = modules.iter().map(|m| m.path.clone()).collect();
    let tests: BTreeSet<&ModPath> = modules.iter().filter(|m| m.test).map(|m| &m.path).collect();
    let files: Vec<(&Module, Vec<Written>)> = modules
        .iter()
        .filter(|m| !m.source.is_empty())
        .map(|m| (m, written(&tokens(&m.source))))
        .collect();
    // Names re-exported by `pub use`, resolved in two rounds (a re-export of a re-export).
    let mut reexports: BTreeMap<(ModPath, String), ModPath> = BTreeMap::new();
    for _ in 0..2 {
        for (m, paths) in &files {
            for w in paths
                .iter()
                .filter(|w| w.using == Some(true) && w.inline.is_empty())
            {
                if let Some(to) = resolve(&m.path, &w.segments, &known, &reexports)
                    && to != m.path
                {
                    let name = w.segments.last().expect("two segments").clone();
                    reexports.insert((m.path.clone(), name), to);
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    for (m, paths) in &files {
        for w in paths {
            let mut at = m.path.clone();
            at.extend(w.inline.iter().cloned());
            if (1..=at.len()).any(|n| tests.contains(&at[..n].to_vec())) {
                continue;
            }
            if let Some(to) = resolve(&at, &w.segments, &known, &reexports)
                && to != at
            {
                out.insert(Edge {
                    from: at,
                    to,
                    file: m.file.clone(),
                    line: w.line,
                    text: w.segments.join("::"),
                });
            }
        }
    }
    out.into_iter().collect()
}

/// The import circles of `modules`: at every level of the tree, children of one module that
/// reach each other both ways. A module's own body is its face, not a layer: it may use its
/// children (and re-export them) while they use the types it defines.
pub fn circles(modules: &[Module]) -> Vec<Circle> {
    let edges = edges(modules);
    // Per parent: the edges between its children, each with the imports behind it.
    let mut levels: BTreeMap<ModPath, BTreeMap<(String, String), Vec<Edge>>> = BTreeMap::new();
    for e in &edges {
        let common = e.from.iter().zip(&e.to).take_while(|(a, b)| a == b).count();
        let parent: ModPath = e.from[..common].to_vec();
        if let (Some(a), Some(b)) = (e.from.get(common), e.to.get(common)) {
            let (a, b) = (a.clone(), b.clone());
            levels
                .entry(parent)
                .or_default()
                .entry((a, b))
                .or_default()
                .push(e.clone());
        }
    }
    let mut out = Vec::new();
    for (parent, graph) in levels {
        let nodes: BTreeSet<&String> = graph.keys().flat_map(|(a, b)| [a, b]).collect();
        let reach = |from: &String| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![from.clone()];
            while let Some(n) = todo.pop() {
                for (a, b) in graph.keys() {
                    if *a == n && seen.insert(b.clone()) {
                        todo.push(b.clone());
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&String, BTreeSet<String>> =
            nodes.iter().map(|n| (*n, reach(n))).collect();
        let mut done: BTreeSet<String> = BTreeSet::new();
        for n in &nodes {
            if done.contains(*n) || !reaches[n].contains(*n) {
                continue;
            }
            let members: Vec<String> = nodes
                .iter()
                .filter(|m| reaches[n].contains(**m) && reaches[*m].contains(*n))
                .map(|m| m.to_string())
                .collect();
            done.extend(members.iter().cloned());
            let edges = graph
                .iter()
                .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                .flat_map(|(_, es)| es.iter().cloned())
                .collect();
            out.push(Circle {
                parent: parent.clone(),
                members,
                edges,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn circles_of(files: &[(&str, &str)]) -> Vec<Circle> {
        circles(&modules_from(files).unwrap())
    }

    #[test]
    fn a_tree_without_circles_passes() {
        let files = [
            ("src/lib.rs", "mod a; mod b; pub use b::Thing;"),
            (
                "src/a.rs",
                "use crate::b::Thing; fn f() { crate::Thing::new(); }",
            ),
            (
                "src/b.rs",
                "pub struct Thing; #[cfg(test)] mod tests { use super::*; use crate::a; }",
            ),
        ];
        assert_eq!(circles_of(&files), Vec::new());
    }

    #[test]
    fn two_siblings_that_import_each_other_are_a_circle() {
        let files = [
            ("src/lib.rs", "mod a; mod b;"),
            ("src/a.rs", "use crate::b::B; pub struct A;"),
            (
                "src/b.rs",
                "pub struct B; fn f() -> super::a::A { todo!() }",
            ),
        ];
        let found = circles_of(&files);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].members, ["a", "b"]);
        assert_eq!(found[0].edges.len(), 2);
        assert!(
            found[0]
                .to_string()
                .contains("b -> a: src/b.rs:1 `super::a::A`"),
            "{}",
            found[0]
        );
    }

    #[test]
    fn a_circle_deep_in_the_tree_through_a_group_and_a_reexport_is_found() {
        // x::p reaches x::q through a `use` group and the crate root's re-export; x::q reaches
        // x::p through `super::super`, from inside a child of its own.
        let files = [
            ("src/lib.rs", "pub mod x; pub use x::q::Q;"),
            ("src/x/mod.rs", "pub mod p; pub mod q;"),
            ("src/x/p.rs", "use crate::{Q, x::q};"),
            ("src/x/q/mod.rs", "pub struct Q; mod inner;"),
            ("src/x/q/inner.rs", "use super::super::p;"),
        ];
        let found = circles_of(&files);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].parent, ["x"]);
        assert_eq!(found[0].members, ["p", "q"]);
    }

    #[test]
    fn a_body_and_its_children_may_use_each_other() {
        let files = [
            ("src/lib.rs", "mod a; pub struct Root; fn f() { a::g(); }"),
            ("src/a.rs", "pub fn g() -> crate::Root { todo!() }"),
        ];
        assert_eq!(circles_of(&files), Vec::new());
    }

    #[test]
    fn a_circle_through_a_third_sibling_is_found() {
        let files = [
            ("src/lib.rs", "mod a; mod b; mod c; mod d;"),
            ("src/a.rs", "use crate::b;"),
            ("src/b.rs", "use crate::c; use crate::d;"),
            ("src/c.rs", "fn f() { crate::a::g(); }"),
            ("src/d.rs", ""),
        ];
        let found = circles_of(&files);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].members, ["a", "b", "c"]);
        assert_eq!(found[0].edges.len(), 3);
    }

    #[test]
    fn comments_and_strings_import_nothing() {
        let files = [
            ("src/lib.rs", "mod a; mod b;"),
            ("src/a.rs", "use crate::b;"),
            (
                "src/b.rs",
                "/// See [`crate::a`].\nconst S: &str = \"crate::a::X\"; // crate::a",
            ),
        ];
        assert_eq!(circles_of(&files), Vec::new());
    }

    #[test]
    fn a_missing_module_file_is_an_error() {
        let err = modules_from(&[("src/lib.rs", "mod gone;")]).unwrap_err();
        assert!(err.to_string().contains("no file for `mod gone;`"), "{err}");
    }
}
