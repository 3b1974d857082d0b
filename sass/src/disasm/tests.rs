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

/// The same of a cubin no kernel of which uses a predicate: nvdisasm prints the kinds used.
const LIFE_WITHOUT_PREDICATES: &str = "
                                                                                            // | GPR   | UGPR   |
                                                                                            // |   #   |   #    |
.text.bump:                                                                                 // |       |        |
        /*0000*/                   LDC R1, c[0x0][0x28] ;                                   // |   1   |        |
        /*0030*/                   ULDC.64 UR4, c[0x0][0x208] ;                             // |   4   |   2    |
        /*0050*/                   EXIT ;                                                   // |   1   |        |
";

#[test]
fn reads_life_ranges_by_the_kinds_the_header_names() {
    let r = parse_life_ranges(LIFE_WITHOUT_PREDICATES);
    let bump = &r["bump"];
    assert_eq!(bump.len(), 3);
    assert_eq!(
        bump[&0x30],
        Live {
            gpr: 4,
            pred: 0,
            ugpr: 2,
            upred: 0
        }
    );
}

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
        Some(Peak {
            gpr: 15,
            addr: 0x400,
            pred: 1,
            ugpr: 2,
            upred: 1
        })
    );
    // No life ranges (nvdisasm could not count them): no peak, not a peak of 0.
    let without = Function {
        live: BTreeMap::new(),
        ..f
    };
    assert_eq!(without.peak(), None);
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
        ("HMMA.16816.F32.BF16", InstClass::Tensor),
        ("HGMMA.64x128x16.F32.BF16", InstClass::Tensor),
        ("WARPGROUP.ARRIVE", InstClass::Control),
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

#[test]
fn sm_90a_ptx_is_assembled_for_sm_90a_and_the_rest_for_sm_90() {
    let t = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(arch(&t(&["sm_90a"])), "sm_90a");
    assert_eq!(arch(&t(&["sm_90a", "debug"])), "sm_90a");
    assert_eq!(arch(&t(&["sm_90"])), ARCH);
    assert_eq!(arch(&t(&["sm_80"])), ARCH);
    assert_eq!(arch(&[]), ARCH);
}
