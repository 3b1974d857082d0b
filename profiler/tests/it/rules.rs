//! Each rule's thresholds and costs, one rule at a time, on launches made for the purpose (the
//! H200 captures in `foreign.rs` and in xtask's tests show the rules on real data; these pin
//! the boundaries and the ranking).

use profiler::diagnose::{self, Diagnosis, Kind, MIN_COST, RULES};
use profiler::ncu::metrics::{self as m, stall_metric};
use profiler::ncu::{Launch, Value};

fn launch(metrics: &[(&str, f64)]) -> Launch {
    let mut l = Launch {
        kernel: "k".into(),
        ..Launch::default()
    };
    for (name, v) in metrics {
        l.metrics.insert(name.to_string(), Value::Num(*v));
    }
    l
}

fn diagnose(metrics: &[(&str, f64)]) -> Diagnosis {
    diagnose::diagnose(&launch(metrics))
}

/// Every rule that fired, negligible ones too.
fn fired(metrics: &[(&str, f64)]) -> Vec<&'static str> {
    let d = diagnose(metrics);
    d.findings
        .iter()
        .chain(&d.negligible)
        .map(|f| f.rule)
        .collect()
}

#[test]
fn regime_quadrants() {
    // Without the units' busy shares, the two SOL numbers decide.
    let regime = |sm, mem| diagnose::regime_of(&launch(&[(m::SM_PCT, sm), (m::MEM_PCT, mem)]));
    assert_eq!(regime(85.0, 30.0).unwrap(), "compute-bound (SM 85.0 %)");
    assert_eq!(
        regime(30.0, 40.0).unwrap(),
        "latency-bound (SM 30.0 %, memory 40.0 %)"
    );
    assert_eq!(diagnose::regime_of(&launch(&[])), None);
    // With them, the busiest unit is named.
    let named = |metrics: &[(&str, f64)]| {
        let mut all = vec![(m::SM_PCT, 50.0), (m::MEM_PCT, 50.0)];
        all.extend_from_slice(metrics);
        diagnose::regime_of(&launch(&all)).unwrap()
    };
    assert_eq!(
        named(&[(m::DRAM_PCT, 88.0), (m::L2_PCT, 90.0), (m::L1_PCT, 30.0)]),
        "memory-bound (DRAM 88.0 %)"
    );
    assert_eq!(
        named(&[(m::DRAM_PCT, 40.0), (m::L2_PCT, 90.0), (m::L1_PCT, 30.0)]),
        "memory-bound in L2 (L2 90.0 %, DRAM 40.0 %)"
    );
    // A shared-memory GEMM with little register reuse: the LSU pipe and the L1 are full, the
    // FMA pipe is not: the L1, not the math, binds.
    assert_eq!(
        named(&[
            (m::DRAM_PCT, 6.0),
            (m::L1_PCT, 88.0),
            (m::PIPE_LSU, 91.0),
            (m::PIPE_FMA, 30.0),
            (m::ISSUE_ACTIVE, 60.0)
        ]),
        "memory-bound in L1/shared (L1 88.0 %, LSU pipe 91.0 %)"
    );
    assert_eq!(
        named(&[
            (m::PIPE_TENSOR, 95.0),
            (m::PIPE_FMA, 1.0),
            (m::DRAM_PCT, 30.0)
        ]),
        "compute-bound (tensor pipe 95.0 %)"
    );
    assert_eq!(
        named(&[
            (m::ISSUE_ACTIVE, 94.0),
            (m::PIPE_FMA, 80.0),
            (m::DRAM_PCT, 3.0)
        ]),
        "compute-bound (issue 94.0 %, FMA pipe 80.0 %)"
    );
    assert_eq!(
        named(&[(m::PIPE_FMA, 80.0), (m::DRAM_PCT, 75.0)]),
        "at the roofline crossover (FMA pipe 80.0 %, DRAM 75.0 %)"
    );
    assert_eq!(
        named(&[(m::L2_PCT, 45.0), (m::DRAM_PCT, 30.0)]),
        "latency-bound (busiest unit: L2 45.0 %)"
    );
}

#[test]
fn coalescing_costs_the_bytes_beyond_the_minimum_where_they_bind() {
    // A stride-32 read: every 4-byte load fetches its own sector at every level, DRAM binds.
    let strided = diagnose(&[
        (m::SM_PCT, 10.0),
        (m::MEM_PCT, 85.0),
        (m::DRAM_PCT, 85.0),
        (m::L2_PCT, 80.0),
        (m::L1_PCT, 40.0),
        (m::GLD_DATA_BYTES, 1.0e8),
        (m::GLD_SECTORS, 2.5e7),
        (m::GLD_BYTES_PER_SECTOR, 4.0),
        (m::L2_READ_SECTORS, 2.5e7),
        (m::DRAM_READ_BYTES, 8.0e8),
    ]);
    assert_eq!(strided.verdict, Some("coalescing"));
    // Every level moves 8x the asked bytes: with only those, each falls to an eighth and the
    // kernel takes an eighth of its time.
    let c = strided.get("coalescing").unwrap();
    assert!((c.cost.unwrap() - 0.875).abs() < 1e-9, "{c:?}");
    // A stride-1 copy whose loads use 8 of 32 bytes per sector each, the L1 re-serving the
    // sectors to the next load: the L2 and DRAM move the asked bytes once, and DRAM (85 %)
    // binds, not the L1 (60 %): no fault.
    let reserved = diagnose(&[
        (m::SM_PCT, 20.0),
        (m::MEM_PCT, 85.0),
        (m::DRAM_PCT, 85.0),
        (m::L2_PCT, 70.0),
        (m::L1_PCT, 60.0),
        (m::GLD_DATA_BYTES, 1.0e9),
        (m::GLD_SECTORS, 1.25e8),
        (m::GLD_BYTES_PER_SECTOR, 8.0),
        (m::L2_READ_SECTORS, 3.2e7),
        (m::DRAM_READ_BYTES, 1.0e9),
    ]);
    assert_eq!(reserved.verdict, None, "{}", reserved.headline);
    assert!(reserved.negligible.iter().any(|f| f.rule == "coalescing"));
    // The same access where the L1 binds: the partly used sectors cost its time.
    let l1 = diagnose(&[
        (m::SM_PCT, 20.0),
        (m::MEM_PCT, 92.0),
        (m::DRAM_PCT, 40.0),
        (m::L1_PCT, 92.0),
        (m::GLD_DATA_BYTES, 1.0e9),
        (m::GLD_SECTORS, 1.25e8),
        (m::GLD_BYTES_PER_SECTOR, 8.0),
        (m::L2_READ_SECTORS, 3.2e7),
        (m::DRAM_READ_BYTES, 1.0e9),
    ]);
    assert_eq!(l1.verdict, Some("coalescing"), "{}", l1.headline);
    // Uncoalesced stores: each sector the L1 takes, the L2 takes (stores write through).
    let stores = diagnose(&[
        (m::SM_PCT, 6.0),
        (m::MEM_PCT, 77.0),
        (m::L2_PCT, 77.0),
        (m::L1_PCT, 48.0),
        (m::DRAM_PCT, 10.0),
        (m::GLD_DATA_BYTES, 6.7e7),
        (m::GLD_SECTORS, 2.1e6),
        (m::GST_DATA_BYTES, 6.7e7),
        (m::GST_SECTORS, 1.68e7),
        (m::GST_BYTES_PER_SECTOR, 4.0),
    ]);
    assert_eq!(stores.verdict, Some("coalescing"), "{}", stores.headline);
    // Loads through cp.async ask for bytes no SASS counter sees: not weighed.
    let cp_async = diagnose(&[
        (m::L2_PCT, 90.0),
        (m::GLD_DATA_BYTES, 0.0),
        (m::LDGSTS_INST, 1.0e6),
        (m::GLD_SECTORS, 1.0e8),
        (m::L2_READ_SECTORS, 1.0e8),
    ]);
    assert!(cp_async.get("coalescing").is_none());
    // Without the requested bytes the rule says it could not judge, and which metric it lacks.
    let bare = diagnose(&[(m::GLD_SECTORS, 4.0)]);
    assert!(bare.is_silent("coalescing"));
    assert!(
        bare.headline.contains(m::GLD_DATA_BYTES),
        "{}",
        bare.headline
    );
}

#[test]
fn bank_conflict_thresholds() {
    let at = |conflicts: f64| {
        fired(&[
            (m::SH_LD_WAVEFRONTS, 100.0 + conflicts),
            (m::SH_LD_REQ, 100.0),
            (m::SH_LD_CONFLICTS, conflicts),
        ])
    };
    // Conflicts are wavefronts beyond the access's minimum: 0.5 extra per request fires.
    assert!(at(51.0).contains(&"bank-conflicts"));
    assert!(!at(49.0).contains(&"bank-conflicts"));
    // A 16-byte store: 4 wavefronts per request, none of them a conflict.
    assert!(
        !fired(&[
            (m::SH_ST_WAVEFRONTS, 400.0),
            (m::SH_ST_REQ, 100.0),
            (m::SH_ST_CONFLICTS, 0.0)
        ])
        .contains(&"bank-conflicts")
    );
    // Without the conflict counter, wavefronts per request stand in (> 1.5).
    let bare = |w: f64| fired(&[(m::SH_LD_WAVEFRONTS, w), (m::SH_LD_REQ, 100.0)]);
    assert!(bare(160.0).contains(&"bank-conflicts"));
    assert!(!bare(140.0).contains(&"bank-conflicts"));
    // A kernel without shared memory: judged (nothing to find), not silent.
    let none = diagnose(&[(m::SH_LD_REQ, 0.0), (m::SH_LD_WAVEFRONTS, 0.0)]);
    assert!(!none.is_silent("bank-conflicts"));
    // The cost: conflicts' share of the wavefronts x how busy the banks are.
    let d = diagnose(&[
        (m::SH_LD_WAVEFRONTS, 3_200.0),
        (m::SH_LD_REQ, 100.0),
        (m::SH_LD_CONFLICTS, 3_100.0),
        (m::SH_WAVEFRONTS, 3_200.0),
        (m::SH_CONFLICTS, 3_100.0),
        (m::SHARED_PIPE_PCT, 98.0),
    ]);
    let b = d.get("bank-conflicts").unwrap();
    assert!((b.cost.unwrap() - 3_100.0 / 3_200.0 * 0.98).abs() < 1e-9);
    assert!(b.fix.contains("pad"));
}

#[test]
fn occupancy_costs_only_when_nothing_is_saturated() {
    let regs = |fma: f64| {
        diagnose(&[
            (m::SM_PCT, fma),
            (m::MEM_PCT, 20.0),
            (m::PIPE_FMA, fma),
            (m::ACHIEVED_OCC, 12.0),
            (m::THEORETICAL_OCC, 12.5),
            ("launch__occupancy_limit_registers", 1.0),
            ("launch__occupancy_limit_warps", 8.0),
            (m::REGISTERS, 160.0),
        ])
    };
    let starved = regs(5.0);
    let o = starved.get("occupancy").unwrap();
    assert_eq!(o.verdict, "occupancy capped by registers");
    assert!(
        o.evidence.contains("160 registers/thread"),
        "{}",
        o.evidence
    );
    // 80 % left in the busiest unit (the memory's 20 %), 88 % of the warp slots empty.
    assert!((o.cost.unwrap() - 0.8 * 0.88).abs() < 1e-9, "{o:?}");
    assert_eq!(starved.verdict, Some("occupancy"));
    // The same cap on a kernel whose FMA pipe is full is a design choice that costs nothing.
    let gemm = regs(85.0);
    assert_eq!(gemm.get("occupancy").unwrap().cost, Some(0.0));
    assert_eq!(gemm.verdict, None);
    // 70 % of theoretical is the line for achieved occupancy.
    assert!(
        fired(&[
            (m::ACHIEVED_OCC, 69.0),
            (m::THEORETICAL_OCC, 100.0),
            (m::SM_PCT, 10.0)
        ])
        .contains(&"occupancy")
    );
    assert!(
        !fired(&[
            (m::ACHIEVED_OCC, 90.0),
            (m::THEORETICAL_OCC, 100.0),
            (m::SM_PCT, 10.0)
        ])
        .contains(&"occupancy")
    );
}

#[test]
fn the_dominant_stall_ignores_selected_and_names_the_throttled_pipe() {
    let s = |r: &str| stall_metric(r);
    let d = diagnose(&[
        (&s("long_scoreboard"), 19.0),
        (&s("barrier"), 1.0),
        (&s("selected"), 30.0),
        (m::DRAM_PCT, 90.0),
    ]);
    let st = d.get("stall").unwrap();
    assert_eq!(st.kind, Kind::Context);
    assert!(
        st.verdict.starts_with("dominant stall: long_scoreboard"),
        "{}",
        st.verdict
    );
    assert!(
        st.evidence.starts_with("95 % of all stalls"),
        "{}",
        st.evidence
    );
    // Waiting on memory at a busy DRAM is what memory-bound looks like.
    assert!(st.fix.contains("expected"), "{}", st.fix);
    let mio = |shared: f64, xu: f64| {
        diagnose(&[
            (&s("mio_throttle"), 5.0),
            (m::SHARED_PIPE_PCT, shared),
            (m::PIPE_XU, xu),
        ])
        .get("stall")
        .unwrap()
        .evidence
        .clone()
    };
    assert!(
        mio(90.0, 2.0).contains("from shared memory"),
        "{}",
        mio(90.0, 2.0)
    );
    assert!(
        mio(1.0, 90.0).contains("from the XU pipe"),
        "{}",
        mio(1.0, 90.0)
    );
}

#[test]
fn tail_effect_and_undersized_grids() {
    let rule = |waves: f64, active: f64| {
        diagnose(&[
            (m::WAVES, waves),
            (m::SM_ACTIVE_CYCLES, active),
            (m::SM_ELAPSED_CYCLES, 100.0),
        ])
    };
    let small = rule(0.12, 12.0);
    let u = small.get("undersized-grid").unwrap();
    assert!((u.cost.unwrap() - 0.88).abs() < 1e-9);
    assert_eq!(small.verdict, Some("undersized-grid"));
    // 1.15 waves: the SMs' measured idle share is the cost.
    let t = rule(1.15, 58.0);
    assert!((t.get("tail").unwrap().cost.unwrap() - 0.42).abs() < 1e-9);
    // A one-wave kernel (v6), a nearly whole second wave, many waves: no tail.
    for w in [1.0, 1.9, 62.06] {
        let d = rule(w, 99.0);
        assert!(
            d.get("tail").is_none() && d.get("undersized-grid").is_none(),
            "{w}"
        );
    }
}

#[test]
fn a_cluster_grid_that_holds_every_cluster_that_fits_is_bound_by_their_placement() {
    // 30 clusters of 8 at once and 30 in the grid: 240 blocks where the SMs hold 264.
    let cluster = |clusters: f64| {
        diagnose(&[
            (m::WAVES, 0.91 * clusters / 30.0),
            (m::SM_ACTIVE_CYCLES, 79.0),
            (m::SM_ELAPSED_CYCLES, 100.0),
            (m::CLUSTER_SIZE, 8.0),
            (m::CLUSTER_MAX_ACTIVE, 30.0),
            (m::GRID_SIZE, 8.0 * clusters),
        ])
    };
    let placed = cluster(30.0);
    let u = placed.get("undersized-grid").unwrap();
    assert!(u.verdict.starts_with("cluster placement"), "{u:?}");
    assert!(u.fix.contains("fewer blocks per cluster"), "{u:?}");
    assert!(
        u.evidence.contains("30 clusters of 8 blocks"),
        "{}",
        u.evidence
    );
    assert!((u.cost.unwrap() - 0.21).abs() < 1e-9);
    // Two clusters where thirty fit: the grid is what is short.
    let few = cluster(2.0);
    let u = few.get("undersized-grid").unwrap();
    assert!(u.verdict.starts_with("undersized grid"), "{u:?}");
    // Without clusters (size 1) the rule is the grid's, whatever the other counters say.
    let plain = diagnose(&[
        (m::WAVES, 0.5),
        (m::CLUSTER_SIZE, 1.0),
        (m::CLUSTER_MAX_ACTIVE, 0.0),
        (m::GRID_SIZE, 66.0),
    ]);
    assert!(
        plain
            .get("undersized-grid")
            .unwrap()
            .verdict
            .starts_with("undersized grid")
    );
}

/// The same on the H200: the lab's `layernorm_cluster_f32` at 1024 x 131072, a grid of the 30
/// clusters of 8 that fit at once, 0.91 waves, the SMs idle 21 % (`dist/xtask profile --kernel
/// layernorm_cluster --backend llvm --rows 1024 --cols 131072 --source`, 2026-12-03).
#[test]
fn an_h200_cluster_capture_names_the_placement() {
    let launches = crate::h200_launches("layernorm-cluster-f32-1024x131072");
    assert_eq!(launches.len(), 1);
    let d = diagnose::diagnose(&launches[0]);
    let u = d.get("undersized-grid").unwrap();
    assert!(u.verdict.starts_with("cluster placement"), "{u:?}");
    assert!(
        u.evidence.contains("30 clusters of 8 blocks"),
        "{}",
        u.evidence
    );
    let text = profiler::report::kernel_text("layernorm_cluster", "", &launches[0], &d);
    assert!(
        text.contains("240 blocks, 0.91 waves per SM, 132 SMs, clusters of 8 (30 fit at once)"),
        "{text}"
    );
}

#[test]
fn spills_and_divergence() {
    let spill = fired(&[(m::LOCAL_LD_BYTES, 4096.0), (m::LOCAL_ST_BYTES, 4096.0)]);
    assert!(spill.contains(&"spills"));
    assert!(!fired(&[(m::LOCAL_LD_BYTES, 0.0), (m::LOCAL_ST_BYTES, 0.0)]).contains(&"spills"));
    // No unit paces the kernel: half the lanes idle costs half the issue the schedulers do.
    let lanes = |n: f64| diagnose(&[(m::THREADS_PER_INST, n), (m::ISSUE_ACTIVE, 50.0)]);
    assert!((lanes(16.0).get("divergence").unwrap().cost.unwrap() - 0.25).abs() < 1e-9);
    assert!(lanes(23.9).get("divergence").is_some());
    assert!(lanes(24.0).get("divergence").is_none());
    // The FMA pipe paces it: with the lanes packed it would do half the instructions, until
    // the next unit (DRAM at 30 %) binds.
    let paced = diagnose(&[
        (m::THREADS_PER_INST, 16.0),
        (m::ISSUE_ACTIVE, 90.0),
        (m::PIPE_FMA, 85.0),
        (m::DRAM_PCT, 30.0),
    ]);
    let d = paced.get("divergence").unwrap();
    assert!(
        (d.cost.unwrap() - (1.0 - 45.0 / 90.0)).abs() < 1e-9,
        "{d:?}"
    );
}

#[test]
fn divergence_that_doubles_the_special_function_issue_ranks_before_it() {
    // Lanes split between an FMA loop and a __sinf loop: each warp runs both with half its
    // lanes, so the XU pipe issues twice the MUFU it would with the lanes packed.
    let d = diagnose(&[
        (m::SM_PCT, 90.0),
        (m::MEM_PCT, 5.0),
        (m::PIPE_XU, 92.0),
        (m::PIPE_FMA, 40.0),
        (m::ISSUE_ACTIVE, 80.0),
        (m::THREADS_PER_INST, 16.0),
    ]);
    assert_eq!(d.verdict, Some("divergence"), "{}", d.headline);
    // Packed, the XU would be 46 % busy: no longer a special-function bound of its own.
    assert!(d.get("sfu").is_none(), "{:?}", d.get("sfu"));
    // With every lane working, the same XU load is the fault.
    let packed = diagnose(&[
        (m::SM_PCT, 90.0),
        (m::MEM_PCT, 5.0),
        (m::PIPE_XU, 92.0),
        (m::PIPE_FMA, 40.0),
        (m::ISSUE_ACTIVE, 80.0),
        (m::THREADS_PER_INST, 32.0),
    ]);
    assert_eq!(packed.verdict, Some("sfu"), "{}", packed.headline);
}

#[test]
fn tensor_cores_need_a_gemm_shape_on_the_fma_pipe() {
    let gemm = |name: &str, shared_loads: f64, tensor: f64, fma: f64, lsu: f64| {
        let mut l = launch(&[
            (m::SM_PCT, lsu.max(fma)),
            (m::MEM_PCT, 88.0),
            (m::L1_PCT, 88.0),
            (m::DRAM_PCT, 6.0),
            (m::PIPE_FMA, fma),
            (m::PIPE_LSU, lsu),
            (m::ISSUE_ACTIVE, 70.0),
            (m::PIPE_TENSOR, tensor),
            (m::FFMA_THREAD_INST, 64.0e9),
            (m::THREAD_INST, 140.0e9),
            (m::SH_LD_INST, shared_loads),
            (m::SH_LD_WAVEFRONTS, shared_loads),
            (m::DRAM_READ_BYTES, 1.0e8),
        ]);
        l.kernel = name.into();
        diagnose::diagnose(&l)
    };
    // A shared-memory SGEMM with little register reuse (1.3 FFMA per shared load): the LSU
    // pipe and the L1 bind at ~90 %, the FMA pipe at 30 %. The tensor cores would shrink the
    // whole instruction stream, loads and all.
    let d = gemm("my_kernel", 1.5e9, 0.0, 30.0, 91.0);
    assert_eq!(d.verdict, Some("tensor-cores"), "{}", d.headline);
    let cost = d.get("tensor-cores").unwrap().cost.unwrap();
    assert!((cost - (1.0 - 1.0 / 7.0)).abs() < 1e-9, "{cost}");
    assert!(
        d.headline.starts_with("memory-bound in L1/shared"),
        "{}",
        d.headline
    );
    // An FMA loop over registers loads nothing: no product of matrices (a spin loop) ...
    assert!(
        gemm("spin", 0.0, 0.0, 80.0, 1.0)
            .get("tensor-cores")
            .is_none()
    );
    // ... nor is an FMA-heavy kernel whose every operand comes from DRAM once (a polynomial
    // per element: the on-chip bytes equal DRAM's).
    let mut poly = launch(&[
        (m::PIPE_FMA, 80.0),
        (m::PIPE_TENSOR, 0.0),
        (m::FFMA_THREAD_INST, 32.0e9),
        (m::THREAD_INST, 40.0e9),
        (m::GLD_INST, 3.0e7),
        (m::GLD_SECTORS, 1.25e8),
        (m::DRAM_READ_BYTES, 4.0e9),
    ]);
    poly.kernel = "poly".into();
    assert!(diagnose::diagnose(&poly).get("tensor-cores").is_none());
    // On the tensor cores already: no finding.
    assert!(
        gemm("my_kernel", 1.5e9, 40.0, 30.0, 91.0)
            .get("tensor-cores")
            .is_none()
    );
    // From a plain report without the thread-instruction counts the rule says what it lacks.
    let mut bare = launch(&[(m::PIPE_FMA, 80.0), (m::PIPE_TENSOR, 0.0)]);
    bare.kernel = "sgemm".into();
    assert!(diagnose::diagnose(&bare).is_silent("tensor-cores"));
}

#[test]
fn special_functions_are_their_own_bound() {
    let d = diagnose(&[(m::PIPE_XU, 90.0), (m::PIPE_ALU, 50.0), (m::PIPE_FMA, 38.0)]);
    let f = d.get("sfu").unwrap();
    assert!((f.cost.unwrap() - 0.40).abs() < 1e-9);
    assert!(
        f.evidence.contains("the next busiest pipe (ALU) 50.0 %"),
        "{}",
        f.evidence
    );
    assert!(diagnose(&[(m::PIPE_XU, 45.0)]).get("sfu").is_none());
}

#[test]
fn same_address_atomics_are_named_not_called_latency() {
    // v1 at 2^28 f32 on the H200: one `red` per block to the result word, the busiest slice
    // taking them all (the far partition passes on half as many again).
    let v1 = diagnose(&[
        (m::SM_PCT, 40.0),
        (m::MEM_PCT, 45.0),
        (m::L2_PCT, 12.0),
        (m::DURATION, 1_898_944.0),
        (m::CTAS, 1_048_576.0),
        (m::RED_REQ, 1_578_686.0),
        (m::RED_REQ_MAX_SLICE, 1_048_576.0),
        (m::ATOMIC_UNIT_PCT, 32.30),
    ]);
    assert_eq!(v1.findings[0].verdict, "atomic-bound (one address)");
    assert_eq!(v1.verdict, Some("atomics"));
    let a = v1.get("atomics").unwrap();
    assert!(
        a.evidence.contains("one update every 3.1 L2 cycles"),
        "{}",
        a.evidence
    );
    // Value-returning atomics (`atom`, a Triton `tl.atomic_add`) to one word, read from a plain
    // report: no per-slice counts, but the busiest slice's atomic unit is far above the
    // average one's.
    let atom = diagnose(&[
        (m::SM_PCT, 5.0),
        (m::MEM_PCT, 10.0),
        (m::L2_PCT, 8.0),
        (m::RED_REQ, 10_240.0),
        (m::ATOM_REQ, 16.8e6),
        (m::ATOMIC_UNIT_PCT, 31.0),
        (m::ATOMIC_UNIT_AVG_PCT, 0.5),
    ]);
    assert_eq!(atom.verdict, Some("atomics"), "{}", atom.headline);
    // A chain that fills 76 % of a kernel whose DRAM is 72 % busy runs beside the loads: it
    // costs what it runs beyond them, too little to count.
    let v4 = diagnose(&[
        (m::SM_PCT, 30.0),
        (m::MEM_PCT, 72.0),
        (m::DRAM_PCT, 71.5),
        (m::CTAS, 131_072.0),
        (m::RED_REQ, 196_608.0),
        (m::RED_REQ_MAX_SLICE, 131_072.0),
        (m::ATOMIC_UNIT_PCT, 24.52),
    ]);
    assert_ne!(v4.verdict, Some("atomics"), "{}", v4.headline);
    assert_eq!(v4.findings[0].verdict, "memory-bound (DRAM 71.5 %)");
    // `red`s spread over the slices (a histogram of many bins): no chain.
    let spread = diagnose(&[
        (m::SM_PCT, 40.0),
        (m::MEM_PCT, 45.0),
        (m::RED_REQ, 65_536.0),
        (m::RED_REQ_MAX_SLICE, 1_024.0),
        (m::ATOMIC_UNIT_PCT, 32.0),
    ]);
    assert!(spread.get("atomics").is_none());
    // Warps that wait on the fences of atomics that are most of their memory instructions.
    let s = |r: &str| stall_metric(r);
    let fenced = diagnose(&[
        (m::SM_PCT, 5.0),
        (m::MEM_PCT, 10.0),
        (m::GATOM_INST, 5.0e5),
        (m::GLD_INST, 5.0e5),
        (&s("membar"), 30.0),
        (&s("lg_throttle"), 50.0),
        (&s("long_scoreboard"), 10.0),
    ]);
    assert_eq!(fenced.verdict, Some("atomics"), "{}", fenced.headline);
    // Shared-memory atomics to one word: 32 passes through the banks per request.
    let shared = diagnose(&[
        (m::SM_PCT, 20.0),
        (m::MEM_PCT, 95.0),
        (m::L1_PCT, 95.0),
        (m::SH_ATOM_INST, 1.0e6),
        (m::SH_ATOM_WAVEFRONTS, 3.2e7),
        (m::SH_WAVEFRONTS, 3.3e7),
    ]);
    assert_eq!(shared.verdict, Some("atomics"), "{}", shared.headline);
}

#[test]
fn costlier_faults_leave_less_for_the_rest_and_small_ones_are_no_alarm() {
    // The atomic chain fills the kernel: idle lanes cost nothing beside it.
    let d = diagnose(&[
        (m::SM_PCT, 40.0),
        (m::MEM_PCT, 45.0),
        (m::CTAS, 1_048_576.0),
        (m::RED_REQ, 1_578_686.0),
        (m::RED_REQ_MAX_SLICE, 1_048_576.0),
        (m::ATOMIC_UNIT_PCT, 32.30),
        (m::ATOMIC_UNIT_AVG_PCT, 0.5),
        (m::THREADS_PER_INST, 16.0),
        (m::ISSUE_ACTIVE, 31.0),
    ]);
    assert_eq!(d.verdict, Some("atomics"), "{}", d.headline);
    let lanes = d
        .negligible
        .iter()
        .find(|f| f.rule == "divergence")
        .unwrap_or_else(|| panic!("{d:#?}"));
    assert!(lanes.weight.unwrap() < MIN_COST);
    assert!(!d.headline.contains("divergence"), "{}", d.headline);
}

#[test]
fn a_grid_that_fills_few_warp_slots_is_the_cause_not_the_register_cap() {
    // 128 single-warp blocks on 132 SMs, 255 registers a thread (8 blocks per SM allowed,
    // 12.5 %), 1.6 % achieved: the grid sets the occupancy, not the registers, though no SM
    // sits idle for long.
    let d = diagnose(&[
        (m::SM_PCT, 2.0),
        (m::MEM_PCT, 3.0),
        (m::L1_PCT, 2.0),
        (m::ISSUE_ACTIVE, 3.0),
        (m::WAVES, 0.12),
        (m::CTAS, 128.0),
        (m::BLOCK_SIZE, 32.0),
        (m::SM_COUNT, 132.0),
        (m::SM_ACTIVE_CYCLES, 97.0),
        (m::SM_ELAPSED_CYCLES, 100.0),
        (m::ACHIEVED_OCC, 1.6),
        (m::THEORETICAL_OCC, 12.5),
        ("launch__occupancy_limit_registers", 8.0),
        (m::REGISTERS, 255.0),
        (m::LOCAL_LD_BYTES, 6.6e7),
        (m::LOCAL_ST_BYTES, 6.6e7),
        (m::GLD_SECTORS, 2.0e6),
        (&stall_metric("long_scoreboard"), 40.0),
        (&stall_metric("wait"), 5.0),
    ]);
    assert_eq!(d.verdict, Some("undersized-grid"), "{}", d.headline);
    let u = d.get("undersized-grid").unwrap();
    assert!(u.cost.unwrap() > 0.8, "{u:?}");
    assert!(
        u.evidence.contains("the grid supplies 0.97 warps per SM"),
        "{}",
        u.evidence
    );
    // The register cap binds nothing while the grid supplies fewer warps than it allows.
    assert!(d.get("occupancy").is_none());
    // The spills wait on the same scoreboard: a fault of their own, after the grid.
    assert!(d.get("spills").is_some_and(|f| f.cost.unwrap() > 0.5));
}

#[test]
fn a_rule_that_cannot_run_is_named_in_the_headline_never_read_as_health() {
    // A plain report without the bank-conflict counters: the kernel is not called healthy.
    let d = diagnose(&[(m::SM_PCT, 20.0), (m::MEM_PCT, 90.0), (m::L1_PCT, 90.0)]);
    assert_eq!(d.verdict, None);
    assert!(d.headline.contains("not judged: "), "{}", d.headline);
    assert!(d.headline.contains("bank-conflicts"), "{}", d.headline);
    assert!(d.headline.contains("--metrics"), "{}", d.headline);
}

#[test]
fn the_rules_table_says_when_each_fires_and_how_its_cost_is_weighed() {
    let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    assert_eq!(ids[0], "regime");
    assert_eq!(*ids.last().unwrap(), "stall");
    for id in [
        "tensor-cores",
        "coalescing",
        "bank-conflicts",
        "occupancy",
        "tail",
        "undersized-grid",
        "spills",
        "divergence",
        "sfu",
        "barrier",
        "latency",
        "async-stages",
        "l2-resident",
        "atomics",
    ] {
        assert!(diagnose::rule(id).is_some(), "{id}");
    }
    assert!(
        RULES
            .iter()
            .all(|r| !r.when.is_empty() && !r.cost.is_empty())
    );
    let text = diagnose::rules_text();
    assert!(text.contains("[bank-conflicts]") && text.contains("pad the tile"));
    assert!(text.contains("cost:"), "{text}");
}

#[test]
fn barriers_that_fill_the_adu_pipe_cost_what_it_stands_above_the_next_pipe() {
    let s = |r: &str| stall_metric(r);
    // The barrier pair's fault on the H200: the SM busy (85 %) with its own barriers.
    let busy = |adu: f64| {
        diagnose(&[
            (&s("barrier"), 11.35),
            (&s("short_scoreboard"), 4.13),
            (&s("long_scoreboard"), 3.26),
            (&s("mio_throttle"), 2.47),
            (m::SM_PCT, 85.2),
            (m::MEM_PCT, 62.0),
            (m::DRAM_PCT, 30.3),
            (m::PIPE_LSU, 51.6),
            (m::PIPE_ALU, 10.2),
            (m::PIPE_ADU, adu),
        ])
    };
    let d = busy(86.0);
    assert_eq!(d.verdict, Some("barrier"), "{}", d.headline);
    let cost = d.get("barrier").unwrap().cost.unwrap();
    assert!((cost - 0.344).abs() < 1e-9, "{cost}");
    assert!(d.headline.contains("ADU"), "{}", d.headline);
    // The same waits with the ADU idle: the idle slots left (15 %) times the waits' share.
    let d = busy(5.0);
    let b = d.get("barrier").unwrap();
    assert!(b.cost.unwrap() < MIN_COST, "{:?}", b.cost);
    assert_ne!(d.verdict, Some("barrier"));
}
