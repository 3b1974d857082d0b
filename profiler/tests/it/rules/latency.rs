//! The rules of too few warps and of waiting: occupancy, the dominant stall, the tail, an
//! undersized grid (and a cluster grid bound by the clusters' placement).

use super::*;

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
