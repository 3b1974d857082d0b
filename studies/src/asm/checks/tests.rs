use super::*;
use sass::counts::Counts;
use sass::disasm;

fn stats(
    kernel: &str,
    global_ld_32: usize,
    barriers: usize,
    shared_st: usize,
    shfl: usize,
) -> KernelStats {
    let counts = Counts {
        global_ld: [(32, global_ld_32)].into(),
        barriers,
        shared_st,
        shuffles: shfl,
        ..Counts::default()
    };
    KernelStats {
        kernel: kernel.into(),
        backend: Backend::Llvm,
        file: None,
        ptx: counts.clone(),
        sass: counts,
        resources: Default::default(),
        live_peak: Default::default(),
        unrolled: true,
        stall_cycles: 0,
    }
}

#[test]
fn v5_must_be_v4_plus_shuffles() {
    let v4 = stats("reduce_v4_f32", 8, 9, 9, 0);
    assert_eq!(
        v5_against_v4(&v4, &stats("reduce_v5_f32", 8, 3, 3, 5)),
        Vec::<String>::new()
    );
    // One element per thread: not v4's load.
    let v3_based = v5_against_v4(&v4, &stats("reduce_v5_f32", 1, 3, 3, 5));
    assert_eq!(v3_based.len(), 1);
    assert!(
        v3_based[0].contains("v5 loads 1×32b, v4 8×32b"),
        "{v3_based:?}"
    );
    // v4's whole tree kept.
    assert_eq!(
        v5_against_v4(&v4, &stats("reduce_v5_f32", 8, 9, 9, 5)).len(),
        1
    );
    // No warp sum, or a second one.
    for shfl in [0, 10] {
        let f = v5_against_v4(&v4, &stats("reduce_v5_f32", 8, 3, 3, shfl));
        assert_eq!(f, [format!("v5 {shfl} shfl.sync in the PTX, expected 5")]);
    }
}

/// A kernel that makes its shared array's address generic and stores through it, and one
/// that uses `st.shared` as it should.
const GENERIC_SHARED: &str = r#"
.version 7.8
.target sm_90
.address_size 64
.extern .shared .align 4 .b8 smem[];
.visible .entry bad(
	.param .u64 bad_param_0
)
{
	ld.param.u64 	%rd1, [bad_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.global.f32 	%f1, [%rd2];
	mov.u64 	%rd3, smem;
	cvta.shared.u64 	%rd4, %rd3;
	mul.wide.u32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd4, %rd5;
	st.f32 	[%rd6], %f1;
	bar.sync 	0;
	ld.f32 	%f2, [smem+4];
	ld.f32 	%f3, [%rd1];
	atom.add.f32 	%f4, [%rd6], %f2;
	ret;
}
.visible .entry good(
	.param .u64 good_param_0
)
{
	ld.param.u64 	%rd1, [good_param_0];
	mov.u64 	%rd3, smem;
	st.shared.f32 	[%rd3], %f1;
	ld.f32 	%f3, [%rd1];
	ret;
}
"#;

#[test]
fn generic_access_to_shared_memory_fails() {
    let m = ptx::Module::parse(GENERIC_SHARED);
    assert_eq!(m.shared, ["smem"]);
    let bad = generic_shared_accesses(m.entry("bad").unwrap(), &m.shared);
    assert_eq!(
        bad,
        [
            "st.f32 [%rd6], %f1",
            "ld.f32 %f2, [smem+4]",
            "atom.add.f32 %f4, [%rd6], %f2"
        ],
        "the global pointer's generic ld.f32 [%rd1] is not shared"
    );
    assert!(generic_shared_accesses(m.entry("good").unwrap(), &m.shared).is_empty());

    // The check: the PTX findings, and the SASS's generic ST in a kernel using shared memory.
    let listing = "
.text.bad:
    /*0000*/                   ST.E desc[UR4][R2.64], R5 ;
    /*0010*/                   EXIT ;
.text.good:
    /*0000*/                   STS [R3], R5 ;
    /*0010*/                   LD.E R6, desc[UR4][R4.64] ;
    /*0020*/                   EXIT ;
";
    let sass = Sass {
        functions: disasm::parse_disassembly(listing),
        resources: BTreeMap::new(),
        live_missing: None,
    };
    let c = shared_through_generic(Backend::Nvvm, &m, &sass);
    assert!(!c.ok);
    assert!(
        c.detail.contains("bad: PTX `st.f32 [%rd6], %f1`"),
        "{}",
        c.detail
    );
    assert!(
        c.detail
            .contains("bad: uses shared memory and has 1 generic SASS access(es): ST.E"),
        "{}",
        c.detail
    );
    // good's SASS LD is generic and the kernel uses shared memory: the SASS rule flags it.
    assert!(
        c.detail.contains("good: uses shared memory"),
        "{}",
        c.detail
    );

    // Without the generic accesses, it passes.
    let fixed = GENERIC_SHARED
        .replace("st.f32 \t[%rd6]", "st.shared.f32 \t[%rd3]")
        .replace("ld.f32 \t%f2, [smem+4]", "ld.shared.f32 \t%f2, [smem+4]")
        .replace("atom.add.f32", "atom.shared.add.f32");
    let m = ptx::Module::parse(&fixed);
    let listing = listing
        .replace("ST.E desc[UR4][R2.64], R5", "STS [R2], R5")
        .replace("LD.E R6, desc[UR4][R4.64]", "LDG.E R6, desc[UR4][R4.64]");
    let sass = Sass {
        functions: disasm::parse_disassembly(&listing),
        resources: BTreeMap::new(),
        live_missing: None,
    };
    let c = shared_through_generic(Backend::Nvvm, &m, &sass);
    assert!(c.ok, "{}", c.detail);
    assert!(
        c.detail.starts_with("2 kernels use shared memory"),
        "{}",
        c.detail
    );
}

/// Another block's shared memory (a cluster's distributed shared memory) is reached through a
/// generic address `mapa` gave, or `ld.shared::cluster`: ptxas makes each a generic LD, which
/// the check allows one for one (and no more).
#[test]
fn distributed_shared_memory_is_not_a_generic_shared_access() {
    let text = r#"
.version 7.8
.target sm_90
.address_size 64
.extern .shared .align 4 .b8 smem[];
.visible .entry cluster(
	.param .u64 cluster_param_0
)
{
	mov.u64 	%rd3, smem;
	st.shared.f32 	[%rd3], %f1;
	cvta.shared.u64 	%rd4, %rd3;
	mapa.u64 	%rd5, %rd4, %r1;
	ld.f32 	%f2, [%rd5+4];
	mapa.shared::cluster.u32 	%r3, %r2, %r1;
	ld.shared::cluster.u32 	%r4, [%r3];
	ret;
}
"#;
    let m = ptx::Module::parse(text);
    assert!(generic_shared_accesses(m.entry("cluster").unwrap(), &m.shared).is_empty());
    let sass = |loads: usize| Sass {
        functions: disasm::parse_disassembly(&format!(
            ".text.cluster:\n    /*0000*/                   STS [R3], R5 ;\n{}    /*0100*/                   EXIT ;\n",
            "    /*0010*/                   LD.E R6, desc[UR4][R4.64] ;\n".repeat(loads)
        )),
        resources: BTreeMap::new(),
        live_missing: None,
    };
    let c = shared_through_generic(Backend::Llvm, &m, &sass(2));
    assert!(c.ok, "{}", c.detail);
    let c = shared_through_generic(Backend::Llvm, &m, &sass(3));
    assert!(
        c.detail.contains("3 generic SASS access(es)"),
        "{}",
        c.detail
    );
}

/// The register file's arithmetic behind the occupancy check: 65,536 registers, allocated per
/// warp in units of 256.
#[test]
fn blocks_by_registers_follow_the_register_file() {
    assert_eq!(blocks_by_registers(32, 256), 8);
    assert_eq!(blocks_by_registers(128, 256), 2);
    // 86 registers round up to 88 per thread: 2816 per warp, two blocks of eight warps.
    assert_eq!(blocks_by_registers(86, 256), 2);
    assert_eq!(blocks_by_registers(80, 256), 3);
    assert_eq!(blocks_by_registers(255, 1024), 0);
}

#[test]
fn opcodes_match_whole_or_by_their_first_parts() {
    assert!(is_opcode("BAR.SYNC.DEFER_BLOCKING", "BAR"));
    assert!(is_opcode("MUFU.SIN", "MUFU.SIN"));
    assert!(is_opcode("LDL.64", "LDL"));
    assert!(!is_opcode("LDGSTS.E.BYPASS.128", "LDG"));
    assert!(!is_opcode("BRA", "BAR"));
    assert!(!is_opcode("MUFU.EX2", "MUFU.SIN"));
}

/// A row kernel with one 16-byte load under the L2 policy, then `$LOADS`.
const ROW_LOADS: &str = r#"
.version 8.1
.target sm_90
.address_size 64
.visible .entry softmax_block_f32(
	.param .u64 p
)
{
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<4>;
	ld.param.u64 	%rd1, [p];
	createpolicy.fractional.L2::evict_last.b64 %rd2, 1.0;
	// begin inline asm
	{ .reg .u64 g; cvta.to.global.u64 g, %rd1; ld.global.nc.L2::cache_hint.v4.b32 {%r1, %r2, %r3, %r4}, [g], %rd2; }
	// end inline asm
	$LOADS
	ret;
}
"#;

#[test]
fn row_loads_must_all_carry_the_l2_policy() {
    let check = |loads: &str| {
        let module = ptx::Module::parse(&ROW_LOADS.replace("$LOADS", loads));
        rows::row_loads_under_policy(Backend::Llvm, &module)
    };
    let ok = check("");
    assert!(ok.ok, "{}", ok.detail);
    assert!(ok.detail.starts_with("1 row kernels"), "{}", ok.detail);
    // A weight vector loaded without the policy.
    let plain = check("ld.global.nc.v4.b32 {%r5, %r6, %r7, %r1}, [%rd1];");
    assert!(!plain.ok);
    assert!(
        plain
            .detail
            .contains("softmax_block_f32: 1 16-byte loads under an L2 policy, 1 without"),
        "{}",
        plain.detail
    );
    // No row kernel at all: nothing was checked, which is a failure, not a pass.
    let none = rows::row_loads_under_policy(Backend::Llvm, &ptx::Module::parse(GENERIC_SHARED));
    assert!(!none.ok);
}

#[test]
fn row_registers_must_leave_the_schedules_blocks() {
    let with = |kernel: &str, registers: u32| {
        let mut s = stats(kernel, 0, 0, 0, 0);
        s.resources.registers = registers;
        s
    };
    // Two blocks of 1024 need 32 registers; cluster and wide kernels 1024 threads, 64.
    let fine = [
        with("softmax_block_f32", 32),
        with("layernorm_block_bf16", 64),
        with("rmsnorm_cluster_bf16", 64),
        with("softmax_wide_f32", 64),
        // The warp schedule has no budget; LayerNorm's narrow warp 50 warps an SM.
        with("layernorm_warp_bf16", 64),
        with("layernorm_narrow_bf16", 40),
        with("rmsnorm_narrow_f32", 32),
    ];
    let c = rows::row_registers(Backend::Llvm, &fine);
    assert!(c.ok, "{}", c.detail);
    for (kernel, registers) in [
        ("softmax_block_bf16", 33),
        ("layernorm_cluster_f32", 72),
        ("rmsnorm_wide_f32", 65),
        ("layernorm_narrow_f32", 48),
        ("rmsnorm_narrow_bf16", 33),
    ] {
        let c = rows::row_registers(Backend::Llvm, &[with(kernel, registers)]);
        assert!(!c.ok, "{kernel} at {registers} registers passed");
        assert!(c.detail.starts_with(kernel), "{}", c.detail);
    }
}
