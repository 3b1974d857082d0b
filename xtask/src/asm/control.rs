//! The control bits of sm_90 SASS, decoded from each instruction's encoding, and what they
//! say about the schedule ptxas made.
//!
//! Since Volta every instruction is one 128-bit word whose top 23 bits are not the operation
//! but its scheduling: the assembler, not the hardware, decides how long the warp waits after
//! issuing it and which results it must wait for (Jia et al., "Dissecting the NVIDIA Volta GPU
//! Architecture via Microbenchmarking", 2018, section 2.2; the same fields on Turing, Ampere
//! and Hopper). Bit 0 is the least significant bit of the first 64-bit word nvdisasm prints,
//! bit 64 that of the second:
//!
//! | bits    | field         | meaning |
//! |---------|---------------|---------|
//! | 105–108 | stall         | cycles the warp scheduler waits before issuing the warp's next instruction (1–15; 0 only in the padding after the last `EXIT`) |
//! | 109     | yield         | *clear*: the scheduler may switch to another warp after this one (the bit is inverted: 1 means no yield) |
//! | 110–112 | write barrier | scoreboard SB0–SB5 that this instruction's result will release when it arrives (7: none) |
//! | 113–115 | read barrier  | scoreboard released once the instruction has read its source registers (7: none) |
//! | 116–121 | wait mask     | scoreboards to wait for before issuing (bit *k*: SB*k*) |
//! | 122–125 | reuse         | keep source operand slot *k* in the operand reuse cache (nvdisasm prints these as `.reuse`) |
//! | 126–127 | —             | zero |
//!
//! Fixed-latency instructions (integer and floating-point arithmetic, moves) need no
//! scoreboard: the stall counts of the instructions between a producer and its consumer cover
//! its latency. Variable-latency ones (memory loads, special-register reads, shuffles) release
//! a write barrier, which the consumer waits on; stores and other instructions that read their
//! registers late release a read barrier, which an instruction overwriting those registers
//! waits on. [`Schedule`] follows the barriers through the control-flow graph: which loads
//! each wait is for, and whether every result is waited on before it is used, which is how
//! the decoding is checked (`xtask/tests/asm_control.rs`).

use super::counts::Inst;
use super::sass::{self, Line};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One instruction's control bits (see the module documentation for the layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Control {
    /// Cycles before the warp's next instruction may issue.
    pub stall: u8,
    /// The scheduler may switch warps after this instruction (bit 109 clear).
    pub yields: bool,
    /// Scoreboard (0–5) the result releases.
    pub write: Option<u8>,
    /// Scoreboard (0–5) released once the source registers have been read.
    pub read: Option<u8>,
    /// Scoreboards waited for before issue, bit *k* for SB*k*.
    pub wait: u8,
    /// Operand slots kept in the reuse cache, bit *k* for slot *k*.
    pub reuse: u8,
    /// Bits 126–127, zero on every instruction seen.
    pub spare: u8,
}

/// Where the 23 control bits start in the 128-bit instruction.
const CONTROL_SHIFT: u32 = 105;

impl Control {
    /// From the two 64-bit words of an encoding, as nvdisasm `-hex` prints them (bits 0–63,
    /// then 64–127).
    pub fn decode(lo: u64, hi: u64) -> Control {
        let word = (u128::from(hi) << 64) | u128::from(lo);
        let field =
            |shift: u32, bits: u32| ((word >> (CONTROL_SHIFT + shift)) & ((1 << bits) - 1)) as u8;
        let barrier = |b: u8| (b != 7).then_some(b);
        Control {
            stall: field(0, 4),
            yields: field(4, 1) == 0,
            write: barrier(field(5, 3)),
            read: barrier(field(8, 3)),
            wait: field(11, 6),
            reuse: field(17, 4),
            spare: field(21, 2),
        }
    }

    /// The scoreboards waited on, lowest first.
    pub fn waits(&self) -> impl Iterator<Item = u8> + '_ {
        (0..6).filter(|b| self.wait >> b & 1 == 1)
    }

    /// `B--2--- R- W0 Y S04 r0--`: wait mask (the waited scoreboards' numbers), read barrier,
    /// write barrier, yield, stall cycles, reused operand slots.
    pub fn columns(&self) -> String {
        let wait: String = (0..6)
            .map(|b| {
                if self.wait >> b & 1 == 1 {
                    char::from(b'0' + b)
                } else {
                    '-'
                }
            })
            .collect();
        let sb = |b: Option<u8>| b.map_or('-', |b| char::from(b'0' + b));
        let reuse: String = (0..4)
            .map(|s| {
                if self.reuse >> s & 1 == 1 {
                    char::from(b'a' + s)
                } else {
                    '-'
                }
            })
            .collect();
        format!(
            "B{wait} R{} W{} {} S{:02} {reuse}",
            sb(self.read),
            sb(self.write),
            if self.yields { 'Y' } else { '-' },
            self.stall
        )
    }
}

/// The header lines of a listing with control columns.
pub const LEGEND: &str = "\
// control bits after each address: B wait mask (scoreboards SB0-SB5 waited on), R read barrier
// and W write barrier (the scoreboard each releases), Y may yield, S stall cycles, reused operand
// slots a-d (docs/asm-walkthrough.md, \"Control bits\")";

/// A register an instruction reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Reg {
    R(u8),
    Ur(u8),
    P(u8),
    Up(u8),
}

impl Reg {
    fn parse(kind: &str, index: &str) -> Option<Reg> {
        let i: u8 = index.parse().ok()?;
        Some(match kind {
            "R" => Reg::R(i),
            "UR" => Reg::Ur(i),
            "P" => Reg::P(i),
            "UP" => Reg::Up(i),
            _ => return None,
        })
    }

    fn next(self, k: u8) -> Reg {
        match self {
            Reg::R(i) => Reg::R(i + k),
            Reg::Ur(i) => Reg::Ur(i + k),
            p => p,
        }
    }

    /// A register of the uniform datapath.
    pub fn uniform(self) -> bool {
        matches!(self, Reg::Ur(_) | Reg::Up(_))
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reg::R(i) => write!(f, "R{i}"),
            Reg::Ur(i) => write!(f, "UR{i}"),
            Reg::P(i) => write!(f, "P{i}"),
            Reg::Up(i) => write!(f, "UP{i}"),
        }
    }
}

/// The registers one instruction touches. `RZ`, `URZ`, `PT` and `UPT` are constants and left
/// out; so are the convergence barriers (`B0`) and `PR`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Access {
    pub writes: Vec<Reg>,
    /// Source registers, every word of a 64- or 128-bit operand.
    pub reads: Vec<Reg>,
    /// The reads that are a second or later word of a wider operand (`R9` of `R8.64`).
    pub upper_reads: Vec<Reg>,
    /// The guard predicate (`P0` of `@!P0`), read when the instruction issues.
    pub guard: Option<Reg>,
}

impl Access {
    pub fn touches(&self, r: Reg) -> bool {
        self.writes.contains(&r) || self.reads.contains(&r) || self.guard == Some(r)
    }
}

/// Opcodes with no destination operand: the first operand is read.
const NO_DEST: &[&str] = &[
    "LDGSTS",
    "ST",
    "STS",
    "STG",
    "STL",
    "RED",
    "REDG",
    "BAR",
    "BRA",
    "BRX",
    "JMP",
    "EXIT",
    "BSSY",
    "BSYNC",
    "WARPSYNC",
    "NOP",
    "MEMBAR",
    "FENCE",
    "ERRBAR",
    "CCTL",
    "ENDCOLLECTIVE",
    "BREAK",
    "CALL",
    "RET",
    "YIELD",
    "DEPBAR",
    "BMOV",
    "NANOSLEEP",
    "KILL",
    "BPT",
];

/// How many 32-bit registers the destination (and a store's data) spans: `LDG.E.128` 4,
/// `LDC.64`, `IMAD.WIDE`, `CS2R` 2.
fn width(opcode: &str) -> u8 {
    let mut parts = opcode.split('.');
    let base = parts.next().unwrap_or("");
    let mods: Vec<&str> = parts.collect();
    if mods.contains(&"128") {
        4
    } else if mods.contains(&"64")
        || mods.contains(&"WIDE")
        || (base == "CS2R" && !mods.contains(&"32"))
        || matches!(base, "DADD" | "DMUL" | "DFMA" | "DMNMX")
    {
        2
    } else {
        1
    }
}

fn is_predicate(operand: &str) -> bool {
    let p = operand.trim().trim_start_matches('!');
    p == "PT"
        || p == "UPT"
        || ((p.starts_with('P') || p.starts_with("UP"))
            && p.ends_with(|c: char| c.is_ascii_digit()))
}

fn is_register(operand: &str) -> bool {
    let r = operand
        .trim()
        .trim_start_matches(['-', '|', '~'])
        .split('.')
        .next()
        .unwrap_or("");
    r == "RZ"
        || r == "URZ"
        || ((r.starts_with('R') || r.starts_with("UR"))
            && r[1..].trim_start_matches('R').parse::<u8>().is_ok())
}

/// The registers named in one operand, each with the number of words it spans: `R2.64` two,
/// the `UR6` of `desc[UR6]` two (a 64-bit descriptor), others `words`.
fn operand_regs(operand: &str, words: u8) -> Vec<(Reg, u8)> {
    static REG: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b(UR|R|UP|P)(\d+)((?:\.[A-Z0-9]+)*)").unwrap()
    });
    REG.captures_iter(operand)
        .filter_map(|c| {
            let reg = Reg::parse(&c[1], &c[2])?;
            let start = c.get(0).map_or(0, |m| m.start());
            let n = if matches!(reg, Reg::P(_) | Reg::Up(_)) {
                1
            } else if c[3].split('.').any(|m| m == "64") || operand[..start].ends_with("desc[") {
                2
            } else {
                words
            };
            Some((reg, n))
        })
        .collect()
}

/// The registers `inst` writes and reads (see [`Access`]).
pub fn access(inst: &Inst) -> Access {
    let base = inst.opcode.split('.').next().unwrap_or("");
    let operands: Vec<&str> = if inst.operands.trim().is_empty() {
        Vec::new()
    } else {
        inst.operands.split(',').map(str::trim).collect()
    };
    // Destinations: the first operand; after a register, the predicates that follow it (carry
    // outs: `LEA R13, P1, …`, `IADD3 R4, P0, P1, …`); after a predicate, one more predicate or
    // register (`ISETP P0, PT, …`, `SHFL.DOWN PT, R3, …`, `LOP3.LUT P0, RZ, …`).
    let mut dests = 0;
    if !NO_DEST.contains(&base) && !operands.is_empty() {
        dests = 1;
        if is_predicate(operands[0]) {
            if operands
                .get(1)
                .is_some_and(|o| is_predicate(o) || is_register(o))
            {
                dests = 2;
            }
        } else {
            while operands.get(dests).is_some_and(|o| is_predicate(o)) {
                dests += 1;
            }
        }
    }
    let w = width(&inst.opcode);
    let wide = inst.opcode.split('.').any(|m| m == "WIDE");
    let store = matches!(base, "ST" | "STS" | "STG" | "STL");
    let double = matches!(base, "DADD" | "DMUL" | "DFMA" | "DSETP" | "DMNMX");
    let mut a = Access::default();
    let last = operands.len().saturating_sub(1);
    for (i, o) in operands.iter().enumerate() {
        let words = if i < dests {
            if is_predicate(o) { 1 } else { w }
        } else if (store && i == last) || (wide && i == 3) || double {
            w.max(if double { 2 } else { 1 })
        } else {
            1
        };
        for (reg, n) in operand_regs(o, words) {
            for k in 0..n {
                let r = reg.next(k);
                if i < dests {
                    a.writes.push(r);
                } else {
                    a.reads.push(r);
                    if k > 0 {
                        a.upper_reads.push(r);
                    }
                }
            }
        }
    }
    a.guard = inst.guard.as_deref().and_then(|g| {
        operand_regs(g.trim_start_matches('!'), 1)
            .first()
            .map(|x| x.0)
    });
    a
}

/// Results that arrive after a variable time, so that the consumer must wait on a scoreboard:
/// loads from every memory, special registers, shuffles and warp reductions, the
/// transcendental unit and the float/integer conversions that share it on sm_90, and the
/// fence that closes a group of asynchronous copies.
pub fn variable_latency(opcode: &str) -> bool {
    matches!(
        opcode.split('.').next().unwrap_or(""),
        "LDG"
            | "LDS"
            | "LDSM"
            | "LDC"
            | "LD"
            | "LDL"
            | "ATOM"
            | "ATOMG"
            | "ATOMS"
            | "S2R"
            | "S2UR"
            | "SHFL"
            | "REDUX"
            | "MATCH"
            | "MUFU"
            | "F2I"
            | "I2F"
            | "LDGDEPBAR"
    )
}

/// Instructions queued to the memory pipe, which reads their registers in issue order: a later
/// one's result cannot land before an earlier one has read its operands.
fn memory_queue(opcode: &str) -> bool {
    matches!(
        opcode.split('.').next().unwrap_or(""),
        "LDG" | "LDGSTS" | "STG" | "LDL" | "STL" | "LD" | "ST" | "ATOM" | "ATOMG" | "RED" | "REDG"
    )
}

/// Shared-memory loads return in order, and so do warp shuffles (the same path through the
/// MIO): of several issued back to back, ptxas may give only a later one a write barrier, and
/// waiting on it covers the earlier ones (the shuffle butterflies of `barrier_fixed` on llvm).
fn in_order_queue(opcode: &str) -> bool {
    matches!(
        opcode.split('.').next().unwrap_or(""),
        "LDS" | "LDSM" | "SHFL"
    )
}

/// What a scoreboard entry tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Dep {
    /// The instruction's result (its write barrier).
    Result,
    /// Its source registers, until they have been read (its read barrier).
    Operands,
}

/// An instruction a wait is for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Producer {
    pub addr: u32,
    pub opcode: String,
    pub dep: Dep,
}

/// One scoreboard an instruction waits on, and the instructions it may be waiting for (those
/// that set it on some path to here with no wait on it since).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Wait {
    pub barrier: u8,
    pub producers: Vec<Producer>,
    /// Set on every path from the kernel's entry (else only on some: after a branch around
    /// the producer, or by the previous trip of a loop).
    pub every_path: bool,
}

/// A register used while a result or a read it depends on may still be outstanding, with no
/// wait for it: what a wrong decoding (or a wrong register model) shows as.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hazard {
    /// The instruction that uses the register.
    pub addr: u32,
    pub reg: Reg,
    pub producer: Producer,
    /// The scoreboard it should have waited on; `None` when the producer set none.
    pub barrier: Option<u8>,
}

/// A kernel's scoreboards, followed through its control-flow graph.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Schedule {
    /// The waits of each instruction, by address.
    pub waits: BTreeMap<u32, Vec<Wait>>,
    pub hazards: Vec<Hazard>,
    /// Instructions no path from the entry reaches (none expected).
    pub unreachable: Vec<u32>,
}

impl Schedule {
    /// Waits on a scoreboard that nothing on any path to them has set since its last wait.
    pub fn idle_waits(&self) -> Vec<(u32, u8)> {
        self.waits
            .iter()
            .flat_map(|(a, ws)| {
                ws.iter()
                    .filter(|w| w.producers.is_empty())
                    .map(move |w| (*a, w.barrier))
            })
            .collect()
    }

    /// `waits on SB2 set by LDG.E at +0x00d0; SB0 read by STS at +0x0420`, for the listing.
    pub fn describe(&self, addr: u32) -> Option<String> {
        let waits = self.waits.get(&addr)?;
        let parts: Vec<String> = waits.iter().map(describe_wait).collect();
        Some(format!("waits on {}", parts.join("; ")))
    }
}

/// How many producer addresses a wait lists before "…".
const LISTED: usize = 4;

fn describe_wait(w: &Wait) -> String {
    if w.producers.is_empty() {
        return format!("SB{} (nothing outstanding)", w.barrier);
    }
    let mut groups: Vec<String> = Vec::new();
    for dep in [Dep::Result, Dep::Operands] {
        let mut by_op: Vec<(&str, Vec<u32>)> = Vec::new();
        for p in w.producers.iter().filter(|p| p.dep == dep) {
            match by_op.iter_mut().find(|(op, _)| *op == p.opcode) {
                Some((_, addrs)) => addrs.push(p.addr),
                None => by_op.push((&p.opcode, vec![p.addr])),
            }
        }
        if by_op.is_empty() {
            continue;
        }
        let verb = match dep {
            Dep::Result => "set",
            Dep::Operands => "read",
        };
        let list: Vec<String> = by_op
            .iter()
            .map(|(op, addrs)| {
                let mut shown: Vec<String> = addrs
                    .iter()
                    .take(LISTED)
                    .map(|a| format!("+0x{a:04x}"))
                    .collect();
                if addrs.len() > LISTED {
                    shown.push(format!("{} more", addrs.len() - LISTED));
                }
                format!("{op} at {}", shown.join(", "))
            })
            .collect();
        groups.push(format!("{verb} by {}", list.join(", ")));
    }
    format!("SB{} {}", w.barrier, groups.join(", "))
}

/// The instructions of a listing with their control-flow successors (indices).
pub struct Cfg<'a> {
    pub insts: Vec<(u32, &'a Inst, Control)>,
    pub succ: Vec<Vec<usize>>,
}

impl<'a> Cfg<'a> {
    /// `None` when an instruction has no decoded control bits (a listing without `-hex`).
    pub fn new(f: &'a sass::Function) -> Option<Cfg<'a>> {
        let mut insts = Vec::new();
        let mut labels: BTreeMap<&str, usize> = BTreeMap::new();
        for l in &f.lines {
            match l {
                Line::Inst { addr, inst } => insts.push((*addr, inst, *f.control.get(addr)?)),
                Line::Label(name) => {
                    labels.insert(name, insts.len());
                }
                Line::Source(_) => {}
            }
        }
        let n = insts.len();
        let succ = insts
            .iter()
            .enumerate()
            .map(|(i, (_, inst, _))| {
                let target = label(inst).and_then(|t| labels.get(t).copied());
                let base = inst.opcode.split('.').next().unwrap_or("");
                let next = (i + 1 < n).then_some(i + 1);
                let always = !inst.predicated();
                let mut s: Vec<usize> = match base {
                    // An indirect branch (a jump table): every target nvdisasm lists.
                    "BRX" | "JMX" => branch_targets(inst)
                        .filter_map(|t| labels.get(t).copied())
                        .chain(next.filter(|_| !always))
                        .collect(),
                    "BRA" if inst.opcode == "BRA" && always => target.into_iter().collect(),
                    "EXIT" | "RET" if always => Vec::new(),
                    // The label of a BSSY is where its BSYNC joins, not a jump.
                    "BSSY" => next.into_iter().collect(),
                    // Conditional branches (`@P0 BRA`, `BRA.DIV`), and the collective blocks
                    // (`WARPSYNC.COLLECTIVE … label`): both ways.
                    _ => next.into_iter().chain(target).collect(),
                };
                s.dedup();
                s
            })
            .collect();
        Some(Cfg { insts, succ })
    }
}

/// The targets nvdisasm lists for an indirect branch:
/// `BRX R10 -0x570 (*"BRANCH_TARGETS .L_x_316,.L_x_317"*)` → `.L_x_316`, `.L_x_317`.
pub fn branch_targets(inst: &Inst) -> impl Iterator<Item = &str> {
    let s = inst.operands.as_str();
    let list = s.find("BRANCH_TARGETS ").map_or("", |i| {
        let rest = &s[i + "BRANCH_TARGETS ".len()..];
        &rest[..rest.find('"').unwrap_or(rest.len())]
    });
    list.split(',').map(str::trim).filter(|t| !t.is_empty())
}

/// ``BRA `(.L_x_13)`` → `.L_x_13`, for any instruction naming a label.
fn label(inst: &Inst) -> Option<&str> {
    let s = inst.operands.as_str();
    let start = s.find("`(")? + 2;
    let end = start + s[start..].find(')')?;
    Some(&s[start..end])
}

/// What a pending entry waits to be released by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tag {
    Barrier(u8),
    /// A shared-memory load without a barrier of its own: the next one's covers it.
    Queued,
    /// A variable-latency result with no barrier, and the stall cycles issued since: ptxas,
    /// out of scoreboards, leaves one untracked only where [`UNTRACKED_CYCLES`] pass before its
    /// first use, so it is outstanding until then.
    Untracked(u8),
}

/// Stall cycles after which an untracked variable-latency result counts as landed. ptxas
/// leaves a `MUFU` without a scoreboard when all six are in use (the four-element `sfu_fault`:
/// its first use 37 stall cycles later on nvvm, 61 on llvm); a use sooner than this is flagged.
pub const UNTRACKED_CYCLES: u8 = 32;

type Pending = (Tag, Reg, Dep, u32);

/// Follows every scoreboard through the graph (a forward data flow to a fixed point; a
/// register is outstanding after a join when it is on any incoming path).
pub fn schedule(f: &sass::Function) -> Option<Schedule> {
    let cfg = Cfg::new(f)?;
    let n = cfg.insts.len();
    let accesses: Vec<Access> = cfg.insts.iter().map(|(_, i, _)| access(i)).collect();
    let mut pending: Vec<Option<BTreeSet<Pending>>> = vec![None; n];
    // Scoreboards set on every path to an instruction (an intersection at joins).
    let mut set: Vec<Option<BTreeSet<u8>>> = vec![None; n];
    if n == 0 {
        return Some(Schedule::default());
    }
    pending[0] = Some(BTreeSet::new());
    set[0] = Some(BTreeSet::new());
    let mut work = vec![0];
    while let Some(i) = work.pop() {
        let (addr, inst, c) = cfg.insts[i];
        let mut out = pending[i].clone().unwrap_or_default();
        out.retain(|p| !matches!(p.0, Tag::Barrier(b) if c.wait >> b & 1 == 1));
        // This instruction's stall passes before the next issues.
        out = out
            .into_iter()
            .filter_map(|p| match p.0 {
                Tag::Untracked(t) => {
                    let t = t.saturating_add(c.stall);
                    (t < UNTRACKED_CYCLES).then_some((Tag::Untracked(t), p.1, p.2, p.3))
                }
                _ => Some(p),
            })
            .collect();
        issue(&mut out, addr, inst, c, &accesses[i]);
        let mut s = set[i].clone().unwrap_or_default();
        s.extend(c.write.into_iter().chain(c.read));
        for &j in &cfg.succ[i] {
            let (mut changed, p) = (false, pending[j].get_or_insert_with(BTreeSet::new));
            for x in &out {
                changed |= p.insert(*x);
            }
            let merged: BTreeSet<u8> = match &set[j] {
                None => s.clone(),
                Some(old) => old.intersection(&s).copied().collect(),
            };
            if set[j].as_ref() != Some(&merged) {
                set[j] = Some(merged);
                changed = true;
            }
            if changed {
                work.push(j);
            }
        }
    }
    let opcode_at: BTreeMap<u32, &str> = cfg
        .insts
        .iter()
        .map(|(a, i, _)| (*a, i.opcode.as_str()))
        .collect();
    let producer = |addr: u32, dep: Dep| Producer {
        addr,
        opcode: opcode_at.get(&addr).copied().unwrap_or("").to_string(),
        dep,
    };
    let mut out = Schedule::default();
    for (i, (addr, inst, c)) in cfg.insts.iter().enumerate() {
        let Some(before) = &pending[i] else {
            out.unreachable.push(*addr);
            continue;
        };
        let every = set[i].clone().unwrap_or_default();
        let waits: Vec<Wait> = c
            .waits()
            .map(|b| {
                let producers: BTreeSet<Producer> = before
                    .iter()
                    .filter(|p| p.0 == Tag::Barrier(b))
                    .map(|p| producer(p.3, p.2))
                    .collect();
                Wait {
                    barrier: b,
                    producers: producers.into_iter().collect(),
                    every_path: every.contains(&b),
                }
            })
            .collect();
        if !waits.is_empty() {
            out.waits.insert(*addr, waits);
        }
        let a = &accesses[i];
        let mut seen = BTreeSet::new();
        for &(tag, reg, dep, from) in before {
            let released = matches!(tag, Tag::Barrier(b) if c.wait >> b & 1 == 1);
            let hit = match dep {
                // A result: reading it, or overwriting it before it lands.
                Dep::Result => a.touches(reg),
                // Operands not yet read: overwriting them, unless the writer queues behind
                // the reader in the memory pipe.
                Dep::Operands => {
                    a.writes.contains(&reg)
                        && !(memory_queue(&inst.opcode)
                            && opcode_at.get(&from).is_some_and(|o| memory_queue(o)))
                }
            };
            if hit && !released && seen.insert((reg, from)) {
                out.hazards.push(Hazard {
                    addr: *addr,
                    reg,
                    producer: producer(from, dep),
                    barrier: match tag {
                        Tag::Barrier(b) => Some(b),
                        Tag::Queued | Tag::Untracked(_) => None,
                    },
                });
            }
        }
    }
    Some(out)
}

/// An instruction issues: what it leaves outstanding.
fn issue(out: &mut BTreeSet<Pending>, addr: u32, inst: &Inst, c: Control, a: &Access) {
    if let Some(b) = c.write
        && in_order_queue(&inst.opcode)
    {
        let queued: Vec<Pending> = out.iter().filter(|p| p.0 == Tag::Queued).copied().collect();
        for p in queued {
            out.remove(&p);
            out.insert((Tag::Barrier(b), p.1, p.2, p.3));
        }
    }
    let tag = match c.write {
        Some(b) => Some(Tag::Barrier(b)),
        None if in_order_queue(&inst.opcode) => Some(Tag::Queued),
        None if variable_latency(&inst.opcode) => Some(Tag::Untracked(c.stall)),
        None => None,
    };
    if let Some(tag) = tag {
        for &r in &a.writes {
            out.insert((tag, r, Dep::Result, addr));
        }
    }
    // Uniform registers are read at issue; the read barrier covers the vector ones.
    if let Some(b) = c.read {
        for &r in a.reads.iter().filter(|r| !r.uniform()) {
            out.insert((Tag::Barrier(b), r, Dep::Operands, addr));
        }
    }
}

/// The stall cycles a kernel's instructions schedule, added up over its listing (each
/// instruction once, whatever runs how often).
pub fn stall_cycles(f: &sass::Function) -> u32 {
    f.control.values().map(|c| u32::from(c.stall)).sum()
}

/// A fixed-latency result and its first reader further down the same straight-line code.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gap {
    pub producer: u32,
    pub producer_opcode: String,
    pub consumer: u32,
    pub consumer_opcode: String,
    pub reg: Reg,
    /// The stall cycles from the producer's issue to the consumer's.
    pub cycles: u32,
    /// The producer writes only uniform registers.
    pub uniform: bool,
    /// The producer writes a register pair (`IMAD.WIDE`), or the consumer reads the register
    /// as the upper word of a wider operand (`R9` of `R8.64`).
    pub wide: bool,
    /// The consumer reads the register as its guard (`@P0`).
    pub guard: bool,
}

/// Up to how many cycles [`gaps`] looks ahead.
const GAP_HORIZON: u32 = 32;

/// Every fixed-latency producer with a reader within [`GAP_HORIZON`] cycles on the fall-through
/// path: how many stall cycles ptxas put between them.
pub fn gaps(f: &sass::Function) -> Vec<Gap> {
    let Some(cfg) = Cfg::new(f) else {
        return Vec::new();
    };
    let accesses: Vec<Access> = cfg.insts.iter().map(|(_, i, _)| access(i)).collect();
    let mut out = Vec::new();
    for (i, (addr, inst, c)) in cfg.insts.iter().enumerate() {
        let a = &accesses[i];
        if variable_latency(&inst.opcode) || a.writes.is_empty() {
            continue;
        }
        let mut cycles = u32::from(c.stall);
        let mut j = i;
        'ahead: while cycles < GAP_HORIZON {
            if !cfg.succ[j].contains(&(j + 1)) {
                break;
            }
            j += 1;
            let b = &accesses[j];
            for &r in &a.writes {
                let guard = b.guard == Some(r);
                if b.reads.contains(&r) || guard {
                    out.push(Gap {
                        producer: *addr,
                        producer_opcode: inst.opcode.clone(),
                        consumer: cfg.insts[j].0,
                        consumer_opcode: cfg.insts[j].1.opcode.clone(),
                        reg: r,
                        cycles,
                        uniform: a.writes.iter().all(|w| w.uniform()),
                        wide: inst.opcode.split('.').any(|m| m == "WIDE" || m == "64")
                            || b.upper_reads.contains(&r),
                        guard,
                    });
                    break 'ahead;
                }
            }
            if a.writes.iter().any(|r| b.writes.contains(r)) {
                break;
            }
            cycles += u32::from(cfg.insts[j].2.stall);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(text: &str) -> Inst {
        let (guard, rest) = match text.strip_prefix('@') {
            Some(r) => {
                let (g, rest) = r.split_once(' ').unwrap();
                (Some(g.to_string()), rest)
            }
            None => (None, text),
        };
        let (opcode, operands) = rest.split_once(' ').unwrap_or((rest, ""));
        Inst {
            guard,
            opcode: opcode.into(),
            operands: operands.into(),
        }
    }

    /// Encodings of reduce_v3_f32 [llvm], as nvdisasm -hex prints them.
    #[test]
    fn decodes_the_fields_of_real_encodings() {
        // S2R R5, SR_CTAID.X: releases SB0, 1 cycle.
        let c = Control::decode(0x0000000000057919, 0x000e220000002500);
        assert_eq!(
            (c.stall, c.yields, c.write, c.read, c.wait, c.reuse),
            (1, false, Some(0), None, 0, 0)
        );
        // IMAD.WIDE.U32 R4, R5, 0x100, R2: waits on SB0, 3 cycles, may yield.
        let c = Control::decode(0x0000010005047825, 0x001fc600078e0002);
        assert_eq!((c.stall, c.yields, c.write, c.wait), (3, true, None, 0b1));
        // ISETP.GT.U32.AND P1, PT, R2.reuse, 0x7f, PT: operand slot a reused.
        let c = Control::decode(0x0000007f0200780c, 0x040fe40003f24070);
        assert_eq!((c.stall, c.reuse), (2, 0b1));
        assert_eq!(c.columns(), "B------ R- W- - S02 a---");
        // STS [R9], R0 after the load: waits on SB2.
        let c = Control::decode(0, 0x004fe80000000800);
        assert_eq!(c.waits().collect::<Vec<_>>(), [2]);
        // The padding NOP: stall 0, yield, no barriers.
        let c = Control::decode(0x0000000000007918, 0x000fc00000000000);
        assert_eq!(
            (c.stall, c.yields, c.write, c.read, c.spare),
            (0, true, None, None, 0)
        );
    }

    #[test]
    fn registers_read_and_written() {
        let a = access(&inst("IMAD.WIDE.U32 R4, R5, 0x100, R2"));
        assert_eq!(a.writes, [Reg::R(4), Reg::R(5)]);
        assert_eq!(a.reads, [Reg::R(5), Reg::R(2), Reg::R(3)]);
        assert_eq!(a.upper_reads, [Reg::R(3)]);
        let a = access(&inst("@!P0 LDG.E.128 R4, desc[UR6][R2.64+-0x8]"));
        assert_eq!(a.writes, [Reg::R(4), Reg::R(5), Reg::R(6), Reg::R(7)]);
        assert_eq!(a.reads, [Reg::Ur(6), Reg::Ur(7), Reg::R(2), Reg::R(3)]);
        assert_eq!(a.guard, Some(Reg::P(0)));
        let a = access(&inst("ISETP.GE.U32.AND.EX P0, PT, R5, UR5, PT, P0"));
        assert_eq!(
            (a.writes, a.reads),
            (vec![Reg::P(0)], vec![Reg::R(5), Reg::Ur(5), Reg::P(0)])
        );
        let a = access(&inst("SHFL.DOWN PT, R3, R2, 0x10, 0x1f"));
        assert_eq!((a.writes, a.reads), (vec![Reg::R(3)], vec![Reg::R(2)]));
        let a = access(&inst("LEA R13, P1, R12.reuse, R13, 0xc"));
        assert_eq!(a.writes, [Reg::R(13), Reg::P(1)]);
        let a = access(&inst("STS.128 [R25], R4"));
        assert!(a.writes.is_empty());
        assert_eq!(
            a.reads,
            [Reg::R(25), Reg::R(4), Reg::R(5), Reg::R(6), Reg::R(7)]
        );
        let a = access(&inst("LOP3.LUT P0, RZ, R2, 0x1, RZ, 0xc0, !PT"));
        assert_eq!((a.writes, a.reads), (vec![Reg::P(0)], vec![Reg::R(2)]));
        let a = access(&inst("S2UR UR5, SR_CgaCtaId"));
        assert_eq!((a.writes, a.reads), (vec![Reg::Ur(5)], vec![]));
    }

    fn function(lines: &[(&str, u64)]) -> sass::Function {
        let mut f = sass::Function {
            name: "k".into(),
            lines: Vec::new(),
            live: BTreeMap::new(),
            control: BTreeMap::new(),
        };
        let mut addr = 0;
        for (text, hi) in lines {
            if let Some(l) = text.strip_suffix(':') {
                f.lines.push(Line::Label(l.into()));
                continue;
            }
            f.lines.push(Line::Inst {
                addr,
                inst: inst(text),
            });
            f.control.insert(addr, Control::decode(0, *hi));
            addr += 0x10;
        }
        f
    }

    /// Control words with the given stall, write barrier, read barrier and wait mask.
    fn ctl(stall: u64, write: u64, read: u64, wait: u64) -> u64 {
        (stall | 1 << 4 | write << 5 | read << 8 | wait << 11) << (CONTROL_SHIFT - 64)
    }

    #[test]
    fn a_wait_names_its_loads_and_a_missing_wait_is_a_hazard() {
        const NONE: u64 = 7;
        let f = function(&[
            ("LDG.E R0, desc[UR6][R6.64]", ctl(1, 2, NONE, 0)),
            ("LDS R3, [R9]", ctl(1, NONE, NONE, 0)),
            ("LDS R4, [R9+0x200]", ctl(1, 0, NONE, 0)),
            ("FADD R3, R3, R4", ctl(4, NONE, NONE, 0b1)),
            ("STS [R9], R0", ctl(1, NONE, 1, 0b100)),
            ("MOV R0, 0x1", ctl(4, NONE, NONE, 0)),
            ("EXIT", ctl(5, NONE, NONE, 0)),
        ]);
        let s = schedule(&f).unwrap();
        assert_eq!(
            s.describe(0x30).as_deref(),
            Some("waits on SB0 set by LDS at +0x0010, +0x0020"),
            "the LDS without a barrier rides on the next one's"
        );
        assert_eq!(
            s.describe(0x40).as_deref(),
            Some("waits on SB2 set by LDG.E at +0x0000")
        );
        // MOV overwrites R0 while STS may not have read it: no wait on SB1.
        assert_eq!(s.hazards.len(), 1, "{:?}", s.hazards);
        assert_eq!(
            (s.hazards[0].addr, s.hazards[0].reg, s.hazards[0].barrier),
            (0x50, Reg::R(0), Some(1))
        );
        assert!(s.idle_waits().is_empty());
        assert_eq!(stall_cycles(&f), 17);
    }

    #[test]
    fn loop_carried_and_branched_waits() {
        const NONE: u64 = 7;
        let f = function(&[
            ("@P0 BRA `(.L_x_1)", ctl(5, NONE, NONE, 0)),
            ("S2R R2, SR_TID.X", ctl(1, 3, NONE, 0)),
            (".L_x_1:", 0),
            ("IADD3 R2, R2, 0x1, RZ", ctl(4, NONE, NONE, 0b1000)),
            ("@P1 BRA `(.L_x_1)", ctl(5, NONE, NONE, 0)),
            ("EXIT", ctl(5, NONE, NONE, 0)),
        ]);
        let s = schedule(&f).unwrap();
        let w = &s.waits[&0x20][0];
        assert_eq!((w.barrier, w.every_path, w.producers.len()), (3, false, 1));
        assert!(s.hazards.is_empty(), "{:?}", s.hazards);
        let g = gaps(&f);
        assert_eq!(
            g.len(),
            0,
            "the IADD3's reader is itself across the back edge: {g:?}"
        );
    }

    #[test]
    fn an_untracked_result_is_outstanding_for_its_cycles() {
        const NONE: u64 = 7;
        // MUFU.SIN without a write barrier, read after 15 + 15 + `last` stall cycles.
        let listing = |last: u64| {
            function(&[
                ("MUFU.SIN R4, R5", ctl(15, NONE, NONE, 0)),
                ("FMUL R6, R7, R7", ctl(15, NONE, NONE, 0)),
                ("FMUL R9, R7, R7", ctl(last, NONE, NONE, 0)),
                ("FADD R8, R4, R4", ctl(1, NONE, NONE, 0)),
                ("EXIT", ctl(5, NONE, NONE, 0)),
            ])
        };
        let early = schedule(&listing(1)).unwrap();
        assert_eq!(early.hazards.len(), 1, "{:?}", early.hazards);
        assert_eq!(
            (early.hazards[0].addr, early.hazards[0].barrier),
            (0x30, None)
        );
        assert_eq!(UNTRACKED_CYCLES, 32);
        assert!(schedule(&listing(2)).unwrap().hazards.is_empty());
    }

    #[test]
    fn a_jump_table_reaches_every_target_it_lists() {
        const NONE: u64 = 7;
        let f = function(&[
            (
                "BRX R10 -0x20 (*\"BRANCH_TARGETS .L_x_1,.L_x_2\"*)",
                ctl(5, NONE, NONE, 0),
            ),
            (".L_x_1:", 0),
            ("MOV R0, 0x1", ctl(1, NONE, NONE, 0)),
            ("EXIT", ctl(5, NONE, NONE, 0)),
            (".L_x_2:", 0),
            ("MOV R0, 0x2", ctl(1, NONE, NONE, 0)),
            ("EXIT", ctl(5, NONE, NONE, 0)),
        ]);
        let s = schedule(&f).unwrap();
        assert!(s.unreachable.is_empty(), "{:x?}", s.unreachable);
    }
}
