//! The control bits `asm --sass` decodes from each instruction's encoding
//! (`sass::control`), held to what must be true if the decoding is right, on every
//! kernel of the three backends (llvm, nvvm, nvcc; the real PTX of `cargo xtask ptx`, never
//! skipped).
//!
//! - the fields: every instruction has them, the two spare bits are zero, stalls are 1–15
//!   (0 only in the padding after the last `EXIT`, which the listing drops), the reuse bits
//!   are the operands nvdisasm's own text marks `.reuse`;
//! - the scoreboards: only variable-latency instructions set a write barrier, only those that
//!   read registers late a read barrier; every result and every register still to be read is
//!   waited on before it is touched, on every path through the control-flow graph; every
//!   wait follows an instruction that set its scoreboard on every path to it, or on some (a
//!   branch around the producer, a loop's previous trip), or is the one documented repeat;
//! - the stalls: a fixed-latency result is read no sooner than the pipeline delivers it.

use catalog::Backend;
use sass::control::{self, Dep};
use sass::disasm::{self, Line};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Every kernel's SASS, per backend, assembled once for all the tests of this file.
static KERNELS: LazyLock<Vec<(Backend, Vec<disasm::Function>)>> = LazyLock::new(|| {
    let mut builds = studies::asm::load_builds(&[], Some(&Backend::ALL), false)
        .unwrap_or_else(|e| panic!("{e:#} (cargo xtask ptx builds the three PTX files)"));
    builds
        .iter_mut()
        .map(|b| {
            let backend = b.backend;
            let s = b.sass().unwrap_or_else(|e| panic!("{backend}: {e:#}"));
            (backend, s.functions.clone())
        })
        .collect()
});

fn kernels() -> impl Iterator<Item = (Backend, &'static disasm::Function)> {
    KERNELS
        .iter()
        .flat_map(|(b, fs)| fs.iter().map(move |f| (*b, f)))
}

fn insts(f: &disasm::Function) -> impl Iterator<Item = (u32, &sass::counts::Inst)> {
    f.lines.iter().filter_map(|l| match l {
        Line::Inst { addr, inst } => Some((*addr, inst)),
        _ => None,
    })
}

fn control(f: &disasm::Function, addr: u32) -> control::Control {
    *f.control
        .get(&addr)
        .unwrap_or_else(|| panic!("{} +0x{addr:04x}: no control bits", f.name))
}

#[test]
fn every_backend_and_kernel_is_read() {
    for backend in Backend::ALL {
        let n = kernels().filter(|(b, _)| *b == backend).count();
        assert!(n >= 19, "{backend}: {n} kernels");
    }
}

#[test]
fn every_instruction_has_control_bits_and_the_spare_bits_are_zero() {
    for (b, f) in kernels() {
        let n = insts(f).count();
        assert!(n > 0, "{b} {}", f.name);
        assert_eq!(
            f.control.len(),
            n,
            "{b} {}: one decoding per instruction",
            f.name
        );
        for (addr, inst) in insts(f) {
            let c = control(f, addr);
            assert_eq!(c.spare, 0, "{b} {} +0x{addr:04x} {inst}", f.name);
        }
    }
}

/// Every stall is 1 to 15 cycles but an `ERRBAR`'s: between the `MEMBAR.ALL.GPU` and the
/// `CGAERRBAR` of a cluster barrier's release (`barrier.cluster.arrive`), ptxas issues it
/// with 0.
#[test]
fn stalls_are_1_to_15_cycles() {
    for (b, f) in kernels() {
        for (addr, inst) in insts(f) {
            let s = control(f, addr).stall;
            if inst.opcode == "ERRBAR" {
                continue;
            }
            assert!(
                (1..=15).contains(&s),
                "{b} {} +0x{addr:04x} {inst}: S{s}",
                f.name
            );
        }
    }
}

/// nvdisasm prints `.reuse` from the same bits: as many operands marked as bits set.
#[test]
fn reuse_bits_are_the_operands_nvdisasm_marks_reuse() {
    let mut reused = 0;
    for (b, f) in kernels() {
        for (addr, inst) in insts(f) {
            let bits = control(f, addr).reuse.count_ones() as usize;
            let marked = inst.operands.matches(".reuse").count();
            assert_eq!(bits, marked, "{b} {} +0x{addr:04x} {inst}", f.name);
            reused += marked;
        }
    }
    assert!(reused > 100, "{reused} reused operands in all");
}

/// Fixed-latency arithmetic needs no scoreboard; loads, special registers and shuffles do.
/// Read barriers are for instructions that read their registers after issue: memory
/// accesses (local memory's spills and async copies too, and the L1 prefetch `CCTL`),
/// shuffles, the transcendental unit, barriers with register operands, and the population
/// count, whose operand ptxas may release by a read barrier too (rustc's `layernorm_pair_f32`).
#[test]
fn only_variable_latency_instructions_set_barriers() {
    let late_readers = [
        "LDG", "LDGSTS", "LDS", "LDC", "STG", "STS", "ST", "LD", "LDL", "STL", "RED", "REDG",
        "ATOM", "ATOMG", "ATOMS", "CCTL", "SHFL", "BAR", "MUFU", "F2I", "I2F", "SYNCS", "STAS",
        "POPC",
    ];
    let mut set = BTreeMap::new();
    for (b, f) in kernels() {
        for (addr, inst) in insts(f) {
            let c = control(f, addr);
            let base = inst.opcode.split('.').next().unwrap();
            if c.write.is_some() {
                assert!(
                    control::variable_latency(&inst.opcode),
                    "{b} {} +0x{addr:04x} {inst}: W{:?}",
                    f.name,
                    c.write
                );
                *set.entry(base.to_string()).or_insert(0) += 1;
            }
            if c.read.is_some() {
                assert!(
                    late_readers.contains(&base),
                    "{b} {} +0x{addr:04x} {inst}: R{:?}",
                    f.name,
                    c.read
                );
            }
        }
    }
    for op in ["LDG", "LDS", "S2R", "SHFL"] {
        assert!(
            set.contains_key(op),
            "no {op} sets a write barrier: {set:?}"
        );
    }
}

/// The central check: no register is read or overwritten while a result it receives, or a
/// read of it, may still be outstanding without a wait on the scoreboard tracking it. A
/// shared-memory load without a barrier of its own counts as covered by the next one's
/// (`control::schedule`: they return in order, and ptxas relies on it).
#[test]
fn every_variable_latency_result_is_waited_on_before_use() {
    let mut waits = 0;
    for (b, f) in kernels() {
        let s = control::schedule(f).expect("control bits");
        assert!(
            s.unreachable.is_empty(),
            "{b} {}: unreachable {:x?}",
            f.name,
            s.unreachable
        );
        let shown: Vec<String> = s
            .hazards
            .iter()
            .map(|h| {
                format!(
                    "+0x{:04x} touches {} while {} +0x{:04x} ({:?}) is outstanding on {:?}",
                    h.addr, h.reg, h.producer.opcode, h.producer.addr, h.producer.dep, h.barrier
                )
            })
            .collect();
        assert!(shown.is_empty(), "{b} {}:\n{}", f.name, shown.join("\n"));
        waits += s.waits.len();
        // Every consumed load result was waited on: the loads' scoreboards are named.
        for (addr, inst) in insts(f) {
            let load = inst.opcode.split('.').next() == Some("LDG");
            if load && control(f, addr).write.is_some() {
                let named = s.waits.values().flatten().any(|w| {
                    w.producers
                        .iter()
                        .any(|p| p.addr == addr && p.dep == Dep::Result)
                });
                assert!(
                    named,
                    "{b} {} +0x{addr:04x} {inst}: no wait names it",
                    f.name
                );
            }
        }
    }
    assert!(waits > 1000, "{waits} waits in all");
}

/// How a wait relates to the instructions that set its scoreboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Set on every path from the entry.
    EveryPath,
    /// A producer lies at or after the wait: it reaches the wait only through a back edge.
    LoopCarried,
    /// Every producer precedes the wait, and some path skips them all.
    BranchAround,
    /// Nothing set it since its last wait.
    Idle,
}

/// The first instruction of each block an indirect branch (`BRX`, a jump table) can reach.
fn jump_table_targets(f: &disasm::Function) -> std::collections::BTreeSet<u32> {
    let named: std::collections::BTreeSet<&str> = f
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::Inst { inst, .. } if inst.opcode.starts_with("BRX") => Some(inst),
            _ => None,
        })
        .flat_map(control::branch_targets)
        .collect();
    let mut out = std::collections::BTreeSet::new();
    let mut opened = false;
    for l in &f.lines {
        match l {
            Line::Label(name) => opened |= named.contains(name.as_str()),
            Line::Inst { addr, .. } if opened => {
                out.insert(*addr);
                opened = false;
            }
            _ => {}
        }
    }
    out
}

/// ptxas tracks a scoreboard's registers down the listing, not along the paths: the
/// instruction at `at` reads a register whose last writer before it in the listing set
/// scoreboard `barrier` (a read after that write), or overwrites one whose last access through
/// a scoreboard before it in the listing, a late read or a variable-latency write, was
/// through `barrier` (a write after that read or write). A wait there is for that access,
/// whatever happened since.
fn waits_again_for_its_register(
    f: &disasm::Function,
    list: &[(u32, &sass::counts::Inst)],
    at: usize,
    barrier: u8,
) -> bool {
    let here = control::access(list[at].1);
    let before = || list[..at].iter().rev();
    let after_write = here.reads.iter().any(|r| {
        before()
            .find(|(_, i)| control::access(i).writes.contains(r))
            .is_some_and(|(a, _)| control(f, *a).write == Some(barrier))
    });
    let overwrites = here.writes.iter().any(|r| {
        before()
            .map(|(a, i)| (control(f, *a), control::access(i)))
            .find_map(|(c, x)| {
                let read = c.read.filter(|_| x.reads.contains(r));
                read.or(c.write.filter(|_| x.writes.contains(r)))
            })
            == Some(barrier)
    });
    after_write || overwrites
}

/// Scoreboard `barrier` was set after its last wait, counting down the listing from the
/// kernel's head to `at` rather than along the paths: a call waits on every scoreboard ptxas
/// counts outstanding that way before it leaves for the callee.
fn set_down_the_listing(
    f: &disasm::Function,
    list: &[(u32, &sass::counts::Inst)],
    at: usize,
    barrier: u8,
) -> bool {
    let sets = |c: &control::Control| c.write == Some(barrier) || c.read == Some(barrier);
    list[..at]
        .iter()
        .rev()
        .map(|(a, _)| control(f, *a))
        .find(|c| sets(c) || c.wait >> barrier & 1 == 1)
        .is_some_and(|c| sets(&c))
}

/// Every wait follows an instruction that set its scoreboard: on every path, or on some (the
/// two documented kinds); the only waits that follow none are `ENDCOLLECTIVE`s repeating the
/// wait of the `WARPSYNC.COLLECTIVE` that opened their block (nvvm's collective barrier
/// paths; nothing in between sets that scoreboard), the `WARPSYNC.COLLECTIVE`s that open such
/// a block behind a `BRA.DIV`, the first instruction of a jump table's target repeating a
/// wait the `BRX` already made (ptxas carries no scoreboard across an indirect branch or into
/// its divergent-warp fallback: it waits again), and a wait made again since the last
/// instruction that set its scoreboard (a few instructions into the head of the row-wise
/// kernels' element-by-element loop on nvvm), and a wait for the producer of a register the
/// instruction reads, made again at a later use though every path since waited on that
/// scoreboard (rust-cuda's RMSNorm cluster bf16: the count of warps, loaded by an `LDC` at the
/// kernel's head, is compared after each block merge, and each comparison waits on the `LDC`'s
/// scoreboard, though the first comparison's wait already cleared it on every path: ptxas
/// tracks the register's producer, not the paths; with nothing outstanding the wait holds
/// nothing up), or for the last reader of a register it overwrites (rust-cuda's RMSNorm
/// pair f32: a row load into the register an `STL` at the kernel's head read on that
/// scoreboard, every path since through a wait on it), and a call's wait on a scoreboard set
/// since its last wait down the listing, though no path to the call leaves it outstanding
/// (rust-cuda's RMSNorm pair bf16: the call of the square root's slow path waits on the
/// scoreboard of a store in another branch above it).
#[test]
fn every_wait_follows_an_instruction_that_set_its_scoreboard() {
    let mut kinds: BTreeMap<(Backend, Kind), usize> = BTreeMap::new();
    for (b, f) in kernels() {
        let s = control::schedule(f).expect("control bits");
        let list: Vec<(u32, &sass::counts::Inst)> = insts(f).collect();
        let targets = jump_table_targets(f);
        for (addr, ws) in &s.waits {
            for w in ws {
                let kind = if w.producers.is_empty() {
                    Kind::Idle
                } else if w.every_path {
                    Kind::EveryPath
                } else if w.producers.iter().any(|p| p.addr >= *addr) {
                    Kind::LoopCarried
                } else {
                    Kind::BranchAround
                };
                *kinds.entry((b, kind)).or_default() += 1;
                if kind != Kind::Idle || targets.contains(addr) {
                    continue;
                }
                let at = list.iter().position(|(a, _)| a == addr).unwrap();
                let (_, inst) = list[at];
                if inst.opcode.starts_with("WARPSYNC.COLLECTIVE") {
                    continue;
                }
                // A wait made again since the last instruction that set the scoreboard.
                let repeated = list[..at]
                    .iter()
                    .rev()
                    .map(|(a, _)| control(f, *a))
                    .take_while(|c| c.write != Some(w.barrier) && c.read != Some(w.barrier))
                    .any(|c| c.wait >> w.barrier & 1 == 1);
                if repeated {
                    continue;
                }
                if waits_again_for_its_register(f, &list, at, w.barrier) {
                    continue;
                }
                if inst.opcode.starts_with("CALL") && set_down_the_listing(f, &list, at, w.barrier)
                {
                    continue;
                }
                assert_eq!(
                    inst.opcode, "ENDCOLLECTIVE",
                    "{b} {} +0x{addr:04x}: idle wait on SB{}",
                    f.name, w.barrier
                );
                let (open, opener) = list[..at]
                    .iter()
                    .rev()
                    .find(|(_, i)| i.opcode.starts_with("WARPSYNC.COLLECTIVE"))
                    .expect("a collective block opens before ENDCOLLECTIVE");
                assert!(
                    control(f, *open).wait >> w.barrier & 1 == 1,
                    "{b} {} +0x{addr:04x}: {opener} at +0x{open:04x} does not wait on SB{}",
                    f.name,
                    w.barrier
                );
            }
        }
    }
    println!("waits by kind: {kinds:?}");
    assert!(
        kinds
            .get(&(Backend::Llvm, Kind::EveryPath))
            .is_some_and(|n| *n > 300)
    );
}

/// The stall counts are cycles: a fixed-latency result is read no sooner than four cycles
/// after its producer issued (the dependent-issue latency of Volta and later), two for the
/// uniform datapath and for the second word of a 64-bit pair, and a predicate becomes a
/// guard (`@P0`) no sooner than thirteen; a uniform predicate sooner (`@UP0`: 11–12 cycles
/// after a `UISETP`, 5 after a `VOTEU` in the cluster kernels' mbarrier code, the fewest seen).
#[test]
fn fixed_latency_results_are_read_when_the_pipeline_has_them() {
    let mut n = 0;
    let mut min: BTreeMap<&str, u32> = BTreeMap::new();
    for (b, f) in kernels() {
        for g in control::gaps(f) {
            let (class, floor) = if g.guard && g.uniform {
                ("uniform guard", 5)
            } else if g.guard {
                ("guard", 13)
            } else if g.uniform {
                ("uniform", 2)
            } else if g.wide {
                ("wide", 2)
            } else {
                ("vector", 4)
            };
            assert!(
                g.cycles >= floor,
                "{b} {}: {} at +0x{:04x} read by {} at +0x{:04x} after {} cycles ({class})",
                f.name,
                g.producer_opcode,
                g.producer,
                g.consumer_opcode,
                g.consumer,
                g.cycles
            );
            let m = min.entry(class).or_insert(u32::MAX);
            *m = (*m).min(g.cycles);
            n += 1;
        }
    }
    println!("{n} fixed-latency results read; fewest cycles by class: {min:?}");
    assert!(n > 2000, "{n}");
    assert_eq!(
        min.get("vector"),
        Some(&4),
        "the vector floor is met exactly somewhere"
    );
}

/// The per-kernel total `--stats` reports is the sum of the decoded stalls.
#[test]
fn stall_cycles_add_up() {
    for (b, f) in kernels() {
        let sum: u32 = insts(f).map(|(a, _)| u32::from(control(f, a).stall)).sum();
        assert_eq!(control::stall_cycles(f), sum, "{b} {}", f.name);
        assert!(sum as usize >= insts(f).count(), "{b} {}", f.name);
    }
}

/// The yield bit is inverted (clear: the scheduler may switch warps, as CuAssembler and maxas
/// read it): read that way, no instruction that stalls one cycle yields, and every one that
/// stalls twelve or more does, where switching warps is worth it. Read the other way round,
/// every back-to-back instruction would yield and no long stall would.
#[test]
fn the_yield_bit_reads_inverted() {
    let (mut short, mut long) = (0, 0);
    for (b, f) in kernels() {
        for (addr, inst) in insts(f) {
            let c = control(f, addr);
            if c.stall == 1 {
                assert!(!c.yields, "{b} {} +0x{addr:04x} {inst}", f.name);
                short += 1;
            } else if c.stall >= 12 {
                assert!(c.yields, "{b} {} +0x{addr:04x} {inst}", f.name);
                long += 1;
            }
        }
    }
    assert!(
        short > 1000 && long > 100,
        "{short} one-cycle, {long} long stalls"
    );
}
