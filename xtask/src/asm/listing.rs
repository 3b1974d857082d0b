//! The default mode: a kernel's PTX or SASS, with `--source` the Rust lines in between.

use super::{Build, View, print_json, ptx, sass, short_path};
use anyhow::{Result, bail};
use catalog::Format;
use serde::Serialize;
use std::collections::HashMap;

#[derive(Serialize)]
struct Listing {
    kernel: String,
    backend: super::Backend,
    /// "ptx" or "sass"
    kind: &'static str,
    lines: Vec<String>,
}

pub fn print(builds: &mut [Build], patterns: &[String], view: View) -> Result<()> {
    let mut sources = Sources::default();
    let mut out = Vec::new();
    for b in builds.iter_mut() {
        if view.source && !b.module.has_line_info() {
            bail!(
                "no line info in {}: its PTX has no .loc/.file directives (the kernels were built \
                 without line tables; see docs/asm-walkthrough.md)",
                b.ptx_path.display()
            );
        }
        for name in b.kernels(patterns) {
            let lines = if view.sass {
                let s = b.sass()?;
                let Some(f) = s.function(&name) else {
                    bail!("'{name}' is missing from the {} SASS", b.backend);
                };
                sass_lines(f, view.source, &mut sources)
            } else {
                let f = b.module.entry(&name).expect("kernels() lists entries");
                ptx_lines(f, &b.module, view.source, &mut sources)
            };
            out.push(Listing {
                kernel: name,
                backend: b.backend,
                kind: if view.sass { "sass" } else { "ptx" },
                lines,
            });
        }
    }
    if view.format == Format::Json {
        return print_json("listings", &out);
    }
    for l in &out {
        println!(
            "// ===== {} [{}] {}",
            l.kernel,
            l.backend,
            l.kind.to_uppercase()
        );
        for line in &l.lines {
            println!("{line}");
        }
        println!();
    }
    Ok(())
}

/// The function's PTX as written; with `source`, each `.loc` that moves to a new line
/// becomes that Rust line, and the others disappear.
pub fn ptx_lines(
    f: &ptx::Function,
    m: &ptx::Module,
    source: bool,
    sources: &mut Sources,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut last = None;
    for raw in &f.text {
        let t = raw.trim_start();
        if source && let Some(rest) = t.strip_prefix(".loc") {
            let mut nums = rest.split([' ', '\t', ',']).filter(|s| !s.is_empty());
            let file = nums.next().and_then(|n| n.parse::<u32>().ok());
            let line = nums.next().and_then(|n| n.parse::<u32>().ok());
            if let (Some(file), Some(line)) = (file, line)
                && line != 0
                && last != Some((file, line))
            {
                last = Some((file, line));
                if let Some(path) = m.files.get(&file) {
                    out.push(sources.annotate(path, line));
                }
            }
            continue;
        }
        if source
            && (t.starts_with(".loc") || t.starts_with("$L__tmp") || t.starts_with("$L__func"))
        {
            continue;
        }
        out.push(raw.clone());
    }
    out
}

/// nvdisasm-style lines: `/*0160*/  @!P0 LDS R3, [R9] ;`, labels flush left.
pub fn sass_lines(f: &sass::Function, source: bool, sources: &mut Sources) -> Vec<String> {
    let mut out = Vec::new();
    let mut last = None;
    for l in &f.lines {
        match l {
            sass::Line::Inst { addr, inst } => {
                let guard = inst
                    .guard
                    .as_ref()
                    .map(|g| format!("@{g}"))
                    .unwrap_or_default();
                let ops = if inst.operands.is_empty() {
                    String::new()
                } else {
                    format!(" {}", inst.operands)
                };
                out.push(format!(
                    "        /*{addr:04x}*/ {guard:>6} {}{ops} ;",
                    inst.opcode
                ));
            }
            sass::Line::Label(label) => out.push(format!("{label}:")),
            sass::Line::Source { file, line } if source && last != Some((file, *line)) => {
                last = Some((file, *line));
                out.push(sources.annotate(file, *line));
            }
            sass::Line::Source { .. } => {}
        }
    }
    out
}

/// Rust source files, read once each.
#[derive(Default)]
pub struct Sources(HashMap<String, Option<Vec<String>>>);

impl Sources {
    /// `//> gpu-kernels/src/reduce.rs:116  if tid % (2 * stride) == 0 {`
    pub fn annotate(&mut self, path: &str, line: u32) -> String {
        let lines = self.0.entry(path.to_string()).or_insert_with(|| {
            std::fs::read_to_string(path)
                .ok()
                .map(|t| t.lines().map(str::to_string).collect())
        });
        let text = lines
            .as_ref()
            .and_then(|l| (line as usize).checked_sub(1).and_then(|i| l.get(i)))
            .map(|t| t.trim())
            .unwrap_or("");
        format!("\t//> {}:{line}  {text}", short_path(path))
    }
}
