//! Instruction counts by class, shared by the PTX and the SASS readers.

use serde::Serialize;
use std::collections::BTreeMap;

/// One instruction: `@!P0 LDS R4, [R3+0x4]` → guard `!P0`, opcode `LDS`, operands `R4, [R3+0x4]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Inst {
    pub guard: Option<String>,
    pub opcode: String,
    pub operands: String,
}

impl Inst {
    /// Predicated on a real predicate (`@P0`, `@!%p1`; not the always-true `@PT`).
    pub fn predicated(&self) -> bool {
        self.guard
            .as_deref()
            .is_some_and(|g| !matches!(g.trim_start_matches('!'), "PT" | "UPT"))
    }
}

impl std::fmt::Display for Inst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "@{g} ")?;
        }
        write!(f, "{}", self.opcode)?;
        if !self.operands.is_empty() {
            write!(f, " {}", self.operands)?;
        }
        Ok(())
    }
}

/// The classes the counts distinguish: every instruction falls in exactly one, so the counts
/// are the kernel's instruction mix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InstClass {
    Shared {
        load: bool,
    },
    /// `bits`: access width, 32 for `LDG.E`, 128 for `LDG.E.128` / `ld.global.v4.f32`.
    Global {
        load: bool,
        bits: u32,
    },
    /// Thread-local memory (spills, stack arrays).
    Local {
        load: bool,
    },
    /// Generic addressing: the hardware decides the space at run time.
    Generic {
        load: bool,
    },
    Barrier,
    Shuffle,
    /// Atomics and reductions (`atom`, `red`; `ATOMG`, `REDG`).
    Atomic,
    Branch,
    /// Integer and bitwise arithmetic, integer compares, address arithmetic (`IMAD`, `LEA`,
    /// `LOP3`, `ISETP`; `add.s32`, `setp.lt.u32`).
    Int,
    /// Floating-point arithmetic and compares (`FADD`, `FFMA`, `FSETP`, `MUFU`; `add.f32`).
    Float,
    /// Tensor-core matrix multiply-accumulate: a warp's (`HMMA`, `IMMA`; `mma`) or a warpgroup's
    /// (`HGMMA`, sm_90's `wgmma.mma_async`).
    Tensor,
    /// Conversions between number formats and address spaces (`I2F`, `F2I`; `cvt`, `cvta`).
    Convert,
    /// Register copies and selects (`MOV`, `IMAD.MOV`, `SEL`; `mov`, `selp`).
    Move,
    /// Reads of the constant bank, kernel parameters and special registers (`LDC`, `ULDC`,
    /// `S2R`, `S2UR`, `CS2R`; `ld.param`, `ld.const`).
    Constant,
    /// Predicate logic (`PLOP3`, `P2R`; `and.pred`).
    Predicate,
    /// Control flow other than branches: exit, calls, convergence barriers, `NOP`
    /// (`EXIT`, `BSSY`, `BSYNC`, `WARPSYNC`; `ret`, `exit`).
    Control,
    /// Warp-wide vote, match, reduce (`VOTE`, `MATCH`, `REDUX`; `vote`, `bar.warp.sync`).
    Warp,
    /// Memory fences (`MEMBAR`, `FENCE`, `CCTL`; `membar`, `fence`).
    Fence,
    Other,
}

/// Counts for one kernel's PTX or SASS.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Counts {
    pub total: usize,
    pub shared_ld: usize,
    /// Shared loads under a predicate guard (the chapter's `@!P0 LDS`).
    pub shared_ld_predicated: usize,
    pub shared_st: usize,
    /// Global loads by width in bits.
    pub global_ld: BTreeMap<u32, usize>,
    /// Global stores by width in bits.
    pub global_st: BTreeMap<u32, usize>,
    pub local_ld: usize,
    pub local_st: usize,
    pub generic_ld: usize,
    pub generic_st: usize,
    pub barriers: usize,
    pub shuffles: usize,
    pub atomics: usize,
    pub branches: usize,
    /// Integer arithmetic; the fields from here to `other` are the classes of
    /// [`InstClass`] that are not memory, synchronisation or branches.
    pub int: usize,
    pub float: usize,
    pub tensor: usize,
    pub convert: usize,
    pub moves: usize,
    pub constants: usize,
    pub predicate_logic: usize,
    pub control: usize,
    pub warp: usize,
    pub fences: usize,
    pub other: usize,
    /// Instructions under a predicate guard.
    pub predicated: usize,
    pub loops: Loops,
}

impl Counts {
    pub fn add(&mut self, inst: &Inst, class: InstClass) {
        self.total += 1;
        if inst.predicated() {
            self.predicated += 1;
        }
        let bump = |n: &mut usize| *n += 1;
        match class {
            InstClass::Shared { load: true } => {
                self.shared_ld += 1;
                if inst.predicated() {
                    self.shared_ld_predicated += 1;
                }
            }
            InstClass::Shared { load: false } => bump(&mut self.shared_st),
            InstClass::Global { load: true, bits } => *self.global_ld.entry(bits).or_default() += 1,
            InstClass::Global { load: false, bits } => {
                *self.global_st.entry(bits).or_default() += 1
            }
            InstClass::Local { load: true } => bump(&mut self.local_ld),
            InstClass::Local { load: false } => bump(&mut self.local_st),
            InstClass::Generic { load: true } => bump(&mut self.generic_ld),
            InstClass::Generic { load: false } => bump(&mut self.generic_st),
            InstClass::Barrier => bump(&mut self.barriers),
            InstClass::Shuffle => bump(&mut self.shuffles),
            InstClass::Atomic => bump(&mut self.atomics),
            InstClass::Branch => bump(&mut self.branches),
            InstClass::Int => bump(&mut self.int),
            InstClass::Float => bump(&mut self.float),
            InstClass::Tensor => bump(&mut self.tensor),
            InstClass::Convert => bump(&mut self.convert),
            InstClass::Move => bump(&mut self.moves),
            InstClass::Constant => bump(&mut self.constants),
            InstClass::Predicate => bump(&mut self.predicate_logic),
            InstClass::Control => bump(&mut self.control),
            InstClass::Warp => bump(&mut self.warp),
            InstClass::Fence => bump(&mut self.fences),
            InstClass::Other => bump(&mut self.other),
        }
    }

    /// The classes that are not memory, synchronisation or branches, with their short names
    /// (the `--stats` mix table's columns).
    pub fn remaining_classes(&self) -> [(&'static str, usize); 11] {
        [
            ("int", self.int),
            ("fp", self.float),
            ("tensor", self.tensor),
            ("cvt", self.convert),
            ("mov", self.moves),
            ("const/SR", self.constants),
            ("pred", self.predicate_logic),
            ("ctrl", self.control),
            ("vote", self.warp),
            ("fence", self.fences),
            ("other", self.other),
        ]
    }

    /// Every class with its count, in SASS names (`LDG.128`, `LDS`, `BAR`, `int` …), zero
    /// counts left out; the counts add up to `total`.
    pub fn mix(&self) -> Vec<(String, usize)> {
        let mut m: Vec<(String, usize)> = Vec::new();
        m.extend(self.global_ld.iter().map(|(b, n)| (format!("LDG.{b}"), *n)));
        m.extend(self.global_st.iter().map(|(b, n)| (format!("STG.{b}"), *n)));
        for (name, n) in [
            ("LDS", self.shared_ld),
            ("STS", self.shared_st),
            ("LDL", self.local_ld),
            ("STL", self.local_st),
            ("LD", self.generic_ld),
            ("ST", self.generic_st),
            ("ATOM/RED", self.atomics),
            ("BAR", self.barriers),
            ("SHFL", self.shuffles),
            ("BRA", self.branches),
        ] {
            m.push((name.to_string(), n));
        }
        m.extend(self.remaining_classes().map(|(k, n)| (k.to_string(), n)));
        m.retain(|(_, n)| *n > 0);
        m
    }

    /// Named scalar metrics, in table order, for diffs and checks.
    pub fn metrics(&self) -> Vec<(&'static str, String)> {
        vec![
            ("instructions", self.total.to_string()),
            ("shared loads", self.shared_ld.to_string()),
            (
                "predicated shared loads",
                self.shared_ld_predicated.to_string(),
            ),
            ("shared stores", self.shared_st.to_string()),
            ("global loads", widths(&self.global_ld)),
            ("global stores", widths(&self.global_st)),
            (
                "local loads+stores",
                (self.local_ld + self.local_st).to_string(),
            ),
            (
                "generic loads+stores",
                (self.generic_ld + self.generic_st).to_string(),
            ),
            ("barriers", self.barriers.to_string()),
            ("shuffles", self.shuffles.to_string()),
            ("atomics", self.atomics.to_string()),
            ("branches", self.branches.to_string()),
            ("int arithmetic", self.int.to_string()),
            ("fp arithmetic", self.float.to_string()),
            ("tensor-core MMA", self.tensor.to_string()),
            ("conversions", self.convert.to_string()),
            ("moves", self.moves.to_string()),
            ("constant/special reads", self.constants.to_string()),
            ("predicate logic", self.predicate_logic.to_string()),
            ("other control", self.control.to_string()),
            ("warp vote/match", self.warp.to_string()),
            ("fences", self.fences.to_string()),
            ("other", self.other.to_string()),
            ("predicated", self.predicated.to_string()),
            ("loops", self.loops.to_string()),
        ]
    }
}

/// `{32: 2, 128: 1}` → `2×32b 1×128b`; empty → `0`.
pub fn widths(m: &BTreeMap<u32, usize>) -> String {
    if m.is_empty() {
        return "0".into();
    }
    m.iter()
        .map(|(bits, n)| format!("{n}×{bits}b"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Backward branches (loops that survived unrolling), and how many of them contain a barrier
/// or a shuffle: those would be reduction-tree or warp-sum loops the compiler did not unroll.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize)]
pub struct Loops {
    pub count: usize,
    pub with_sync: usize,
}

impl std::fmt::Display for Loops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.with_sync {
            0 => write!(f, "{}", self.count),
            n => write!(f, "{} ({n} with sync)", self.count),
        }
    }
}

/// A function body as the loop finder sees it.
pub enum Item<'a> {
    Inst(&'a Inst),
    Label(&'a str),
}

impl Loops {
    /// `target` gives a branch's label; `is_sync` says whether an opcode is a barrier/shuffle.
    pub fn find(
        items: &[Item<'_>],
        target: impl Fn(&Inst) -> Option<&str>,
        is_sync: impl Fn(&str) -> bool,
    ) -> Loops {
        let labels: BTreeMap<&str, usize> = items
            .iter()
            .enumerate()
            .filter_map(|(i, it)| match it {
                Item::Label(l) => Some((*l, i)),
                Item::Inst(_) => None,
            })
            .collect();
        let mut loops = Loops::default();
        for (i, it) in items.iter().enumerate() {
            let Item::Inst(inst) = it else { continue };
            let Some(&start) = target(inst).and_then(|t| labels.get(t)) else {
                continue;
            };
            if start > i {
                continue; // a forward branch
            }
            let body: Vec<&Inst> = items[start..i]
                .iter()
                .filter_map(|it| match it {
                    Item::Inst(x) => Some(*x),
                    Item::Label(_) => None,
                })
                .collect();
            // An empty body is the `BRA` to itself that ends SASS listings.
            if body.is_empty() {
                continue;
            }
            loops.count += 1;
            if body.iter().any(|x| is_sync(&x.opcode)) {
                loops.with_sync += 1;
            }
        }
        loops
    }
}
