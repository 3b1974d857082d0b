//! Where a kernel's time goes in its source, from ncu's Source page, for any kernel built
//! with line tables (`nvcc -lineinfo`, rustc's NVPTX backend with line tables, Triton).
//!
//! Per source line of the kernel (the `.cu` line, the Rust line, the Python line), hottest
//! first: the warp-state samples by reason, the instructions executed, shared-memory
//! wavefronts and global sectors with the share beyond the minimum (bank conflicts,
//! uncoalesced access), the line's text, and its SASS instructions. A kernel whose PTX has no
//! line tables gets its hottest SASS instructions instead.
//!
//! How each instruction finds its line is [`lines`]; two choices are made here:
//! - Code inlined from library code (Rust's `core` and `core::arch`, the CUDA headers, and the
//!   folders the [`Attribution`]'s source tree names, such as the lab's device layer) is
//!   charged to the kernel line that called it (`sass::source::Tree::charged`), the inner lines
//!   listed beneath it.
//! - Barrier samples are moved to the barrier: ncu records a warp waiting at `BAR.SYNC` on the
//!   next instruction it will issue (on the H200 captures every barrier sample sits after a
//!   barrier, none on one), which would charge `__syncthreads()`'s wait to the line after it.
//!
//! A capture's files, beside its raw page `<stem>.raw.csv`: `<stem>.source-sass.csv` and
//! `<stem>.source-cuda-sass.csv` (the two pages), and `<stem>.source-lines.json` (the line
//! map, [`lines::LineMap`], written when the capture is made so that reading it back later
//! does not depend on the PTX of the day). Each may also be kept gzipped (`<name>.gz`, as the
//! raw page may): [`read_file`].
//!
//! [`locate`] points a diagnosis at the lines; [`page`] reads ncu's pages; the text is
//! printed by [`kernel_text`] and [`hot_instructions`].

pub mod lines;
pub mod locate;
pub mod page;
mod text;

pub use text::{hot_instructions, kernel_text};

use anyhow::{Context, Result, bail};
use lines::LineMap;
use sass::disasm;
use sass::source::{Frame, Sources, Tree};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The `sass` page: every instruction with its counters.
pub const SASS_PAGE: &str = "source-sass.csv";
/// The `cuda,sass` page: the lines ncu charges instructions to, with their captured text.
pub const CUDA_PAGE: &str = "source-cuda-sass.csv";
/// The line map made from the PTX when the capture was made.
pub const LINE_MAP: &str = "source-lines.json";

/// `<stem>.<suffix>`.
pub fn file(stem: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}.{suffix}", stem.display()))
}

/// `<stem>.<suffix>` if it is there, else `<stem>.<suffix>.gz`: the file a capture holds, or
/// None when it holds neither.
pub fn found(stem: &Path, suffix: &str) -> Option<PathBuf> {
    let plain = file(stem, suffix);
    if plain.is_file() {
        return Some(plain);
    }
    let packed = file(stem, &format!("{suffix}.gz"));
    packed.is_file().then_some(packed)
}

/// The text of `<stem>.<suffix>`, or of `<stem>.<suffix>.gz` unpacked (a capture kept
/// gzipped); an error when there is neither.
pub fn read_file(stem: &Path, suffix: &str) -> Result<String> {
    match found(stem, suffix) {
        Some(p) => crate::gzip::read_text(&p),
        None => bail!("no {} (nor .gz)", file(stem, suffix).display()),
    }
}

/// One kernel's instructions as ncu sampled them, in address order: offset from the kernel's
/// first instruction, opcode, warp-state samples by reason (barrier samples moved onto the
/// barrier, see the module documentation). Reads the `sass` page alone (`<stem>.source-sass.csv`
/// or `.csv.gz`), so needs no line map: what a page that heats each SASS instruction reads.
pub fn instruction_samples(stem: &Path, function: &str) -> Result<Vec<page::Inst>> {
    let text = read_file(stem, SASS_PAGE).with_context(|| {
        format!(
            "no source page {}: profile with --source to collect it",
            file(stem, SASS_PAGE).display()
        )
    })?;
    let kernels = page::parse_sass(&text)
        .with_context(|| format!("parsing {}", file(stem, SASS_PAGE).display()))?;
    let Some(k) = kernels.into_iter().find(|k| k.function == function) else {
        bail!(
            "{} has no kernel {function}",
            file(stem, SASS_PAGE).display()
        );
    };
    let mut insts = k.insts;
    move_barrier_samples(&mut insts);
    Ok(insts)
}

/// A source line as shown.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Place {
    /// The path the line tables recorded (on the machine that built the PTX).
    pub file: String,
    /// Shown as: `gpu-kernels/src/reduce.rs`, `core/src/ptr/mut_ptr.rs`.
    pub path: String,
    pub line: u32,
    /// The line's text, trimmed (the captured text where the local file has changed since).
    pub text: String,
}

impl Place {
    /// `reduce.rs:169`.
    pub fn short(&self) -> String {
        let name = self.path.rsplit('/').next().unwrap_or(&self.path);
        if self.line == 0 {
            name.to_string()
        } else {
            format!("{name}:{}", self.line)
        }
    }
}

/// Counters summed over instructions.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Warp-state samples, every reason (`selected`, the issuing one, included).
    pub samples: u64,
    /// Warp-level instructions executed.
    pub executed: u64,
    /// Samples per reason (ncu's metric names), zeros left out.
    pub stalls: BTreeMap<String, u64>,
    pub shared_wavefronts: Option<u64>,
    /// Wavefronts beyond the access's minimum: bank conflicts.
    pub shared_excess: Option<u64>,
    pub global_sectors: Option<u64>,
    /// Sectors beyond what the bytes needed: uncoalesced access.
    pub global_excess: Option<u64>,
}

impl Totals {
    pub fn add(&mut self, i: &Totals) {
        self.samples += i.samples;
        self.executed += i.executed;
        for (r, n) in &i.stalls {
            *self.stalls.entry(r.clone()).or_default() += n;
        }
        let sum = |a: &mut Option<u64>, b: Option<u64>| {
            if let Some(b) = b {
                *a = Some(a.unwrap_or(0) + b);
            }
        };
        sum(&mut self.shared_wavefronts, i.shared_wavefronts);
        sum(&mut self.shared_excess, i.shared_excess);
        sum(&mut self.global_sectors, i.global_sectors);
        sum(&mut self.global_excess, i.global_excess);
    }

    pub fn stall(&self, reason: &str) -> u64 {
        self.stalls.get(reason).copied().unwrap_or(0)
    }

    /// Stall reasons, most samples first (`selected`, which is no stall, left out).
    pub fn top_stalls(&self) -> Vec<(&str, u64)> {
        let mut v: Vec<(&str, u64)> = self
            .stalls
            .iter()
            .filter(|(r, n)| *r != "selected" && **n > 0)
            .map(|(r, n)| (r.as_str(), *n))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }
}

/// A line inlined into a kernel line, `depth` calls down.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Inner {
    pub at: Place,
    pub depth: usize,
    pub samples: u64,
}

/// One kernel line with what its instructions did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LineRow {
    /// The kernel line (`path` is `(no line)` for instructions the line tables leave out).
    pub at: Place,
    #[serde(flatten)]
    pub totals: Totals,
    /// The lines inlined into it, outermost first.
    pub inner: Vec<Inner>,
    /// Its instructions: indices into [`KernelSource::insts`], in address order.
    pub insts: Vec<usize>,
}

/// Where a kernel's lines came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Origin {
    /// Inline chains from an offline cubin of the same PTX, matched by address.
    Chains { made_by: String },
    /// The line ncu lists each instruction under ([`lines::ncu_line`]): no chain was
    /// available, for this reason.
    Ncu { why: String },
    /// No source lines: per-instruction hot spots only.
    None { why: String },
}

/// One kernel of a capture, read for `--source`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelSource {
    /// `reduce_v3_f32`.
    pub function: String,
    pub backend: String,
    pub origin: Origin,
    pub totals: Totals,
    /// Barrier samples moved from the instruction after a barrier to the barrier.
    pub moved_barrier: u64,
    /// ncu's instructions, in address order (barrier samples moved).
    pub insts: Vec<page::Inst>,
    /// Hottest first; empty when there are no lines.
    pub lines: Vec<LineRow>,
    /// Files whose local text differs from what ncu captured: their lines show the captured
    /// text.
    pub changed: Vec<String>,
}

impl KernelSource {
    /// The line holding instruction `i`.
    pub fn line_of(&self, i: usize) -> Option<&LineRow> {
        self.lines.iter().find(|l| l.insts.contains(&i))
    }
}

/// What attributing a capture's samples to source lines needs besides the capture: the source
/// tree the kernels were built from, and how to make a line map when the capture holds none.
pub struct Attribution<'a> {
    pub tree: Tree,
    /// The line map of `functions`, kernels of a capture made by `backend` that holds none at
    /// `saved`: made now from the PTX they were built from ([`lines::build`]), or why it cannot
    /// be.
    #[allow(clippy::type_complexity)]
    pub make_map: Box<dyn Fn(&str, &[&str], &Path) -> Result<LineMap, String> + 'a>,
}

impl Attribution<'_> {
    /// Lines from ncu's page and the capture's own line map alone: no PTX to make one from.
    pub fn ncu_only(tree: Tree) -> Attribution<'static> {
        Attribution {
            tree,
            make_map: Box::new(|_, _, saved: &Path| {
                Err(format!("no {} and no PTX to make it from", saved.display()))
            }),
        }
    }

    /// Lines made from `ptx` (what every kernel of the capture was built from) when the
    /// capture holds no line map; the cubin is assembled into `scratch`.
    pub fn from_ptx(
        tree: Tree,
        ptx: PathBuf,
        tools: sass::Tools,
        scratch: PathBuf,
    ) -> Attribution<'static> {
        Attribution {
            tree,
            make_map: Box::new(move |_, functions: &[&str], _: &Path| {
                lines::build(&tools, &ptx, &scratch.join("lines.cubin"), functions)
                    .map_err(|e| format!("{e:#}"))
            }),
        }
    }
}

/// Reads `<stem>.source-sass.csv` (required), `<stem>.source-cuda-sass.csv` and the line map:
/// `<stem>.source-lines.json`, else one made now by `how` (written to
/// `<stem>.source-lines.json` when `save`).
pub fn read(
    stem: &Path,
    backend: &str,
    how: &Attribution,
    save: bool,
) -> Result<Vec<KernelSource>> {
    let sass = file(stem, SASS_PAGE);
    let text = read_file(stem, SASS_PAGE).with_context(|| {
        format!(
            "no source page {}: profile with --source to collect it",
            sass.display()
        )
    })?;
    let kernels = page::parse_sass(&text).with_context(|| format!("parsing {}", sass.display()))?;
    if kernels.is_empty() {
        bail!("{} holds no kernel", sass.display());
    }
    let (ncu, no_lines) = match read_file(stem, CUDA_PAGE) {
        Ok(t) => page::parse_cuda_sass(&t)
            .with_context(|| format!("parsing {}", file(stem, CUDA_PAGE).display()))?,
        Err(_) => (Vec::new(), Vec::new()),
    };
    let functions: Vec<&str> = kernels.iter().map(|k| k.function.as_str()).collect();
    let map = line_map(stem, backend, &functions, how, save);
    Ok(kernels
        .iter()
        .map(|k| {
            let lines = ncu.iter().find(|l| l.function == k.function);
            let none = no_lines.contains(&k.function);
            kernel(k, backend, &how.tree, &map, lines, none)
        })
        .collect())
}

/// A kernel's lines, hottest first: [`read`]'s rows for one function (what `compare` diffs).
pub fn hot_lines(
    stem: &Path,
    backend: &str,
    how: &Attribution,
    function: &str,
) -> Result<Vec<LineRow>> {
    read(stem, backend, how, false)?
        .into_iter()
        .find(|k| k.function == function)
        .map(|k| k.lines)
        .with_context(|| {
            format!(
                "{} has no kernel {function}",
                file(stem, SASS_PAGE).display()
            )
        })
}

/// The line map, and whether it was made with the capture (its line numbers are then the
/// captured sources', which the local files may no longer match).
fn line_map(
    stem: &Path,
    backend: &str,
    functions: &[&str],
    how: &Attribution,
    save: bool,
) -> Result<(LineMap, bool), String> {
    let saved = file(stem, LINE_MAP);
    if let Some(kept) = found(stem, LINE_MAP) {
        return LineMap::read(&kept)
            .map(|m| (m, true))
            .map_err(|e| format!("{e:#}"));
    }
    let map = (how.make_map)(backend, functions, &saved)?;
    if save && let Err(e) = files::write_atomic(&saved, map.json().as_bytes()) {
        eprintln!("warning: {e:#}");
    }
    // Made now from this tree: its line numbers are the local files'.
    Ok((map, save))
}

fn kernel(
    k: &page::Kernel,
    backend: &str,
    tree: &Tree,
    map: &Result<(LineMap, bool), String>,
    ncu: Option<&page::Lines>,
    ncu_found_none: bool,
) -> KernelSource {
    let opcodes: Vec<&str> = k.insts.iter().map(|i| i.opcode.as_str()).collect();
    let fallback = |why: String| -> (Vec<Vec<Frame>>, Origin) {
        match ncu.filter(|l| !l.at.is_empty()) {
            Some(l) => {
                let addresses: Vec<u64> = k.insts.iter().map(|i| k.base + i.offset).collect();
                (
                    lines::ncu_line(tree, &addresses, &l.at),
                    Origin::Ncu { why },
                )
            }
            None if ncu_found_none => (
                Vec::new(),
                Origin::None {
                    why: format!("ncu found no line info, and {why}"),
                },
            ),
            None => (Vec::new(), Origin::None { why }),
        }
    };
    let (chains, origin) = match map {
        Ok((m, _)) if !m.has_lines => (
            Vec::new(),
            Origin::None {
                why: format!("the {backend} PTX has no line tables (no .loc)"),
            },
        ),
        Ok((m, _)) => match m.kernels.get(&k.function) {
            None => fallback(format!("the line map has no {}", k.function)),
            Some(offline) => match lines::align(&opcodes, offline) {
                Ok(aligned) => (
                    aligned
                        .iter()
                        .map(|m| m.map_or_else(Vec::new, |m| m.chain.clone()))
                        .collect(),
                    Origin::Chains {
                        made_by: m.made_by.clone(),
                    },
                ),
                Err(why) => fallback(format!("the offline cubin differs from the JIT's: {why}")),
            },
        },
        Err(why) => fallback(why.clone()),
    };
    let mut insts = k.insts.clone();
    let moved_barrier = move_barrier_samples(&mut insts);
    let mut totals = Totals::default();
    for i in &insts {
        totals.add(&i.counts);
    }
    // Captured text is compared with the local file's only where the line numbers are the
    // captured sources' too.
    let captured_lines = matches!(map, Ok((_, true))) || matches!(origin, Origin::Ncu { .. });
    let captured: BTreeMap<(String, u32), &String> = ncu
        .filter(|_| captured_lines)
        .map(|l| {
            l.text
                .iter()
                .map(|((f, n), t)| ((lines::normalize(f), *n), t))
                .collect()
        })
        .unwrap_or_default();
    let mut texts = Texts {
        sources: Sources::new(tree.clone()),
        captured,
        changed: BTreeSet::new(),
    };
    let lines = if chains.is_empty() {
        Vec::new()
    } else {
        charge(&insts, &chains, &mut texts)
    };
    KernelSource {
        function: k.function.clone(),
        backend: backend.to_string(),
        origin,
        totals,
        moved_barrier,
        insts,
        lines,
        changed: texts.changed.into_iter().collect(),
    }
}

/// Moves each instruction's barrier samples to the nearest barrier before it (see the module
/// documentation); returns how many moved.
pub fn move_barrier_samples(insts: &mut [page::Inst]) -> u64 {
    let barrier = |op: &str| disasm::classify(op) == sass::counts::InstClass::Barrier;
    let mut last: Option<usize> = None;
    let mut moved = 0;
    for i in 0..insts.len() {
        if barrier(&insts[i].opcode) {
            last = Some(i);
            continue;
        }
        let Some(b) = last else { continue };
        let Some(n) = insts[i].counts.stalls.remove("barrier") else {
            continue;
        };
        insts[i].counts.samples -= n;
        *insts[b].counts.stalls.entry("barrier".into()).or_default() += n;
        insts[b].counts.samples += n;
        moved += n;
    }
    moved
}

/// Line texts: the local file's, or ncu's captured one where they differ.
struct Texts<'a> {
    sources: Sources,
    captured: BTreeMap<(String, u32), &'a String>,
    changed: BTreeSet<String>,
}

impl Texts<'_> {
    fn place(&mut self, frame: &Frame) -> Place {
        let local = self.sources.tree.local_path(&frame.file);
        let local = local.display().to_string();
        let path = self.sources.tree.short_path(&local);
        let mut text = self.sources.text(&local, frame.line).to_string();
        if let Some(c) = self
            .captured
            .get(&(lines::normalize(&frame.file), frame.line))
        {
            // ncu quotes source text without escaping its quotes: compare without them.
            let bare = |s: &str| s.replace('"', "");
            if bare(c) != bare(&text) {
                text = c.to_string();
                self.changed.insert(path.clone());
            }
        }
        Place {
            file: frame.file.clone(),
            path,
            line: frame.line,
            text,
        }
    }
}

/// Groups instructions by the kernel line they are charged to.
fn charge(insts: &[page::Inst], chains: &[Vec<Frame>], texts: &mut Texts) -> Vec<LineRow> {
    let none = Place {
        file: String::new(),
        path: "(no line)".into(),
        line: 0,
        text: String::new(),
    };
    let mut rows: Vec<LineRow> = Vec::new();
    let mut index: BTreeMap<(String, u32), usize> = BTreeMap::new();
    let mut places: BTreeMap<(String, u32), Place> = BTreeMap::new();
    let mut place = |f: &Frame, texts: &mut Texts| {
        places
            .entry((f.file.clone(), f.line))
            .or_insert_with(|| texts.place(f))
            .clone()
    };
    for (i, inst) in insts.iter().enumerate() {
        let chain = chains.get(i).map_or(&[][..], |c| c.as_slice());
        let at = texts.sources.tree.charged(chain);
        let (key, p) = match chain.get(at) {
            Some(f) => ((f.file.clone(), f.line), place(f, texts)),
            None => ((String::new(), 0), none.clone()),
        };
        let r = *index.entry(key).or_insert_with(|| {
            rows.push(LineRow {
                at: p,
                totals: Totals::default(),
                inner: Vec::new(),
                insts: Vec::new(),
            });
            rows.len() - 1
        });
        let row = &mut rows[r];
        row.totals.add(&inst.counts);
        row.insts.push(i);
        for depth in 1..=at {
            let f = &chain[at - depth];
            let p = place(f, texts);
            match row.inner.iter_mut().find(|x| x.depth == depth && x.at == p) {
                Some(x) => x.samples += inst.counts.samples,
                None => row.inner.push(Inner {
                    at: p,
                    depth,
                    samples: inst.counts.samples,
                }),
            }
        }
    }
    for r in &mut rows {
        r.inner
            .sort_by(|a, b| a.depth.cmp(&b.depth).then(b.samples.cmp(&a.samples)));
    }
    rows.sort_by(|a, b| {
        b.totals
            .samples
            .cmp(&a.totals.samples)
            .then(b.totals.executed.cmp(&a.totals.executed))
            .then(a.at.cmp(&b.at))
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture's files are read plain or gzipped, the plain one first.
    #[test]
    fn a_page_is_read_plain_or_gzipped() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("xtask-source-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stem = dir.join("profile-reduce_v3-llvm");
        assert!(found(&stem, SASS_PAGE).is_none());
        let e = format!("{:#}", read_file(&stem, SASS_PAGE).unwrap_err());
        assert!(
            e.contains("profile-reduce_v3-llvm.source-sass.csv (nor .gz)"),
            "{e}"
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"packed\n").unwrap();
        std::fs::write(file(&stem, "source-sass.csv.gz"), gz.finish().unwrap()).unwrap();
        assert_eq!(
            found(&stem, SASS_PAGE),
            Some(file(&stem, "source-sass.csv.gz"))
        );
        assert_eq!(read_file(&stem, SASS_PAGE).unwrap(), "packed\n");
        std::fs::write(file(&stem, SASS_PAGE), "plain\n").unwrap();
        assert_eq!(read_file(&stem, SASS_PAGE).unwrap(), "plain\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn inst(opcode: &str, samples: u64, barrier: u64) -> page::Inst {
        page::Inst {
            opcode: opcode.into(),
            text: opcode.into(),
            counts: Totals {
                samples,
                stalls: [
                    ("barrier".to_string(), barrier),
                    ("wait".to_string(), samples - barrier),
                ]
                .into_iter()
                .filter(|(_, n)| *n > 0)
                .collect(),
                ..Totals::default()
            },
            ..page::Inst::default()
        }
    }

    /// The barrier's wait is recorded on the instruction after it (here one further on, as
    /// the H200 shows after `ISETP`s scheduled with the barrier); it moves back to the barrier.
    #[test]
    fn barrier_samples_move_to_the_barrier() {
        let mut insts = vec![
            inst("LDS", 5, 3),
            inst("BAR.SYNC.DEFER_BLOCKING", 1, 0),
            inst("ISETP.GT.U32.AND", 2, 0),
            inst("LDS", 100, 90),
        ];
        assert_eq!(move_barrier_samples(&mut insts), 90);
        assert_eq!(
            (insts[1].counts.samples, insts[1].counts.stalls["barrier"]),
            (91, 90)
        );
        assert_eq!(insts[3].counts.samples, 10);
        assert!(!insts[3].counts.stalls.contains_key("barrier"));
        // Before any barrier there is nowhere to move them.
        assert_eq!(insts[0].counts.stalls["barrier"], 3);
    }

    /// Where the local file no longer says what ncu captured, the captured text shows and the
    /// file is named; a difference in quotes alone (ncu does not escape them) is none.
    #[test]
    fn captured_text_where_the_local_file_changed() {
        let dir = std::env::temp_dir().join(format!("xtask-texts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("k.rs");
        std::fs::write(&path, "let a = 1;\n    asm!(\"bar.sync 0;\");\n").unwrap();
        let file = path.display().to_string();
        let (old, quoted) = ("let a = 2;".to_string(), "asm!(bar.sync 0;);".to_string());
        let mut texts = Texts {
            sources: Sources::new(Tree::at(&dir)),
            captured: [((file.clone(), 1), &old), ((file.clone(), 2), &quoted)].into(),
            changed: BTreeSet::new(),
        };
        let frame = |line| Frame {
            file: file.clone(),
            line,
        };
        assert_eq!(texts.place(&frame(2)).text, "asm!(\"bar.sync 0;\");");
        assert!(texts.changed.is_empty());
        assert_eq!(texts.place(&frame(1)).text, "let a = 2;");
        assert_eq!(texts.changed.len(), 1);
    }

    /// A gzipped page reads like the plain one; barrier samples land on the barrier.
    #[test]
    fn instruction_samples_read_a_gzipped_page() {
        use std::io::Write;
        let page = "\"Kernel Name\",\"k\",\n\
\"Address\",\"Source\",\"Warp Stall Sampling (All Samples)\",\"Instructions Executed\",\"stall_barrier\",\"stall_long_sb\"\n\
\"0x7f0000001000\",\"      LDG.E R0, desc[UR6][R6.64]\",\"3\",\"32\",\"0\",\"0\"\n\
\"0x7f0000001010\",\"      BAR.SYNC.DEFER_BLOCKING 0x0\",\"1\",\"32\",\"0\",\"0\"\n\
\"0x7f0000001020\",\"      STS [R9], R0\",\"50\",\"32\",\"20\",\"30\"\n";
        let dir = std::env::temp_dir().join(format!("xtask-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stem = dir.join("src-llvm");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(page.as_bytes()).unwrap();
        std::fs::write(file(&stem, "source-sass.csv.gz"), gz.finish().unwrap()).unwrap();
        let insts = instruction_samples(&stem, "k").unwrap();
        assert_eq!(insts.len(), 3);
        assert_eq!((insts[2].offset, insts[2].opcode.as_str()), (0x20, "STS"));
        assert_eq!((insts[1].counts.samples, insts[2].counts.samples), (21, 30));
        assert!(instruction_samples(&stem, "other").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
