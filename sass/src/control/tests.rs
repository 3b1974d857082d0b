use super::schedule::UNTRACKED_CYCLES;
use super::*;
use crate::bits::CONTROL_SHIFT;
use crate::counts::Inst;
use crate::disasm::{self, Line};
use std::collections::BTreeMap;

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
    // A vote writes its first operand and reads the predicate it votes on.
    let a = access(&inst("VOTEU.ALL UP1, P0"));
    assert_eq!((a.writes, a.reads), (vec![Reg::Up(1)], vec![Reg::P(0)]));
    // An asynchronous store to another block's shared memory writes no register.
    let a = access(&inst("STAS [R2.64], R11"));
    assert!(a.writes.is_empty());
    assert_eq!(a.reads, [Reg::R(2), Reg::R(3), Reg::R(11)]);
}

/// A fence and an mbarrier operation on uniform registers write no register, yet set a
/// scoreboard that the next instruction waits on: that wait is for their completion, not idle.
#[test]
fn a_wait_on_a_fence_or_an_mbarrier_operation_is_for_its_completion() {
    const NONE: u64 = 7;
    let f = function(&[
        ("FENCE.VIEW.ASYNC.S", ctl(1, 0, NONE, 0)),
        ("SYNCS.EXCH.64 URZ, [UR10], UR8", ctl(1, NONE, 1, 0b1)),
        ("BSYNC B0", ctl(1, NONE, NONE, 0b10)),
        ("EXIT", ctl(5, NONE, NONE, 0)),
    ]);
    let s = schedule(&f).unwrap();
    assert!(s.idle_waits().is_empty(), "{:?}", s.idle_waits());
    assert_eq!(
        s.describe(0x10).as_deref(),
        Some("waits on SB0 set by FENCE.VIEW.ASYNC.S at +0x0000")
    );
    assert!(s.hazards.is_empty(), "{:?}", s.hazards);
    assert!(variable_latency("SYNCS.PHASECHK.TRANS64.TRYWAIT"));
}

fn function(lines: &[(&str, u64)]) -> disasm::Function {
    let mut f = disasm::Function {
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

/// A store's data registers, not yet read, may be overwritten by a load queued behind it in
/// the memory pipe, shared or global, but not by an arithmetic instruction.
#[test]
fn a_load_queued_behind_a_store_may_overwrite_its_unread_data() {
    const NONE: u64 = 7;
    let f = function(&[
        ("STG.E.128 desc[UR24][R16.64], R12", ctl(1, NONE, 1, 0)),
        ("LDS.128 R12, [R18+0x610]", ctl(1, 2, NONE, 0)),
        (
            "STG.E.128 desc[UR24][R16.64+0x10], R12",
            ctl(1, NONE, 1, 0b100),
        ),
        ("MOV R15, 0x1", ctl(4, NONE, NONE, 0)),
        ("EXIT", ctl(5, NONE, NONE, 0)),
    ]);
    let s = schedule(&f).unwrap();
    // Only the MOV, of R15, which both stores may not yet have read.
    let hazards: Vec<_> = s
        .hazards
        .iter()
        .map(|h| (h.addr, h.reg, h.producer.addr, h.barrier))
        .collect();
    assert_eq!(
        hazards,
        [
            (0x30, Reg::R(15), 0x0, Some(1)),
            (0x30, Reg::R(15), 0x20, Some(1))
        ]
    );
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

#[test]
fn a_called_slow_path_is_reached_and_returns() {
    const NONE: u64 = 7;
    let f = function(&[
        (
            "CALL.REL.NOINC `($__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath)",
            ctl(5, NONE, NONE, 0),
        ),
        ("EXIT", ctl(5, NONE, NONE, 0)),
        ("$__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath:", 0),
        ("MOV R0, 0x1", ctl(1, NONE, NONE, 0)),
        ("RET.REL.NODEC R20 `(k)", ctl(5, NONE, NONE, 0)),
    ]);
    let s = schedule(&f).unwrap();
    assert!(s.unreachable.is_empty(), "{:x?}", s.unreachable);
}

#[test]
fn complementary_guards_do_not_conflict_until_the_predicate_changes() {
    const NONE: u64 = 7;
    // `@!P0 MUFU` reads R24 later (read barrier SB1); `@P0 HADD2.F32` overwrites R24 without
    // waiting on it: only one of the two runs, unless P0 is written in between.
    let listing = |between: &str, second: &str| {
        function(&[
            ("@!P0 MUFU.EX2 R17, R24", ctl(1, 0, 1, 0)),
            (between, ctl(1, NONE, NONE, 0)),
            (second, ctl(1, NONE, NONE, 0)),
            ("FADD R2, R17, R17", ctl(4, NONE, NONE, 0b1)),
            ("EXIT", ctl(5, NONE, NONE, 0)),
        ])
    };
    let hazards = |between, second| schedule(&listing(between, second)).unwrap().hazards;
    let write = "@P0 HADD2.F32 R24, -RZ, R6.H1_H1";
    assert!(hazards("NOP", write).is_empty());
    let rewritten = hazards("ISETP.NE.AND P0, PT, R3, RZ, PT", write);
    assert_eq!(rewritten.len(), 1, "{rewritten:?}");
    assert_eq!((rewritten[0].addr, rewritten[0].reg), (0x20, Reg::R(24)));
    let same = hazards("NOP", "@!P0 HADD2.F32 R24, -RZ, R6.H1_H1");
    assert_eq!(same.len(), 1, "{same:?}");
    assert_eq!(hazards("NOP", "HADD2.F32 R24, -RZ, R6.H1_H1").len(), 1);
}
