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

/// `ptxas -arch=sm_90 -lineinfo -v -o <cubin> <ptx>`; returns the cubin and the `-v` report.
pub fn assemble(
    tools: &Tools,
    ptx: &Path,
    cubin: &Path,
) -> Result<(PathBuf, BTreeMap<String, Resources>)> {
    std::fs::create_dir_all(cubin.parent().expect("cubin has a parent"))?;
    let mut cmd = Command::new(&tools.ptxas);
    cmd.arg(format!("-arch={ARCH}"))
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

/// Reads `nvdisasm --life-range-mode count`: each instruction line ends with
/// `// |  GPR  |  PRED  |  UGPR  |  UPRED  |`, a blank count meaning none.
pub fn parse_life_ranges(text: &str) -> BTreeMap<String, BTreeMap<u32, Live>> {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\.text\.(\S+):").unwrap());
    static ROW: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*/\*([0-9a-f]+)\*/[^;]*;\s*//\s*\|([^|]*)\|([^|]*)\|([^|]*)\|([^|]*)\|")
            .unwrap()
    });
    let mut map: BTreeMap<String, BTreeMap<u32, Live>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for raw in text.lines() {
        if let Some(c) = HEADER.captures(raw.trim()) {
            current = Some(c[1].to_string());
            continue;
        }
        let (Some(name), Some(c)) = (current.as_ref(), ROW.captures(raw)) else {
            continue;
        };
        let n = |i: usize| c[i].trim().parse::<u32>().unwrap_or(0);
        map.entry(name.clone()).or_default().insert(
            u32::from_str_radix(&c[1], 16).unwrap_or(0),
            Live {
                gpr: n(2),
                pred: n(3),
                ugpr: n(4),
                upred: n(5),
            },
        );
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

    /// The most registers live at once, from [`Function::live`] (all zero when it is empty).
    pub fn peak(&self) -> Peak {
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
        p
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
        | "HADD2" | "HMUL2" | "HFMA2" | "HSETP2" | "HMNMX2" | "HMMA" => InstClass::Float,
        "F2I" | "I2F" | "F2F" | "I2I" | "FRND" | "F2FP" | "I2FP" | "F2IP" => InstClass::Convert,
        "MOV" | "MOV32I" | "SEL" | "R2UR" => InstClass::Move,
        "LDC" | "S2R" | "S2UR" | "CS2R" => InstClass::Constant,
        "PLOP3" | "P2R" | "R2P" | "PSETP" | "P2UR" => InstClass::Predicate,
        "EXIT" | "BSSY" | "BSYNC" | "WARPSYNC" | "CALL" | "RET" | "NOP" | "YIELD" | "BREAK"
        | "BPT" | "KILL" | "BMOV" | "NANOSLEEP" | "ENDCOLLECTIVE" | "DEPBAR" | "LDGDEPBAR" => {
            InstClass::Control
        }
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
mod tests {
    use super::*;

    const LISTING: &str = r#"
//--------------------- .text.k                --------------------------
	.section	.text.k,"ax",@progbits
k:
.text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
	//## File "/work/main/gpu-kernels/src/reduce.rs", line 116
        /*0010*/                   LOP3.LUT P0, RZ, R2, 0x1, RZ, 0xc0, !PT ;
.L_x_13:
        /*0020*/              @!P0 LDS R4, [R3+0x4] ;
        /*0030*/                   LDG.E.128 R4, desc[UR6][R4.64+-0x8] ;
        /*0040*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0050*/              @!P0 BRA `(.L_x_13) ;
        /*0060*/                   SHFL.DOWN PT, R5, R8, 0x10, 0x1f ;
        /*0070*/                   REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR6][R2.64], R5 ;
        /*0080*/               @P0 EXIT ;
        /*0090*/                   EXIT ;
.L_x_24:
        /*00a0*/                   BRA `(.L_x_24);
        /*00b0*/                   NOP;
.L_x_40:
"#;

    #[test]
    fn parses_listing_and_drops_padding() {
        let fs = parse_disassembly(LISTING);
        assert_eq!(fs.len(), 1);
        let f = &fs[0];
        assert_eq!(f.name, "k");
        assert!(f.lines.contains(&Line::Source(vec![Frame {
            file: "/work/main/gpu-kernels/src/reduce.rs".into(),
            line: 116
        }])));
        let c = f.counts();
        assert_eq!(c.total, 10);
        assert_eq!(c.shared_ld, 1);
        assert_eq!(c.global_ld.get(&128), Some(&1));
        assert_eq!(
            (c.barriers, c.shuffles, c.atomics, c.branches),
            (1, 1, 1, 1)
        );
        assert_eq!(c.predicated, 3);
        assert_eq!((c.loops.count, c.loops.with_sync), (1, 1));
    }

    /// `nvdisasm -c -gi`: a barrier inlined through the device layer from `core::arch`.
    const INLINED: &str = r#"
.text.k:
        /*0140*/                   STS [R9], R0 ;
	//## File "/rust/library/core/src/../../stdarch/crates/core_arch/src/nvptx/mod.rs", line 57 inlined at "/lab/gpu-kernels/src/device/llvm.rs", line 49
	//## File "/lab/gpu-kernels/src/device/llvm.rs", line 49 inlined at "/lab/gpu-kernels/src/reduce.rs", line 86
	//## File "/lab/gpu-kernels/src/reduce.rs", line 86
        /*0150*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0160*/                   EXIT ;
"#;

    #[test]
    fn a_called_subroutine_s_entry_is_a_label() {
        let listing = "
//--------------------- .text.k                --------------------------
k:
.text.k:
        /*0000*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath) ;
        /*0010*/                   EXIT ;
$__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath:
        /*0020*/                   RET.REL.NODEC R20 `(k) ;
";
        let f = &parse_disassembly(listing)[0];
        assert!(
            f.lines.contains(&Line::Label(
                "$__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath".into()
            )),
            "{:?}",
            f.lines
        );
    }

    #[test]
    fn reads_inline_chains_innermost_first() {
        let f = &parse_disassembly(INLINED)[0];
        let chains: Vec<&Vec<Frame>> = f
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Source(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(chains.len(), 1, "{:?}", f.lines);
        let lines: Vec<(&str, u32)> = chains[0]
            .iter()
            .map(|fr| (fr.file.rsplit('/').next().unwrap(), fr.line))
            .collect();
        assert_eq!(lines, [("mod.rs", 57), ("llvm.rs", 49), ("reduce.rs", 86)]);
        // The chain sits right before the instruction it describes.
        assert!(matches!(&f.lines[2], Line::Inst { addr: 0x150, .. }));
    }

    /// `nvdisasm -c -gi -hex`: each instruction's two encoding words, the second alone on the
    /// next line (a source line may come between instructions, never between the words).
    const HEX: &str = r#"
.text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;                                     /* 0x00000a00ff017b82 */
                                                                                              /* 0x000fe20000000800 */
	//## File "/lab/gpu-kernels/src/reduce.rs", line 86
        /*0010*/                   S2R R5, SR_CTAID.X ;                                       /* 0x0000000000057919 */
                                                                                              /* 0x000e220000002500 */
        /*0020*/                   EXIT ;                                                     /* 0x000000000000794d */
                                                                                              /* 0x000fea0003800000 */
.L_x_1:
        /*0030*/                   BRA `(.L_x_1);                                             /* 0xfffffffc00fc7947 */
                                                                                              /* 0x000fc0000383ffff */
"#;

    #[test]
    fn reads_each_instructions_control_bits() {
        let f = &parse_disassembly(HEX)[0];
        assert_eq!(
            f.control.len(),
            3,
            "the padding's BRA is dropped: {:?}",
            f.control
        );
        let s2r = f.control[&0x10];
        assert_eq!((s2r.stall, s2r.write), (1, Some(0)));
        assert_eq!(f.control[&0x20].stall, 5);
        assert_eq!(f.insts().count(), 3);
    }

    /// `nvdisasm -c --life-range-mode count`, abridged from reduce_v6_f32 [llvm].
    const LIFE: &str = "
                                                                                                  // | GPR   | PRED   | UGPR   | UPRED   |
.text.reduce_v6_f32:                                                                              // |       |        |        |         |
        /*0000*/                   LDC R1, c[0x0][0x28] ;                                         // |   2   |        |        |         |
        /*0040*/                   ULDC.64 UR6, c[0x0][0x208] ;                                   // |   6   |   1    |   2    |         |
.L_x_47:                                                                                          // |  11   |        |   2    |         |
        /*03f0*/                   LDG.E.128 R4, desc[UR6][R4.64+-0x8] ;                          // |  14   |        |   2    |    1    |
        /*0400*/                   IMAD.MOV.U32 R14, RZ, RZ, R0 ;                                 // |  15   |        |   2    |         |
        /*0410*/                   EXIT ;                                                         // |   1   |        |        |         |
.text.bump:                                                                                       // |       |        |        |         |
        /*0000*/                   LDC R1, c[0x0][0x28] ;                                         // |   3   |        |        |         |
";

    #[test]
    fn reads_life_ranges_and_the_peak() {
        let r = parse_life_ranges(LIFE);
        let v6 = &r["reduce_v6_f32"];
        assert_eq!(v6.len(), 5, "labels carry no address: {v6:?}");
        assert_eq!(
            v6[&0x40],
            Live {
                gpr: 6,
                pred: 1,
                ugpr: 2,
                upred: 0
            }
        );
        assert_eq!(r["bump"][&0].gpr, 3);
        let f = Function {
            name: "reduce_v6_f32".into(),
            lines: Vec::new(),
            live: v6.clone(),
            control: BTreeMap::new(),
        };
        assert_eq!(
            f.peak(),
            Peak {
                gpr: 15,
                addr: 0x400,
                pred: 1,
                ugpr: 2,
                upred: 1
            }
        );
    }

    #[test]
    fn reads_ptxas_report() {
        let report = "\
ptxas info    : Compiling entry function 'reduce_v1_f32' for 'sm_90'
ptxas info    : Function properties for reduce_v1_f32
    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]
ptxas info    : Function properties for bump
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
";
        let r = parse_resources(report);
        let v1 = r["reduce_v1_f32"];
        assert_eq!(
            (v1.registers, v1.smem, v1.spill_stores, v1.spill_loads),
            (12, 1024, 8, 4)
        );
        assert_eq!(r["bump"].registers, 8);
    }

    #[test]
    fn widths_and_classes() {
        assert_eq!(
            classify("LDG.E.128"),
            InstClass::Global {
                load: true,
                bits: 128
            }
        );
        assert_eq!(
            classify("LDG.E"),
            InstClass::Global {
                load: true,
                bits: 32
            }
        );
        assert_eq!(
            classify("STG.E.64"),
            InstClass::Global {
                load: false,
                bits: 64
            }
        );
        assert_eq!(
            classify("LDG.E.U8.CONSTANT"),
            InstClass::Global {
                load: true,
                bits: 8
            }
        );
        assert_eq!(classify("STL.64"), InstClass::Local { load: false });
        assert_eq!(classify("LD.E"), InstClass::Generic { load: true });
        assert_eq!(classify("ATOMS.ADD"), InstClass::Atomic);
        for (op, class) in [
            ("IMAD.MOV.U32", InstClass::Move),
            ("IMAD.WIDE.U32", InstClass::Int),
            ("UIADD3", InstClass::Int),
            ("ULDC.64", InstClass::Constant),
            ("S2R", InstClass::Constant),
            ("UMOV", InstClass::Move),
            ("FADD.FTZ", InstClass::Float),
            ("I2F.U32", InstClass::Convert),
            ("PLOP3.LUT", InstClass::Predicate),
            ("BSSY", InstClass::Control),
            ("EXIT", InstClass::Control),
            ("VOTE.ANY", InstClass::Warp),
            ("MEMBAR.SC.GPU", InstClass::Fence),
            ("BRA.DIV", InstClass::Branch),
            ("HMMA.16816.F32.BF16", InstClass::Float),
            ("DEPBAR.LE", InstClass::Control),
            ("LDGDEPBAR", InstClass::Control),
            ("SYNCS.PHASECHK.TRANS64.TRYWAIT", InstClass::Barrier),
            ("UCGABAR_ARV", InstClass::Barrier),
            ("STAS", InstClass::Shared { load: false }),
            (
                "LDGSTS.E.BYPASS.128",
                InstClass::Global {
                    load: true,
                    bits: 128,
                },
            ),
            ("TEX.SCR.LL", InstClass::Other),
        ] {
            assert_eq!(classify(op), class, "{op}");
        }
    }
}
