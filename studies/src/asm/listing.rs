//! The default mode: a kernel's PTX or SASS; with `--source` the source lines in between (each
//! charged to the kernel line that inlined it, see `sass::source`); with `--live` the
//! registers live at each SASS instruction, the kernel's peak and its instruction mix. SASS
//! rows carry their control bits (`sass::control`), and a row that waits on a scoreboard
//! names the instructions it waits for.

use super::{Build, View, print_json};
use crate::util;
use anyhow::{Result, bail};
use catalog::{Backend, Format};
use sass::disasm;
use sass::source::{Frame, Sources};
use sass::{control, ptx};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Serialize)]
struct Listing {
    kernel: String,
    backend: Backend,
    /// "ptx" or "sass"
    kind: &'static str,
    lines: Vec<String>,
    /// Why no source lines are shown, when `--source` was asked for and this PTX has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    no_source: Option<&'static str>,
    /// With `--live`: the peak and the mix.
    #[serde(skip_serializing_if = "Option::is_none")]
    live: Option<LiveSummary>,
    /// SASS: the stall cycles its instructions schedule, each counted once.
    #[serde(skip_serializing_if = "Option::is_none")]
    stall_cycles: Option<u32>,
}

#[derive(Serialize)]
struct LiveSummary {
    peak: disasm::Peak,
    /// The instruction at the peak, as listed.
    peak_at: String,
    /// Registers ptxas allocates per thread (`ptxas -v`).
    registers: u32,
    instructions: usize,
    /// Instructions by class (`LDG.128`, `LDS`, `BAR`, `int` …), adding up to `instructions`.
    mix: Vec<(String, usize)>,
}

/// Why a backend's PTX has no line tables.
pub fn no_line_info_reason(backend: Backend) -> &'static str {
    match backend {
        Backend::Nvvm => {
            "libnvvm 11.8 rejects the line tables rustc_codegen_nvvm writes (\"parse Invalid \
             record\"; see docs/backends.md)"
        }
        Backend::Llvm | Backend::Nvcc => {
            "its PTX has no .loc/.file directives (cargo xtask ptx builds it with line tables)"
        }
    }
}

pub fn print(builds: &mut [Build], patterns: &[String], view: View) -> Result<()> {
    let sass_view = view.sass || view.live;
    if view.source && !builds.iter().any(|b| b.module.has_line_info()) {
        let b = &builds[0];
        bail!(
            "no line info in {}: {}",
            b.ptx_path.display(),
            no_line_info_reason(b.backend)
        );
    }
    let mut sources = Sources::new(util::source_tree());
    let mut out = Vec::new();
    for b in builds.iter_mut() {
        let source = view.source && b.module.has_line_info();
        let no_source = (view.source && !source).then(|| no_line_info_reason(b.backend));
        if let Some(why) = no_source {
            eprintln!(
                "note: no line info in {}: {why}; its listings follow without source lines",
                b.ptx_path.display()
            );
        }
        for name in b.kernels(patterns) {
            let backend = b.backend;
            let (lines, live, stall_cycles) = if sass_view {
                let s = b.sass()?;
                let Some(f) = s.function(&name) else {
                    bail!("'{name}' is missing from the {backend} SASS");
                };
                let lines = sass_lines(f, source, view.live, true, &mut sources);
                let peak = match (view.live, f.peak()) {
                    (true, None) => bail!(
                        "no live-register counts for {name} [{backend}]: {}",
                        s.live_missing.as_deref().unwrap_or("nvdisasm printed none")
                    ),
                    (_, peak) => peak.unwrap_or_default(),
                };
                let live = view.live.then(|| {
                    let counts = f.counts();
                    LiveSummary {
                        peak,
                        peak_at: f
                            .lines
                            .iter()
                            .find_map(|l| match l {
                                disasm::Line::Inst { addr, inst } if *addr == peak.addr => {
                                    Some(format!("/*{addr:04x}*/ {inst}"))
                                }
                                _ => None,
                            })
                            .unwrap_or_default(),
                        registers: s.resources.get(&name).map_or(0, |r| r.registers),
                        instructions: counts.total,
                        mix: counts.mix(),
                    }
                });
                (lines, live, Some(control::stall_cycles(f)))
            } else {
                let f = b.module.entry(&name).expect("kernels() lists entries");
                (ptx_lines(f, &b.module, source, &mut sources), None, None)
            };
            out.push(Listing {
                kernel: name,
                backend,
                kind: if sass_view { "sass" } else { "ptx" },
                lines,
                no_source,
                live,
                stall_cycles,
            });
        }
    }
    if view.format == Format::Json {
        return print_json("listings", &out);
    }
    for l in &out {
        let note = if l.no_source.is_some() {
            " (no line info)"
        } else {
            ""
        };
        println!(
            "// ===== {} [{}] {}{note}",
            l.kernel,
            l.backend,
            l.kind.to_uppercase()
        );
        if l.live.is_some() {
            println!(
                "// the number after each address: general-purpose registers live at that \
                 instruction (nvdisasm --life-range-mode count)"
            );
        }
        if l.stall_cycles.is_some() {
            println!("{}", control::LEGEND);
        }
        for line in &l.lines {
            println!("{line}");
        }
        if let Some(n) = l.stall_cycles {
            println!("// stall cycles scheduled: {n} (each instruction once)");
        }
        if let Some(s) = &l.live {
            println!("{}", live_summary(s));
        }
        println!();
    }
    Ok(())
}

/// `// peak: 15 registers live at /*0400*/ IMAD.MOV.U32 R14, RZ, RZ, R0 (ptxas allocates 24) …`
/// and the instruction mix.
fn live_summary(s: &LiveSummary) -> String {
    let p = &s.peak;
    let mix: Vec<String> = s.mix.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!(
        "// peak: {} registers live at {} (ptxas allocates {}); predicates {}, uniform {}, \
         uniform predicates {}\n// mix of {} instructions: {}",
        p.gpr,
        s.peak_at,
        s.registers,
        p.pred,
        p.ugpr,
        p.upred,
        s.instructions,
        mix.join(", ")
    )
}

/// A PTX source position: `.file` number, line, column.
type Position = (u32, u32, u32);

/// One line of a function's PTX as listed (the `.loc` lines themselves are not).
pub struct PtxRow<'a> {
    pub text: &'a str,
    /// An instruction (not a label, directive, brace or comment).
    pub inst: bool,
    /// A `$L__tmp`/`$L__func` label, which the line tables use and a reader does not.
    pub debug_label: bool,
    /// For an instruction, the inline chain of the `.loc` in effect (rebuilt from each
    /// `.loc`'s `inlined_at`, innermost first); `None` before any `.loc` or after a line-0 one.
    pub chain: Option<Vec<Frame>>,
    /// A `.loc` came since the previous instruction.
    pub fresh: bool,
}

/// The function's PTX lines with the source position of each instruction.
pub fn ptx_rows<'a>(f: &'a ptx::Function, m: &ptx::Module) -> Vec<PtxRow<'a>> {
    let mut out = Vec::new();
    // Each position's own call site, as its latest `.loc` gave it.
    let mut sites: HashMap<Position, Option<Position>> = HashMap::new();
    let mut current: Option<Vec<Frame>> = None;
    let mut fresh = false;
    for raw in &f.text {
        let t = raw.trim_start();
        if let Some(rest) = t.strip_prefix(".loc") {
            if let Some(loc) = ptx::Loc::parse(rest) {
                sites.insert((loc.file, loc.line, loc.col), loc.inlined_at);
                current = (loc.line != 0).then(|| chain(&loc, &sites, m));
                fresh = current.is_some();
            }
            continue;
        }
        let inst = !(t.is_empty()
            || t.starts_with('.')
            || t.starts_with("//")
            || t.starts_with('{')
            || t.starts_with('}')
            || t.trim_end().ends_with(':'));
        out.push(PtxRow {
            text: raw,
            inst,
            debug_label: t.starts_with("$L__tmp") || t.starts_with("$L__func"),
            chain: if inst { current.clone() } else { None },
            fresh: inst && fresh,
        });
        if inst {
            fresh = false;
        }
    }
    out
}

/// The function's PTX as written; with `source`, before each instruction whose `.loc` moved,
/// the source line it is charged to and the lines inlined into it (the chain is rebuilt from
/// each `.loc`'s `inlined_at`), and the `.loc` lines themselves disappear.
pub fn ptx_lines(
    f: &ptx::Function,
    m: &ptx::Module,
    source: bool,
    sources: &mut Sources,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut last: Option<Vec<Frame>> = None;
    for row in ptx_rows(f, m) {
        if source && row.debug_label {
            continue;
        }
        if source
            && row.fresh
            && let Some(c) = &row.chain
        {
            let key = shown(c);
            if last.as_deref() != Some(key) {
                out.extend(sources.annotate_chain(c));
                last = Some(key.to_vec());
            }
        }
        out.push(row.text.to_string());
    }
    out
}

/// A `.loc`'s inline chain, innermost first, as file paths.
fn chain(
    loc: &ptx::Loc,
    sites: &HashMap<Position, Option<Position>>,
    m: &ptx::Module,
) -> Vec<Frame> {
    let mut positions = vec![(loc.file, loc.line)];
    let mut next = loc.inlined_at;
    // A call site's own `.loc` came earlier; the bound only guards against a malformed file.
    while let Some(site) = next
        && positions.len() < 64
    {
        positions.push((site.0, site.1));
        next = sites.get(&site).copied().flatten();
    }
    positions
        .into_iter()
        .filter_map(|(file, line)| {
            m.files.get(&file).map(|path| Frame {
                file: path.clone(),
                line,
            })
        })
        .collect()
}

/// The part of a chain a listing shows: the charged frame and the frames inlined into it.
fn shown(chain: &[Frame]) -> &[Frame] {
    let end = (util::source_tree().charged(chain) + 1).min(chain.len());
    &chain[..end]
}

/// nvdisasm-style lines: `/*0160*/  @!P0 LDS R3, [R9] ;`, labels flush left; with `live`, the
/// registers live at the instruction after its address; with `control`, its control bits
/// ([`control::Control::columns`]) and, where it waits on a scoreboard, what for.
pub fn sass_lines(
    f: &disasm::Function,
    source: bool,
    live: bool,
    control: bool,
    sources: &mut Sources,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut last: Option<&[Frame]> = None;
    let schedule = if control { control::schedule(f) } else { None };
    for l in &f.lines {
        match l {
            disasm::Line::Inst { addr, inst } => {
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
                let regs = if live {
                    f.live
                        .get(addr)
                        .map_or_else(|| "    ".to_string(), |l| format!(" {:>3}", l.gpr))
                } else {
                    String::new()
                };
                let bits = match f.control.get(addr) {
                    Some(c) if control => format!(" {}", c.columns()),
                    _ => String::new(),
                };
                let waits = schedule
                    .as_ref()
                    .and_then(|s| s.describe(*addr))
                    .map(|w| format!("  // {w}"))
                    .unwrap_or_default();
                out.push(format!(
                    "        /*{addr:04x}*/{regs}{bits} {guard:>6} {}{ops} ;{waits}",
                    inst.opcode
                ));
            }
            disasm::Line::Label(label) => out.push(format!("{label}:")),
            disasm::Line::Source(chain) if source && last != Some(shown(chain)) => {
                last = Some(shown(chain));
                out.extend(sources.annotate_chain(chain));
            }
            disasm::Line::Source(_) => {}
        }
    }
    out
}
