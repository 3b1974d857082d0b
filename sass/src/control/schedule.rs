//! The scoreboards followed through a kernel's control-flow graph: which results each wait is
//! for, which uses no wait covers (hazards), and the stall cycles ptxas put between a
//! fixed-latency result and its reader.

use super::{Access, Control, Reg, access};
use crate::counts::Inst;
use crate::disasm::{self, Line};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Results that arrive after a variable time, so that the consumer must wait on a scoreboard:
/// loads from every memory, special registers, shuffles and warp reductions, the
/// transcendental unit and the float/integer conversions that share it on sm_90, the
/// population count (ptxas gives `POPC` a write barrier on sm_90: `layernorm_wide_f32`), the fence
/// that closes a group of asynchronous copies, the proxy fence before an mbarrier's
/// initialisation (`FENCE.VIEW.ASYNC`) and the mbarrier operations (`SYNCS.*`: exchange,
/// arrive, phase check).
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
            | "POPC"
            | "F2I"
            | "I2F"
            | "LDGDEPBAR"
            | "FENCE"
            | "SYNCS"
    )
}

/// Instructions queued to the memory pipe (the LSU, global, local and shared memory alike),
/// which reads their registers in issue order: a later one's result cannot land before an
/// earlier one has read its operands (ptxas lets a shared load overwrite the data registers
/// of a global store issued before it, not yet read: `rmsnorm_cluster_bf16` on llvm).
fn memory_queue(opcode: &str) -> bool {
    matches!(
        opcode.split('.').next().unwrap_or(""),
        "LDG"
            | "LDGSTS"
            | "STG"
            | "LDL"
            | "STL"
            | "LD"
            | "ST"
            | "ATOM"
            | "ATOMG"
            | "RED"
            | "REDG"
            | "LDS"
            | "LDSM"
            | "STS"
            | "ATOMS"
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

/// MUFU results return in order too (the SFU's queue): ptxas leaves one without a barrier of
/// its own where waiting on a later MUFU's covers it (`softmax_warp_bf16` on llvm: an `EX2`
/// untracked between two tracked ones, its result read after the wait on the later one's).
fn sfu_queue(opcode: &str) -> bool {
    opcode.split('.').next() == Some("MUFU")
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
    pub fn new(f: &'a disasm::Function) -> Option<Cfg<'a>> {
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

type Pending = (Tag, Reg, Dep, u32, Guard);

/// The guard predicate of an outstanding access's instruction and whether it was negated
/// (`@!P0`), while no instruction since has written that predicate: a later instruction under
/// the complementary guard never runs with it, so it cannot touch what it left outstanding.
type Guard = Option<(Reg, bool)>;

/// `inst`'s guard as a [`Guard`]: None unless a real predicate (not `PT`) guards it.
fn guard_of(inst: &Inst, a: &Access) -> Guard {
    let negated = inst.guard.as_deref().is_some_and(|g| g.starts_with('!'));
    a.guard.filter(|_| inst.predicated()).map(|p| (p, negated))
}

/// Follows every scoreboard through the graph (a forward data flow to a fixed point; a
/// register is outstanding after a join when it is on any incoming path).
pub fn schedule(f: &disasm::Function) -> Option<Schedule> {
    let cfg = Cfg::new(f)?;
    let opcode_at: BTreeMap<u32, &str> = cfg
        .insts
        .iter()
        .map(|(a, i, _)| (*a, i.opcode.as_str()))
        .collect();
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
        // This instruction's stall passes before the next issues, and a predicate it writes
        // no longer tells whose guard holds.
        let writes = &accesses[i].writes;
        out = out
            .into_iter()
            .filter_map(|(tag, reg, dep, from, guard)| {
                let tag = match tag {
                    Tag::Untracked(t) => {
                        let t = t.saturating_add(c.stall);
                        (t < UNTRACKED_CYCLES).then_some(Tag::Untracked(t))?
                    }
                    _ => tag,
                };
                let guard = guard.filter(|(g, _)| !writes.contains(g));
                Some((tag, reg, dep, from, guard))
            })
            .collect();
        issue(&mut out, (addr, inst, c), &accesses[i], &opcode_at);
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
        let guard = guard_of(inst, a);
        for &(tag, reg, dep, from, from_guard) in before {
            let released = matches!(tag, Tag::Barrier(b) if c.wait >> b & 1 == 1);
            let exclusive =
                matches!((from_guard, guard), (Some((p, n)), Some((q, m))) if p == q && n != m);
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
            if hit && !released && !exclusive && seen.insert((reg, from)) {
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
fn issue(
    out: &mut BTreeSet<Pending>,
    (addr, inst, c): (u32, &Inst, Control),
    a: &Access,
    opcode_at: &BTreeMap<u32, &str>,
) {
    if let Some(b) = c.write
        && in_order_queue(&inst.opcode)
    {
        let queued: Vec<Pending> = out.iter().filter(|p| p.0 == Tag::Queued).copied().collect();
        for p in queued {
            out.remove(&p);
            out.insert((Tag::Barrier(b), p.1, p.2, p.3, p.4));
        }
    }
    // A tracked MUFU's barrier covers the untracked MUFUs issued before it.
    if let Some(b) = c.write
        && sfu_queue(&inst.opcode)
    {
        let earlier: Vec<Pending> = out
            .iter()
            .filter(|p| {
                matches!(p.0, Tag::Untracked(_))
                    && opcode_at.get(&p.3).is_some_and(|o| sfu_queue(o))
            })
            .copied()
            .collect();
        for p in earlier {
            out.remove(&p);
            out.insert((Tag::Barrier(b), p.1, p.2, p.3, p.4));
        }
    }
    let guard = guard_of(inst, a);
    let tag = match c.write {
        Some(b) => Some(Tag::Barrier(b)),
        None if in_order_queue(&inst.opcode) => Some(Tag::Queued),
        None if variable_latency(&inst.opcode) => Some(Tag::Untracked(c.stall)),
        None => None,
    };
    if let Some(tag) = tag {
        for &r in &a.writes {
            out.insert((tag, r, Dep::Result, addr, guard));
        }
        if a.writes.is_empty() && c.write.is_some() {
            out.insert((tag, Reg::Done, Dep::Result, addr, guard));
        }
    }
    // Uniform registers are read at issue; the read barrier covers the vector ones, or, with
    // none (an mbarrier operation on uniform registers alone), the operation's acceptance.
    if let Some(b) = c.read {
        let mut vector = a.reads.iter().filter(|r| !r.uniform()).peekable();
        if vector.peek().is_none() {
            out.insert((Tag::Barrier(b), Reg::Done, Dep::Operands, addr, guard));
        }
        for &r in vector {
            out.insert((Tag::Barrier(b), r, Dep::Operands, addr, guard));
        }
    }
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
pub fn gaps(f: &disasm::Function) -> Vec<Gap> {
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
