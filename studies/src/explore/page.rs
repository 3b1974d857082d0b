//! What one page shows, built from the asm module's reading of a kernel: its source lines,
//! PTX and SASS as rows, every instruction keyed to the source line it is charged to
//! ([`sass::source::Tree::charged`]), SASS rows with their control bits, live registers and
//! scoreboard waits, and, from a capture, the warp-state samples of each instruction.

use crate::asm::{Build, listing};
use crate::util;
use anyhow::{Context, Result};
use catalog::Backend;
use profiler::source::page::Inst as Sampled;
use sass::control;
use sass::counts::Inst;
use sass::disasm;
use sass::source::{Frame, Sources};
use std::collections::BTreeMap;

/// One kernel from one compiler: three columns.
pub struct Pane {
    /// `a`, `b`: prefixes the keys, so that two panes' selections stay apart.
    pub id: String,
    pub kernel: String,
    pub backend: Backend,
    /// Its PTX file's name where two files are read side by side (`asm::Build::file`).
    pub file: Option<String>,
    /// What its PTX was assembled for (`sm_90`, or `sm_90a` where its target says so).
    pub arch: &'static str,
    /// `73 instructions · 221 stall cycles · 12 registers (8 live at most)`.
    pub summary: String,
    /// What the pane lacks and why (no line info, no samples), and where samples came from.
    pub notes: Vec<String>,
    pub files: Vec<SourceFile>,
    pub ptx: Vec<PtxRow>,
    pub sass: Vec<SassRow>,
    /// Some instruction has samples.
    pub heat: bool,
}

impl Pane {
    /// The source column's heading, by its files' language: `Rust source` (the lab's Rust
    /// kernels), `CUDA C++ source` (nvcc's twins, `nvcc -ptx`), `Python source` (Triton's).
    pub fn language(&self) -> &'static str {
        let ends = |exts: &[&str]| {
            !self.files.is_empty()
                && self
                    .files
                    .iter()
                    .all(|f| exts.iter().any(|e| f.path.ends_with(e)))
        };
        if ends(&[".rs"]) {
            "Rust source"
        } else if ends(&[".cu", ".cuh", ".h", ".hpp"]) {
            "CUDA C++ source"
        } else if ends(&[".py"]) {
            "Python source"
        } else if self.backend.name() == "nvcc" {
            "CUDA C++ source"
        } else if self.files.is_empty() {
            "Rust source"
        } else {
            "Source"
        }
    }
}

/// The lines of one source file the kernel's instructions are charged to, with a little
/// context around them.
pub struct SourceFile {
    /// `gpu-kernels/src/reduce.rs`.
    pub path: String,
    pub lines: Vec<SourceLine>,
}

pub struct SourceLine {
    pub number: u32,
    pub text: String,
    /// The key its instructions carry; `None` for a context line no instruction is charged to.
    pub key: Option<String>,
    pub samples: u64,
    /// `samples` over the pane's hottest line, 0–1.
    pub heat: f64,
    /// A row standing for lines left out.
    pub gap: bool,
}

impl SourceLine {
    fn gap() -> SourceLine {
        SourceLine {
            number: 0,
            text: String::new(),
            key: None,
            samples: 0,
            heat: 0.0,
            gap: true,
        }
    }
}

/// The lines within [`CONTEXT`] of a charged line, in order.
fn shown_lines(used: &[u32]) -> Vec<u32> {
    let mut out: Vec<u32> = used
        .iter()
        .flat_map(|&l| l.saturating_sub(CONTEXT).max(1)..=l + CONTEXT)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

pub struct PtxRow {
    pub text: String,
    /// `inst`, `label` or `other` (directives, braces, comments).
    pub kind: &'static str,
    pub key: Option<String>,
}

pub struct SassRow {
    /// A label row has only `text`.
    pub label: bool,
    /// `0160`.
    pub addr: String,
    /// General-purpose registers live at the instruction.
    pub live: String,
    /// [`control::Control::columns`].
    pub control: String,
    pub stall: u8,
    pub text: String,
    pub key: Option<String>,
    /// The source line and the lines inlined into it, one per line (the row's tooltip).
    pub chain: String,
    /// `waits on SB2 set by LDG.E at +0x00d0`.
    pub waits: String,
    pub samples: Option<u64>,
    pub heat: f64,
    /// The sampled stall reasons, most first: `long_scoreboard 6282, wait 23`.
    pub reasons: String,
}

/// What the capture says about one kernel: its instructions as ncu sampled them, or why
/// there are none.
pub enum Samples {
    None,
    Missing(String),
    Read { from: String, insts: Vec<Sampled> },
}

/// Source files of one pane, each numbered once.
#[derive(Default)]
struct Files {
    paths: Vec<String>,
    used: BTreeMap<(usize, u32), ()>,
}

impl Files {
    fn key(&mut self, pane: &str, frame: &Frame) -> String {
        let i = match self.paths.iter().position(|p| *p == frame.file) {
            Some(i) => i,
            None => {
                self.paths.push(frame.file.clone());
                self.paths.len() - 1
            }
        };
        self.used.insert((i, frame.line), ());
        format!("{pane}:{i}:{}", frame.line)
    }
}

/// Lines of context shown around the charged lines of a file.
const CONTEXT: u32 = 2;

/// Builds the pane of `kernel` from `b`.
pub fn pane(id: &str, b: &mut Build, kernel: &str, samples: Samples) -> Result<Pane> {
    let backend = b.backend;
    let ptx_fn = b
        .module
        .entry(kernel)
        .with_context(|| format!("no kernel '{kernel}' in the {backend} PTX"))?;
    let mut files = Files::default();
    let mut notes = Vec::new();
    let mut sources = Sources::new(util::source_tree());
    if !b.module.has_line_info() {
        notes.push(format!(
            "no source lines: {}",
            listing::no_line_info_reason(backend)
        ));
    }
    let ptx: Vec<PtxRow> = listing::ptx_rows(ptx_fn, &b.module)
        .into_iter()
        .filter(|r| !r.debug_label)
        .map(|r| {
            let t = r.text.trim_start();
            PtxRow {
                text: r.text.to_string(),
                kind: if r.inst {
                    "inst"
                } else if t.trim_end().ends_with(':') {
                    "label"
                } else {
                    "other"
                },
                key: r
                    .chain
                    .as_ref()
                    .and_then(|c| c.get(sources.tree.charged(c)))
                    .map(|f| files.key(id, f)),
            }
        })
        .collect();
    let s = b.sass()?;
    let f = s
        .function(kernel)
        .with_context(|| format!("'{kernel}' is missing from the {backend} SASS"))?;
    let schedule = control::schedule(f).unwrap_or_default();
    let resources = s.resources.get(kernel).copied().unwrap_or_default();
    let heat = heat_by_address(f, samples, &mut notes);
    let mut sass_rows = Vec::new();
    let mut chain: &[Frame] = &[];
    let mut insts = 0;
    for l in &f.lines {
        match l {
            disasm::Line::Source(c) => chain = c,
            disasm::Line::Label(name) => sass_rows.push(SassRow {
                label: true,
                text: format!("{name}:"),
                ..SassRow::empty()
            }),
            disasm::Line::Inst { addr, inst } => {
                insts += 1;
                let c = f.control.get(addr);
                let sampled = heat.get(addr);
                sass_rows.push(SassRow {
                    label: false,
                    addr: format!("{addr:04x}"),
                    live: f
                        .live
                        .get(addr)
                        .map_or(String::new(), |l| l.gpr.to_string()),
                    control: c.map_or(String::new(), |c| c.columns()),
                    stall: c.map_or(0, |c| c.stall),
                    text: text(inst),
                    key: chain
                        .get(sources.tree.charged(chain))
                        .map(|fr| files.key(id, fr)),
                    chain: describe_chain(chain, &mut sources),
                    waits: schedule.describe(*addr).unwrap_or_default(),
                    samples: sampled.map(|s| s.counts.samples),
                    heat: 0.0,
                    reasons: sampled.map_or(String::new(), |s| {
                        s.counts
                            .top_stalls()
                            .iter()
                            .map(|(r, n)| format!("{r} {n}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }),
                });
            }
        }
    }
    let hottest = sass_rows
        .iter()
        .filter_map(|r| r.samples)
        .max()
        .unwrap_or(0);
    for r in &mut sass_rows {
        r.heat = share(r.samples.unwrap_or(0), hottest);
    }
    let mut line_samples: BTreeMap<String, u64> = BTreeMap::new();
    for r in &sass_rows {
        if let (Some(k), Some(n)) = (&r.key, r.samples) {
            *line_samples.entry(k.clone()).or_default() += n;
        }
    }
    let hottest_line = line_samples.values().copied().max().unwrap_or(0);
    let mut texts = Texts::default();
    let mut source_files: Vec<(usize, SourceFile)> = files
        .paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let used: Vec<u32> = files
                .used
                .keys()
                .filter(|(fi, l)| *fi == i && *l > 0)
                .map(|(_, l)| *l)
                .collect();
            let mut lines: Vec<SourceLine> = Vec::new();
            let mut last = 0;
            for n in shown_lines(&used) {
                let key = format!("{id}:{i}:{n}");
                let charged = used.contains(&n);
                let Some(text) = texts
                    .line(path, n)
                    .map(str::to_string)
                    .or_else(|| charged.then(String::new))
                else {
                    continue;
                };
                if last != 0 && n > last + 1 {
                    lines.push(SourceLine::gap());
                }
                last = n;
                let samples = line_samples.get(&key).copied().unwrap_or(0);
                lines.push(SourceLine {
                    number: n,
                    text,
                    key: charged.then_some(key),
                    samples,
                    heat: share(samples, hottest_line),
                    gap: false,
                });
            }
            (
                used.len(),
                SourceFile {
                    path: sources.tree.short_path(path),
                    lines,
                },
            )
        })
        .collect();
    // The kernel's own file (most lines charged) first.
    source_files.sort_by_key(|f| std::cmp::Reverse(f.0));
    let source_files: Vec<SourceFile> = source_files.into_iter().map(|(_, f)| f).collect();
    let summary = format!(
        "{insts} instructions · {} stall cycles · {} registers ({} live at most)",
        control::stall_cycles(f),
        resources.registers,
        f.peak().map_or("-".into(), |p| p.gpr.to_string())
    );
    Ok(Pane {
        id: id.to_string(),
        kernel: kernel.to_string(),
        backend,
        file: b.file.clone(),
        arch: sass::disasm::arch(&b.module.target),
        summary,
        notes,
        files: source_files,
        ptx,
        heat: hottest > 0,
        sass: sass_rows,
    })
}

impl SassRow {
    /// The heat cell's text: the samples, blank for none.
    pub fn shown_samples(&self) -> String {
        match self.samples {
            Some(n) if n > 0 => n.to_string(),
            _ => String::new(),
        }
    }

    fn empty() -> SassRow {
        SassRow {
            label: false,
            addr: String::new(),
            live: String::new(),
            control: String::new(),
            stall: 0,
            text: String::new(),
            key: None,
            chain: String::new(),
            waits: String::new(),
            samples: None,
            heat: 0.0,
            reasons: String::new(),
        }
    }
}

/// `14212` → `14,212`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn share(n: u64, of: u64) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

/// `@!P1 LDS R3, [R9] ;`
fn text(inst: &Inst) -> String {
    format!("{inst} ;")
}

/// Source files as written (indentation kept), read once each.
#[derive(Default)]
struct Texts(BTreeMap<String, Option<Vec<String>>>);

impl Texts {
    /// Line `line` (1-based) of `path`; `None` past its end or when it cannot be read.
    fn line(&mut self, path: &str, line: u32) -> Option<&str> {
        let lines = self.0.entry(path.to_string()).or_insert_with(|| {
            std::fs::read_to_string(path)
                .ok()
                .map(|t| t.lines().map(|l| l.trim_end().to_string()).collect())
        });
        let i = usize::try_from(line.checked_sub(1)?).ok()?;
        lines.as_ref()?.get(i).map(String::as_str)
    }
}

/// `reduce.rs:167  s.set(…)` then `↳ device/mod.rs:60  *self.0.add(i)`, one per line.
fn describe_chain(chain: &[Frame], sources: &mut Sources) -> String {
    let charged = sources.tree.charged(chain);
    let Some(at) = chain.get(charged) else {
        return String::new();
    };
    let mut out = vec![format!(
        "{}:{}  {}",
        sources.tree.short_path(&at.file),
        at.line,
        sources.text(&at.file, at.line)
    )];
    for f in chain[..charged].iter().rev() {
        out.push(format!(
            "↳ {}:{}  {}",
            sources.tree.short_path(&f.file),
            f.line,
            sources.text(&f.file, f.line)
        ));
    }
    out.join("\n")
}

/// The capture's samples by SASS address: ncu's instruction at the same offset from the
/// kernel's start, where it is the same opcode (the capture's SASS was the driver's JIT of the
/// PTX then, this one is ptxas's of the PTX now).
fn heat_by_address(
    f: &disasm::Function,
    samples: Samples,
    notes: &mut Vec<String>,
) -> BTreeMap<u32, Sampled> {
    let (from, insts) = match samples {
        Samples::None => return BTreeMap::new(),
        Samples::Missing(why) => {
            notes.push(format!("no warp-state samples: {why}"));
            return BTreeMap::new();
        }
        Samples::Read { from, insts } => (from, insts),
    };
    let by_offset: BTreeMap<u64, Sampled> = insts.into_iter().map(|i| (i.offset, i)).collect();
    let mut out = BTreeMap::new();
    let mut differ = 0;
    let mut total = 0;
    let insts = f.lines.iter().filter_map(|l| match l {
        disasm::Line::Inst { addr, inst } => Some((*addr, inst)),
        _ => None,
    });
    for (addr, inst) in insts {
        match by_offset.get(&u64::from(addr)) {
            Some(s) if s.opcode == inst.opcode => {
                total += s.counts.samples;
                out.insert(addr, s.clone());
            }
            _ => differ += 1,
        }
    }
    notes.push(format!(
        "warp-state samples from the capture {from}: {} on this kernel's instructions{}",
        thousands(total),
        if differ == 0 {
            String::new()
        } else {
            format!("; {differ} instructions differ from the capture's SASS and show none")
        }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_around_charged_lines_merges() {
        assert_eq!(
            shown_lines(&[10, 12, 30]),
            [8, 9, 10, 11, 12, 13, 14, 28, 29, 30, 31, 32]
        );
        assert_eq!(shown_lines(&[1]), [1, 2, 3]);
        assert!(shown_lines(&[]).is_empty());
    }

    #[test]
    fn counts_read_in_thousands() {
        assert_eq!(thousands(14212), "14,212");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
