//! Which registers an SASS instruction reads and writes, from its opcode and operands: the
//! register model [`super::schedule`] follows from producers to consumers.

use crate::counts::Inst;
use serde::Serialize;
use std::fmt;

/// A register an instruction reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Reg {
    R(u8),
    Ur(u8),
    P(u8),
    Up(u8),
    /// No register: the completion of an instruction that sets a scoreboard and writes none
    /// (a fence, an mbarrier's initialisation), which a later wait on that scoreboard is for.
    Done,
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
            Reg::Done => write!(f, "completion"),
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
    "STAS",
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
        // A vote's last operand is the predicate it votes on (`VOTEU.ALL UP1, P0`).
        if matches!(base, "VOTE" | "VOTEU") {
            dests = dests.min(operands.len() - 1);
        }
    }
    let w = width(&inst.opcode);
    let wide = inst.opcode.split('.').any(|m| m == "WIDE");
    let store = matches!(base, "ST" | "STS" | "STG" | "STL" | "STAS");
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
