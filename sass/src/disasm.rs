//! SASS for sm_90: `ptxas -arch=sm_90 -lineinfo -v` assembles a PTX file into a cubin (its
//! `-v` report gives registers, stack, spills, shared memory per kernel), and `nvdisasm -c`
//! turns the cubin back into text, one listing per kernel: with `-gi`, each instruction's
//! source line and the chain of calls it was inlined through, and with `-hex` the two 64-bit
//! words of its encoding (whose control bits [`crate::bits`] decodes); with
//! `--life-range-mode count`, the registers live at each instruction.

use crate::bits::Control;
use crate::counts::{Counts, Inst, InstClass, Item, Loops};
use crate::source::Frame;
use crate::tools::{Tools, capture};
use anyhow::{Result, bail};
use regex::Regex;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;

/// The architecture every PTX is assembled for, as the driver's JIT does on an H200.
pub const ARCH: &str = "sm_90";

/// The architecture a PTX module of `target` (its `.target` fields) is assembled for: [`ARCH`],
/// or `sm_90a` for PTX that names it (Triton's and CUTLASS's Hopper kernels: `wgmma`,
/// `setmaxnreg`), which ptxas assembles for that architecture alone; the same SM, so the same
/// SASS for what both accept.
pub fn arch(target: &[String]) -> &'static str {
    if target.iter().any(|t| t == "sm_90a") {
        "sm_90a"
    } else {
        ARCH
    }
}

/// One kernel's SASS.
#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub lines: Vec<Line>,
    /// Registers live at each instruction, by address (empty until [`life_ranges`] is read).
    pub live: BTreeMap<u32, Live>,
    /// Each instruction's control bits, by address, decoded from its encoding (empty when
    /// the listing was printed without `-hex`).
    pub control: BTreeMap<u32, Control>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Inst {
        addr: u32,
        inst: Inst,
    },
    Label(String),
    /// The source line of the instructions that follow, innermost frame first: `nvdisasm
    /// -gi`'s `//## File "a.rs", line 57 inlined at "b.rs", line 49` lines, one per frame,
    /// ending with the outermost `//## File "c.rs", line 341` (`-g` gives one frame).
    Source(Vec<Frame>),
}

/// Registers live at one instruction (`nvdisasm --life-range-mode count`): general-purpose,
/// predicate, uniform and uniform predicate registers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize)]
pub struct Live {
    pub gpr: u32,
    pub pred: u32,
    pub ugpr: u32,
    pub upred: u32,
}

/// The most registers live at any one instruction of a kernel, and the first instruction
/// where the general-purpose count peaks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize)]
pub struct Peak {
    pub gpr: u32,
    /// Address of the first instruction with `gpr` registers live.
    pub addr: u32,
    pub pred: u32,
    pub ugpr: u32,
    pub upred: u32,
}

/// What `ptxas -v` reports per kernel.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize)]
pub struct Resources {
    pub registers: u32,
    /// Static shared memory in bytes (these kernels size theirs at launch, so usually 0).
    pub smem: u32,
    pub stack: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
}

/// `ptxas -arch=<arch> -lineinfo -v -o <cubin> <ptx>` (`arch`: [`arch`] of the PTX's target);
/// returns the cubin and the `-v` report.
pub fn assemble(
    tools: &Tools,
    ptx: &Path,
    arch: &str,
    cubin: &Path,
) -> Result<(PathBuf, BTreeMap<String, Resources>)> {
    std::fs::create_dir_all(cubin.parent().expect("cubin has a parent"))?;
    let mut cmd = Command::new(&tools.ptxas);
    cmd.arg(format!("-arch={arch}"))
        .args(["-lineinfo", "-v", "-o"])
        .arg(cubin)
        .arg(ptx);
    let out = capture(&mut cmd)?;
    Ok((cubin.to_path_buf(), parse_resources(&out.stderr)))
}

/// `nvdisasm -c -gi -hex <cubin>`, parsed into one listing per kernel (`-gi` adds the source
/// lines and their inline chains where the cubin has line info, and nothing where it has none;
/// `-hex` each instruction's encoding).
pub fn disassemble(tools: &Tools, cubin: &Path) -> Result<Vec<Function>> {
    let mut cmd = Command::new(&tools.nvdisasm);
    cmd.args(["-c", "-gi", "-hex"]).arg(cubin);
    let out = capture(&mut cmd)?;
    let functions = parse_disassembly(&out.stdout);
    if functions.is_empty() {
        bail!("nvdisasm printed no functions for {}", cubin.display());
    }
    Ok(functions)
}

/// `nvdisasm -c --life-range-mode count <cubin>`: per kernel, the registers live at each
/// instruction address. (nvdisasm ignores `-gi` when printing life ranges, hence a second
/// run.)
pub fn life_ranges(tools: &Tools, cubin: &Path) -> Result<BTreeMap<String, BTreeMap<u32, Live>>> {
    let mut cmd = Command::new(&tools.nvdisasm);
    cmd.args(["-c", "--life-range-mode", "count"]).arg(cubin);
    let out = capture(&mut cmd)?;
    let ranges = parse_life_ranges(&out.stdout);
    if ranges.is_empty() {
        bail!("nvdisasm printed no life ranges for {}", cubin.display());
    }
    Ok(ranges)
}

/// Reads `nvdisasm --life-range-mode count`: each instruction line ends with a count per
/// register kind, `// |  GPR  |  PRED  |  UGPR  |  UPRED  |`, a blank count meaning none. The
/// kinds are those the header row above the listing names: nvdisasm leaves out a kind no
/// kernel of the cubin uses (a cubin without predicates has no `PRED` column).
pub fn parse_life_ranges(text: &str) -> BTreeMap<String, BTreeMap<u32, Live>> {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\.text\.(\S+):").unwrap());
    static KINDS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*//\s*\|((?:\s*(?:GPR|PRED|UGPR|UPRED)\s*\|)+)\s*$").unwrap()
    });
    static ROW: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*/\*([0-9a-f]+)\*/[^;]*;\s*//\s*\|(.*)\|\s*$").unwrap());
    let mut map: BTreeMap<String, BTreeMap<u32, Live>> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut kinds: Vec<String> = ["GPR", "PRED", "UGPR", "UPRED"].map(String::from).to_vec();
    for raw in text.lines() {
        if let Some(c) = KINDS.captures(raw) {
            kinds = c[1]
                .split('|')
                .map(|k| k.trim().to_string())
                .filter(|k| !k.is_empty())
                .collect();
            continue;
        }
        if let Some(c) = HEADER.captures(raw.trim()) {
            current = Some(c[1].to_string());
            continue;
        }
        let (Some(name), Some(c)) = (current.as_ref(), ROW.captures(raw)) else {
            continue;
        };
        let mut live = Live::default();
        for (kind, count) in kinds.iter().zip(c[2].split('|')) {
            let n = count.trim().parse::<u32>().unwrap_or(0);
            match kind.as_str() {
                "GPR" => live.gpr = n,
                "PRED" => live.pred = n,
                "UGPR" => live.ugpr = n,
                _ => live.upred = n,
            }
        }
        map.entry(name.clone())
            .or_default()
            .insert(u32::from_str_radix(&c[1], 16).unwrap_or(0), live);
    }
    map
}

impl Function {
    pub fn insts(&self) -> impl Iterator<Item = &Inst> {
        self.lines.iter().filter_map(|l| match l {
            Line::Inst { inst, .. } => Some(inst),
            _ => None,
        })
    }

    /// The most registers live at one instruction, from [`Function::live`]; `None` where the
    /// listing has no life ranges (nvdisasm could not count them: [`crate::Sass::live_missing`]).
    pub fn peak(&self) -> Option<Peak> {
        if self.live.is_empty() {
            return None;
        }
        let mut p = Peak::default();
        for (&addr, l) in &self.live {
            if l.gpr > p.gpr {
                p.gpr = l.gpr;
                p.addr = addr;
            }
            p.pred = p.pred.max(l.pred);
            p.ugpr = p.ugpr.max(l.ugpr);
            p.upred = p.upred.max(l.upred);
        }
        Some(p)
    }

    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for inst in self.insts() {
            c.add(inst, classify(&inst.opcode));
        }
        let items: Vec<Item<'_>> = self
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Inst { inst, .. } => Some(Item::Inst(inst)),
                Line::Label(l) => Some(Item::Label(l)),
                Line::Source(_) => None,
            })
            .collect();
        c.loops = Loops::find(&items, branch_target, |op| {
            matches!(classify(op), InstClass::Barrier | InstClass::Shuffle)
        });
        c
    }
}

/// What a SASS opcode does: `LDG.E.128` → global load of 128 bits; `IMAD.MOV.U32` → a move.
/// The uniform datapath's `U` forms (`ULDC`, `UIADD3`, `UMOV`) are classed as their vector
/// forms.
pub fn classify(opcode: &str) -> InstClass {
    let mut parts = opcode.split('.');
    let base = parts.next().unwrap_or("");
    let mods: Vec<&str> = parts.collect();
    let bits = || {
        if mods.contains(&"128") {
            128
        } else if mods.contains(&"64") {
            64
        } else if mods.iter().any(|m| matches!(*m, "U8" | "S8")) {
            8
        } else if mods.iter().any(|m| matches!(*m, "U16" | "S16")) {
            16
        } else {
            32
        }
    };
    if base == "IMAD" && mods.first() == Some(&"MOV") {
        return InstClass::Move;
    }
    let class = |base: &str| match base {
        "LDS" | "LDSM" => InstClass::Shared { load: true },
        // STAS: `st.async` into a cluster block's shared memory.
        "STS" | "STAS" => InstClass::Shared { load: false },
        // LDGSTS: an async copy from global to shared memory (`cp.async`), counted as the
        // global load it starts.
        "LDG" | "LDGSTS" => InstClass::Global {
            load: true,
            bits: bits(),
        },
        "STG" => InstClass::Global {
            load: false,
            bits: bits(),
        },
        "LDL" => InstClass::Local { load: true },
        "STL" => InstClass::Local { load: false },
        "LD" => InstClass::Generic { load: true },
        "ST" => InstClass::Generic { load: false },
        // CGABAR_*: the thread-block cluster's barrier (`barrier.cluster`, sm_90; issued on the
        // uniform datapath as UCGABAR_ARV / UCGABAR_WAIT).
        // SYNCS: an mbarrier's operations (init, arrive, expect-tx, phase check).
        "BAR" | "CGABAR_ARV" | "CGABAR_WAIT" | "CGABAR_SET" | "CGABAR_GET" | "SYNCS" => {
            InstClass::Barrier
        }
        "SHFL" => InstClass::Shuffle,
        "ATOM" | "ATOMG" | "ATOMS" | "RED" | "REDG" => InstClass::Atomic,
        "BRA" | "BRX" | "JMP" | "JMX" => InstClass::Branch,
        "IADD3" | "IADD" | "IADD32I" | "IMAD" | "IMUL" | "IMUL32I" | "ISCADD" | "LEA" | "LOP3"
        | "LOP" | "LOP32I" | "SHF" | "SHL" | "SHR" | "ISETP" | "IMNMX" | "IABS" | "POPC"
        | "FLO" | "BREV" | "BMSK" | "PRMT" | "SGXT" | "VIADD" | "VIMNMX" | "IDP" | "IDP4A"
        | "BFE" | "BFI" | "VIADDMNMX" => InstClass::Int,
        "FADD" | "FADD32I" | "FMUL" | "FMUL32I" | "FFMA" | "FFMA32I" | "FSETP" | "FSET"
        | "FMNMX" | "FSEL" | "FCHK" | "MUFU" | "FSWZADD" | "DADD" | "DMUL" | "DFMA" | "DSETP"
        | "HADD2" | "HMUL2" | "HFMA2" | "HSETP2" | "HMNMX2" => InstClass::Float,
        "HMMA" | "IMMA" | "BMMA" | "DMMA" | "HGMMA" | "IGMMA" | "QGMMA" | "BGMMA" => {
            InstClass::Tensor
        }
        "F2I" | "I2F" | "F2F" | "I2I" | "FRND" | "F2FP" | "I2FP" | "F2IP" => InstClass::Convert,
        "MOV" | "MOV32I" | "SEL" | "R2UR" => InstClass::Move,
        "LDC" | "S2R" | "S2UR" | "CS2R" => InstClass::Constant,
        "PLOP3" | "P2R" | "R2P" | "PSETP" | "P2UR" => InstClass::Predicate,
        // WARPGROUP: the fence and the wait of a warpgroup's `wgmma` (`.ARRIVE`, `.DEPBAR`).
        "EXIT" | "BSSY" | "BSYNC" | "WARPSYNC" | "CALL" | "RET" | "NOP" | "YIELD" | "BREAK"
        | "BPT" | "KILL" | "BMOV" | "NANOSLEEP" | "ENDCOLLECTIVE" | "DEPBAR" | "LDGDEPBAR"
        | "WARPGROUP" => InstClass::Control,
        "VOTE" | "VOTEU" | "MATCH" | "REDUX" | "ELECT" => InstClass::Warp,
        "MEMBAR" | "FENCE" | "ERRBAR" | "CGAERRBAR" | "CCTL" | "CCTLL" => InstClass::Fence,
        _ => InstClass::Other,
    };
    match class(base) {
        InstClass::Other => match base.strip_prefix('U') {
            Some(vector) => class(vector),
            None => InstClass::Other,
        },
        c => c,
    }
}

/// ``BRA `(.L_x_13)`` → `.L_x_13`.
pub fn branch_target(inst: &Inst) -> Option<&str> {
    if !matches!(classify(&inst.opcode), InstClass::Branch) {
        return None;
    }
    let s = inst.operands.as_str();
    let start = s.find("(")? + 1;
    let end = start + s[start..].find(')')?;
    Some(&s[start..end])
}

static INST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*/\*([0-9a-f]+)\*/\s+(?:@(!?U?P(?:T|\d+))\s+)?([A-Z0-9_.]+)\s*(.*?)\s*;")
        .unwrap()
});
/// The encoding `-hex` prints: the first 64-bit word after the instruction's `;`, the second
/// alone on the next line.
static WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*/\* 0x([0-9a-f]{16}) \*/\s*$").unwrap());
static FIRST_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r";\s*/\* 0x([0-9a-f]{16}) \*/\s*$").unwrap());
static SOURCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*//## File "([^"]*)", line (\d+)( inlined at "[^"]*", line \d+)?"#).unwrap()
});

/// Splits `nvdisasm -c` output at each `.text.<kernel>:` and reads its instructions, labels,
/// (with `-g` or `-gi`) source lines and (with `-hex`) each instruction's control bits. Drops
/// the padding after the last `EXIT`: the `BRA` to itself and the `NOP`s, so counts are of
/// instructions that can run.
pub fn parse_disassembly(text: &str) -> Vec<Function> {
    let mut functions: Vec<Function> = Vec::new();
    // Frames of an inline chain read so far (innermost first), until its outermost frame.
    let mut chain: Vec<Frame> = Vec::new();
    // The last instruction whose first encoding word has been read: (address, word).
    let mut first_word: Option<(u32, u64)> = None;
    for raw in text.lines() {
        if let Some((addr, lo)) = first_word.take()
            && let Some(c) = WORD.captures(raw)
        {
            let hi = u64::from_str_radix(&c[1], 16).unwrap_or(0);
            if let Some(f) = functions.last_mut() {
                f.control.insert(addr, Control::decode(lo, hi));
            }
            continue;
        }
        let line = raw.trim();
        if let Some(name) = line
            .strip_prefix(".text.")
            .and_then(|s| s.strip_suffix(':'))
        {
            functions.push(Function {
                name: name.to_string(),
                lines: Vec::new(),
                live: BTreeMap::new(),
                control: BTreeMap::new(),
            });
            chain.clear();
            continue;
        }
        let Some(f) = functions.last_mut() else {
            continue;
        };
        if let Some(c) = SOURCE.captures(raw) {
            chain.push(Frame {
                file: c[1].to_string(),
                line: c[2].parse().unwrap_or(0),
            });
            if c.get(3).is_none() {
                f.lines.push(Line::Source(std::mem::take(&mut chain)));
            }
            continue;
        }
        if !chain.is_empty() {
            // A chain cut short: keep what it has.
            f.lines.push(Line::Source(std::mem::take(&mut chain)));
        }
        if let Some(c) = INST.captures(raw) {
            let addr = u32::from_str_radix(&c[1], 16).unwrap_or(0);
            first_word = FIRST_WORD
                .captures(raw)
                .map(|w| (addr, u64::from_str_radix(&w[1], 16).unwrap_or(0)));
            f.lines.push(Line::Inst {
                addr,
                inst: Inst {
                    guard: c.get(2).map(|g| g.as_str().to_string()),
                    opcode: c[3].to_string(),
                    operands: c[4].to_string(),
                },
            });
        } else if let Some(label) = line
            .strip_suffix(':')
            // Branch targets (`.L_x_12`), and subroutines the kernel calls (ptxas's slow paths:
            // `$__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath`).
            .filter(|l| l.starts_with(".L") || l.starts_with('$'))
        {
            f.lines.push(Line::Label(label.to_string()));
        }
    }
    for f in &mut functions {
        trim_padding(&mut f.lines);
        let kept: std::collections::BTreeSet<u32> = f
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Inst { addr, .. } => Some(*addr),
                _ => None,
            })
            .collect();
        f.control.retain(|a, _| kept.contains(a));
    }
    functions
}

fn trim_padding(lines: &mut Vec<Line>) {
    while let Some(last) = lines.last() {
        match last {
            Line::Inst { inst, .. } if inst.opcode == "NOP" => {}
            Line::Label(_) | Line::Source(_) => {}
            _ => break,
        }
        lines.pop();
    }
    let n = lines.len();
    if n >= 2
        && let (Line::Label(l), Line::Inst { inst, .. }) = (&lines[n - 2], &lines[n - 1])
        && branch_target(inst) == Some(l.as_str())
    {
        lines.truncate(n - 2);
    }
}

/// Reads `ptxas -v` (stderr): per kernel, registers, static shared memory, stack, spills.
pub fn parse_resources(report: &str) -> BTreeMap<String, Resources> {
    static FUNC: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"Function properties for (\S+)").unwrap());
    static FRAME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
            .unwrap()
    });
    static USED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"Used (\d+) registers").unwrap());
    static SMEM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(\d+) bytes smem").unwrap());
    let num = |s: &str| s.parse::<u32>().unwrap_or(0);
    let mut map = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in report.lines() {
        if let Some(c) = FUNC.captures(line) {
            current = Some(c[1].to_string());
            map.insert(c[1].to_string(), Resources::default());
        }
        let Some(r) = current.as_ref().and_then(|k| map.get_mut(k)) else {
            continue;
        };
        if let Some(c) = FRAME.captures(line) {
            r.stack = num(&c[1]);
            r.spill_stores = num(&c[2]);
            r.spill_loads = num(&c[3]);
        }
        if let Some(c) = USED.captures(line) {
            r.registers = num(&c[1]);
            r.smem = SMEM.captures(line).map_or(0, |c| num(&c[1]));
        }
    }
    map
}

#[cfg(test)]
mod tests;
