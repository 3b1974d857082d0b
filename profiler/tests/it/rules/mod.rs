//! Each rule's thresholds and costs, one rule at a time, on launches made for the purpose (the
//! H200 captures in `foreign.rs` and in xtask's tests show the rules on real data; these pin
//! the boundaries and the ranking). Here the regime, the ranking and the rules table; the
//! rules themselves by the units they watch in `memory`, `latency` and `compute`.

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

mod compute;
mod latency;
mod memory;

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
    // DRAM within a fifth of the L2 but not itself high: not at its roof, the L2 binds.
    assert_eq!(
        named(&[(m::DRAM_PCT, 64.0), (m::L2_PCT, 72.0), (m::L1_PCT, 30.0)]),
        "memory-bound in L2 (L2 72.0 %, DRAM 64.0 %)"
    );
    assert_eq!(
        named(&[(m::DRAM_PCT, 72.0), (m::L2_PCT, 80.0), (m::L1_PCT, 30.0)]),
        "memory-bound (DRAM 72.0 %)"
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

/// The lab's LayerNorm on the H200 at 0.71–0.74 x copy: DRAM (63–64 %) is not at its roof,
/// the L2 (71–72 %) is busier, carrying 1.07–1.19 x DRAM's bytes (part of the weights again
/// each row) (`dist/xtask profile --kernel layernorm_block_bf16 --backend llvm --rows 4096
/// --cols 32768 --source`, and the cluster capture of
/// `an_h200_cluster_capture_names_the_placement`, 2026-12-03, before the cluster kept `w` in
/// shared memory).
#[test]
fn h200_layernorm_captures_are_l2_bound_not_at_the_dram_roof() {
    for (name, want) in [
        (
            "layernorm-block-bf16-4096x32768",
            "memory-bound in L2 (L2 72.4 %, DRAM 63.7 %)",
        ),
        (
            "layernorm-cluster-f32-1024x131072",
            "memory-bound in L2 (L2 71.3 %, DRAM 63.6 %)",
        ),
    ] {
        let launches = crate::h200_launches(name);
        assert_eq!(launches.len(), 1, "{name}");
        let regime = diagnose::regime_of(&launches[0]).unwrap();
        assert_eq!(regime, want, "{name}");
    }
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
