//! Which source lines each SASS instruction of ncu's page came from, with the chain of calls
//! it was inlined through.
//!
//! ncu's `cuda,sass` page lists an instruction inlined through several functions under several
//! lines of its chain, unordered and not always all of them, so it cannot say which line is
//! innermost nor which inlined it. The chain comes instead from a cubin built from the same
//! PTX (`ptxas -arch=sm_90 -lineinfo`, then `nvdisasm -gi`, through [`sass::Sass`]),
//! matched to ncu's SASS by address, and only when the two opcode sequences agree: the
//! driver's JIT may compile differently from the offline ptxas.
//!
//! nvdisasm names the right lines but sometimes the wrong file for a call site ("reduce.rs,
//! line 71 inlined at llvm.rs, line 77" where the call is at reduce.rs:77); the listing
//! [`Sass::build`] returns has each frame's file taken from the PTX's own `.loc … inlined_at`
//! records instead.

use anyhow::{Context, Result};
use sass::Sass;
use sass::disasm::{self, Line as SassLine};
use sass::source::{Frame, Tree};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One instruction of the offline cubin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mapped {
    pub opcode: String,
    /// The inline chain, innermost first; empty where the cubin has no line for it.
    pub chain: Vec<Frame>,
}

/// Per kernel, its instructions in address order: what `<stem>.source-lines.json` holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LineMap {
    /// The commands and the PTX it was made from.
    pub made_by: String,
    /// Whether the PTX carried line tables at all.
    pub has_lines: bool,
    pub kernels: BTreeMap<String, Vec<Mapped>>,
}

impl LineMap {
    /// Reads `path` (gunzipped when its name ends in `.gz`).
    pub fn read(path: &Path) -> Result<LineMap> {
        let text = crate::gzip::read_text(path)?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// Pretty JSON with one instruction per line.
    pub fn json(&self) -> String {
        let mut out = format!(
            "{{\n  \"made_by\": {},\n  \"has_lines\": {},\n  \"kernels\": {{",
            one_line(&self.made_by),
            self.has_lines
        );
        for (k, (name, insts)) in self.kernels.iter().enumerate() {
            out += if k == 0 { "\n" } else { ",\n" };
            out += &format!("    {}: [", one_line(name));
            for (i, m) in insts.iter().enumerate() {
                out += if i == 0 { "\n" } else { ",\n" };
                out += &format!("      {}", one_line(m));
            }
            out += "\n    ]";
        }
        out + "\n  }\n}\n"
    }
}

/// A value as one line of JSON.
fn one_line<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("serializes")
}

/// `made_by` of a line map assembled from the PTX shown as `ptx`, whose `.target` is `target`.
pub fn made_by(ptx: &str, target: &[String]) -> String {
    format!(
        "ptxas -arch={} -lineinfo, nvdisasm -c -gi: {ptx}",
        disasm::arch(target)
    )
}

/// The line map of `functions` from their SASS listing (see the module documentation), which
/// `made_by` names; `has_lines`: whether its PTX carried line tables at all.
pub fn from_listing(sass: &Sass, has_lines: bool, made_by: String, functions: &[&str]) -> LineMap {
    let kernels = sass
        .functions
        .iter()
        .filter(|f| functions.contains(&f.name.as_str()))
        .map(|f| {
            let mut chain: Vec<Frame> = Vec::new();
            let mut insts = Vec::new();
            for l in &f.lines {
                match l {
                    // nvdisasm prints a line only where it changes.
                    SassLine::Source(c) => chain = c.clone(),
                    SassLine::Inst { inst, .. } => insts.push(Mapped {
                        opcode: inst.opcode.clone(),
                        chain: chain.clone(),
                    }),
                    _ => {}
                }
            }
            (f.name.clone(), insts)
        })
        .collect();
    LineMap {
        made_by,
        has_lines,
        kernels,
    }
}

/// Reads `ptx`, assembles it into `cubin` (removed after) and keeps `functions`: [`from_listing`].
pub fn build(tools: &sass::Tools, ptx: &Path, cubin: &Path, functions: &[&str]) -> Result<LineMap> {
    let text =
        std::fs::read_to_string(ptx).with_context(|| format!("reading {}", ptx.display()))?;
    let module = sass::ptx::Module::parse(&text);
    let listing = Sass::build(tools, ptx, &module, cubin)?;
    Ok(from_listing(
        &listing,
        module.has_line_info(),
        made_by(&ptx.display().to_string(), &module.target),
        functions,
    ))
}

/// Instructions ncu may show past the offline listing's end: the `BRA` to itself and the
/// `NOP`s that pad a kernel (nvdisasm's listing drops them).
fn padding(opcode: &str) -> bool {
    opcode == "NOP" || opcode == "BRA"
}

/// Each of ncu's instructions with the offline instruction at the same address, when the
/// opcode sequences agree; otherwise why not.
pub fn align<'m>(ncu: &[&str], offline: &'m [Mapped]) -> Result<Vec<Option<&'m Mapped>>, String> {
    if ncu.len() < offline.len() {
        return Err(format!(
            "ncu's SASS has {} instructions, the offline cubin {}",
            ncu.len(),
            offline.len()
        ));
    }
    if let Some((i, (a, b))) = ncu
        .iter()
        .zip(offline)
        .enumerate()
        .find(|(_, (a, b))| **a != b.opcode)
    {
        return Err(format!(
            "instruction {i} (+{:#x}) is {a} in ncu's SASS but {} in the offline cubin",
            i * 16,
            b.opcode
        ));
    }
    if let Some(extra) = ncu[offline.len()..].iter().find(|op| !padding(op)) {
        return Err(format!(
            "ncu's SASS goes on past the offline cubin's {} instructions ({extra})",
            offline.len()
        ));
    }
    Ok((0..ncu.len()).map(|i| offline.get(i)).collect())
}

/// ncu's own line for each instruction, for when no chain is available: of the lines ncu lists
/// it under, a kernel line before library code (as [`Tree::charged`] does with a
/// chain), then the line holding the fewest instructions of the kernel (the most specific),
/// then the first in page order.
pub fn ncu_line(
    tree: &Tree,
    addresses: &[u64],
    at: &BTreeMap<u64, Vec<(String, u32)>>,
) -> Vec<Vec<Frame>> {
    let mut size: BTreeMap<&(String, u32), usize> = BTreeMap::new();
    for lines in at.values() {
        for l in lines {
            *size.entry(l).or_default() += 1;
        }
    }
    addresses
        .iter()
        .map(|a| {
            at.get(a)
                .and_then(|lines| {
                    lines
                        .iter()
                        .min_by_key(|l| (tree.is_library(&l.0), size.get(l).copied()))
                })
                .map(|(file, line)| {
                    vec![Frame {
                        file: file.clone(),
                        line: *line,
                    }]
                })
                .unwrap_or_default()
        })
        .collect()
}

/// `/a/b/../c//d` → `/a/c/d`: ncu resolves the paths that the PTX's `.file` records keep.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(file: &str, line: u32) -> Frame {
        Frame {
            file: file.into(),
            line,
        }
    }

    #[test]
    fn aligns_only_when_opcodes_agree() {
        let m = |op: &str| Mapped {
            opcode: op.into(),
            chain: vec![frame("a.rs", 1)],
        };
        let offline = [m("LDC"), m("S2R"), m("EXIT")];
        let got = align(&["LDC", "S2R", "EXIT", "BRA", "NOP", "NOP"], &offline).unwrap();
        assert_eq!(got.len(), 6);
        assert!(got[2].is_some() && got[3].is_none());
        let err = align(&["LDC", "S2UR", "EXIT"], &offline).unwrap_err();
        assert!(err.contains("instruction 1 (+0x10) is S2UR"), "{err}");
        assert!(align(&["LDC", "S2R"], &offline).is_err());
        assert!(align(&["LDC", "S2R", "EXIT", "LDS"], &offline).is_err());
    }

    #[test]
    fn ncu_lines_prefer_the_kernel_line_then_the_most_specific() {
        let tree = Tree {
            root: "/lab".into(),
            libraries: vec!["gpu-kernels/src/device/".into()],
            folders: Vec::new(),
        };
        let lab = |p: &str| tree.root.join(p).display().to_string();
        let (k, dev) = (
            lab("gpu-kernels/src/k.rs"),
            lab("gpu-kernels/src/device/llvm.rs"),
        );
        let at: BTreeMap<u64, Vec<(String, u32)>> = [
            (0, vec![(k.clone(), 10)]),
            (16, vec![(dev.clone(), 49), (k.clone(), 10)]),
            (32, vec![(k.clone(), 10), (k.clone(), 12)]),
            (48, vec![(dev.clone(), 49)]),
        ]
        .into();
        let got = ncu_line(&tree, &[0, 16, 32, 48, 64], &at);
        assert_eq!(got[1], vec![frame(&k, 10)]);
        assert_eq!(got[2], vec![frame(&k, 12)]);
        assert_eq!(got[3], vec![frame(&dev, 49)]);
        assert!(got[4].is_empty());
    }

    #[test]
    fn paths_resolve_like_ncu() {
        assert_eq!(
            normalize("/work/main/.tools/cuda13/bin/..//include/sm_30_intrinsics.hpp"),
            "/work/main/.tools/cuda13/include/sm_30_intrinsics.hpp"
        );
        assert_eq!(normalize("a/./b"), "a/b");
    }
}
