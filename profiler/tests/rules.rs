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
    let regime = |sm, mem, dram| {
        diagnose::regime_of(&launch(&[
            (m::SM_PCT, sm),
            (m::MEM_PCT, mem),
            (m::DRAM_PCT, dram),
        ]))
        .unwrap()
    };
    assert_eq!(regime(85.0, 30.0, 20.0), "compute-bound (SM 85.0 %)");
    assert_eq!(regime(20.0, 90.0, 88.0), "memory-bound (DRAM 88.0 %)");
    assert_eq!(
        regime(20.0, 90.0, 30.0),
        "memory-bound in L1/L2 (memory 90.0 %, DRAM well below)"
    );
    assert_eq!(
        regime(30.0, 40.0, 35.0),
        "latency-bound (SM 30.0 %, memory 40.0 %)"
    );
    assert_eq!(
        regime(80.0, 80.0, 75.0),
        "at the roofline crossover (SM 80.0 %, memory 80.0 %)"
    );
    assert_eq!(diagnose::regime_of(&launch(&[])), None);
    // A compute-bound kernel names its busiest pipe.
    let tc = diagnose::regime_of(&launch(&[
        (m::SM_PCT, 90.0),
        (m::MEM_PCT, 60.0),
        (m::PIPE_TENSOR, 95.0),
        (m::PIPE_FMA, 1.0),
    ]))
    .unwrap();
    assert_eq!(tc, "compute-bound (SM 90.0 %, tensor pipe 95.0 %)");
}

#[test]
fn coalescing_weighs_the_wasted_share_of_the_traffic() {
    let stride = |used: f64, st_sectors: f64| {
        diagnose(&[
            (m::MEM_PCT, 90.0),
            (m::GLD_SECTORS, 32_000.0),
            (m::GLD_REQ, 1_000.0),
            (m::GLD_BYTES_PER_SECTOR, used),
            (m::GST_SECTORS, st_sectors),
            (m::GST_REQ, 1_000.0),
            (m::GST_BYTES_PER_SECTOR, 32.0),
        ])
    };
    // 4 of 32 bytes used, loads 32/36 of the traffic, memory 90 % busy: 87.5 % x 0.89 x 0.9.
    let d = stride(4.0, 4_000.0);
    let c = d.get("coalescing").unwrap();
    assert!(
        (c.cost.unwrap() - 0.875 * 32.0 / 36.0 * 0.9).abs() < 1e-9,
        "{c:?}"
    );
    assert_eq!(d.verdict, Some("coalescing"));
    // 16-byte vector loads use every byte: not a fault.
    assert!(
        !fired(&[
            (m::GLD_SECTORS, 16_000.0),
            (m::GLD_REQ, 1_000.0),
            (m::GLD_BYTES_PER_SECTOR, 32.0),
            (m::GST_SECTORS, 0.0)
        ])
        .contains(&"coalescing")
    );
    // Half the bytes used is the line.
    assert!(stride(16.0, 0.0).get("coalescing").is_none());
    assert!(stride(15.9, 0.0).get("coalescing").is_some());
    // One 4-byte store per block beside a stream of loads: wasted, but a sliver of the traffic.
    let d = diagnose(&[
        (m::MEM_PCT, 85.0),
        (m::GLD_SECTORS, 1_000_000.0),
        (m::GLD_BYTES_PER_SECTOR, 32.0),
        (m::GST_SECTORS, 1_000.0),
        (m::GST_BYTES_PER_SECTOR, 4.0),
    ]);
    assert_eq!(d.verdict, None);
    assert!(d.negligible.iter().any(|f| f.rule == "coalescing"));
    // 0 bytes per sector is no measurement (a kernel that loads through cp.async).
    assert!(stride(0.0, 0.0).get("coalescing").is_none());
    // Without the sector counts the rule says it could not judge.
    assert!(
        diagnose(&[(m::GLD_BYTES_PER_SECTOR, 4.0)])
            .silent
            .contains(&"coalescing")
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
    assert!(!none.silent.contains(&"bank-conflicts"));
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
fn spills_and_divergence() {
    let spill = fired(&[(m::LOCAL_LD_BYTES, 4096.0), (m::LOCAL_ST_BYTES, 4096.0)]);
    assert!(spill.contains(&"spills"));
    assert!(!fired(&[(m::LOCAL_LD_BYTES, 0.0), (m::LOCAL_ST_BYTES, 0.0)]).contains(&"spills"));
    let lanes = |n: f64| diagnose(&[(m::THREADS_PER_INST, n), (m::ISSUE_ACTIVE, 90.0)]);
    let d = lanes(16.0);
    // Half the lanes idle while the schedulers issue 90 % of their cycles.
    assert!((d.get("divergence").unwrap().cost.unwrap() - 0.45).abs() < 1e-9);
    assert!(lanes(23.9).get("divergence").is_some());
    assert!(lanes(24.0).get("divergence").is_none());
}

#[test]
fn tensor_cores_need_a_gemm_shape_on_the_fma_pipe() {
    let gemm = |name: &str, shared_loads: f64, tensor: f64| {
        let mut l = launch(&[
            (m::PIPE_FMA, 80.0),
            (m::PIPE_TENSOR, tensor),
            (m::FFMA_THREAD_INST, 64.0e9),
            (m::THREAD_INST, 80.0e9),
            (m::SH_LD_INST, shared_loads),
        ]);
        l.kernel = name.into();
        diagnose::diagnose(&l)
    };
    // 64e9 FFMA over 2e8 warp-level shared loads: 10 FFMA per load, a register-blocked tile.
    let d = gemm("my_kernel", 2.0e8, 0.0);
    assert_eq!(d.verdict, Some("tensor-cores"));
    assert!((d.get("tensor-cores").unwrap().cost.unwrap() - 0.72).abs() < 1e-9);
    // An FMA loop that reuses nothing from shared memory is not a GEMM (a spin loop) ...
    assert!(gemm("spin", 0.0, 0.0).get("tensor-cores").is_none());
    // ... unless its name says it is one.
    assert!(gemm("sgemm_naive", 0.0, 0.0).get("tensor-cores").is_some());
    // On the tensor cores already: no finding.
    assert!(gemm("my_kernel", 2.0e8, 40.0).get("tensor-cores").is_none());
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
    // v1 at 2^28 f32 on the H200, result word in a fast slot.
    let v1 = diagnose(&[
        (m::SM_PCT, 40.0),
        (m::MEM_PCT, 45.0),
        (m::DURATION, 1_898_944.0),
        (m::CTAS, 1_048_576.0),
        (m::RED_REQ, 1_578_686.0),
        (m::RED_REQ_MAX_SLICE, 1_048_576.0),
        (m::ATOMIC_UNIT_PCT, 32.30),
    ]);
    assert_eq!(v1.findings[0].verdict, "atomic-bound (one result word)");
    assert_eq!(v1.verdict, Some("atomics"));
    let a = v1.get("atomics").unwrap();
    assert!(
        a.evidence
            .starts_with("1,048,576 `red`s to one address, one every 3.1 L2 cycles, 1.81 ns each"),
        "{}",
        a.evidence
    );
    // v4: the chain fills 76 % of the kernel: a finding, but DRAM is the regime.
    let v4 = diagnose(&[
        (m::SM_PCT, 30.0),
        (m::MEM_PCT, 72.0),
        (m::DRAM_PCT, 71.5),
        (m::CTAS, 131_072.0),
        (m::RED_REQ_MAX_SLICE, 131_072.0),
        (m::ATOMIC_UNIT_PCT, 24.52),
    ]);
    assert!(v4.get("atomics").is_some());
    assert_eq!(v4.findings[0].verdict, "memory-bound (DRAM 71.5 %)");
    // One wave of blocks, or `red`s spread over slices: not this bound.
    for (ctas, max, busy) in [(288.0, 288.0, 0.07), (65_536.0, 1_024.0, 32.0)] {
        let d = diagnose(&[
            (m::SM_PCT, 40.0),
            (m::MEM_PCT, 45.0),
            (m::CTAS, ctas),
            (m::RED_REQ_MAX_SLICE, max),
            (m::ATOMIC_UNIT_PCT, busy),
        ]);
        assert!(d.get("atomics").is_none());
    }
}

#[test]
fn costlier_faults_leave_less_for_the_rest_and_small_ones_are_no_alarm() {
    // The atomic chain fills the kernel: idle lanes cost nothing beside it.
    let d = diagnose(&[
        (m::SM_PCT, 40.0),
        (m::MEM_PCT, 45.0),
        (m::CTAS, 1_048_576.0),
        (m::RED_REQ_MAX_SLICE, 1_048_576.0),
        (m::ATOMIC_UNIT_PCT, 32.30),
        (m::THREADS_PER_INST, 16.0),
        (m::ISSUE_ACTIVE, 31.0),
    ]);
    assert_eq!(d.verdict, Some("atomics"));
    let lanes = d
        .negligible
        .iter()
        .find(|f| f.rule == "divergence")
        .unwrap();
    assert!(lanes.weight.unwrap() < MIN_COST);
    assert!(!d.headline.contains("divergence"), "{}", d.headline);
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
