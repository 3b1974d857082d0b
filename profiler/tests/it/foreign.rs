//! The diagnosis on kernels the lab did not build, from real H200 captures
//! (`tests/fixtures/h200/`, made by `gpu/foreign.sh` with plain ncu commands): the planted
//! faults of `gpu/faults_lab.cu`, and PyTorch's and cuBLAS's kernels (`gpu/torch_lab.py`),
//! the latter also from a report made by plain `ncu --set full`, without this lab's metrics.

use profiler::diagnose::Kind;
use profiler::program::{self, Kernel};

fn kernels(name: &str) -> Vec<Kernel> {
    program::diagnose_all(crate::h200_launches(name))
}

fn explain(k: &Kernel) -> String {
    format!(
        "{}: {}",
        k.short,
        profiler::report::findings_text(&k.diagnosis)
    )
}

/// What each planted kernel's headline must name (None: no fault). The CUDA C++ program plants
/// each fault beside its fixed twin; where a twin has a fault of its own the counters show, the
/// diagnosis names it (the stride-1 copy moves 4 bytes per thread, too few in flight; the lean
/// gather still gathers at random).
const PLANTED: [(&str, Option<&str>); 25] = [
    ("gemm_fp32", Some("tensor-cores")),
    ("gemm_bf16", None),
    ("strided_32", Some("coalescing")),
    ("strided_1", Some("latency")),
    // Both register twins gather at random (13 sectors a request, 10 of 32 bytes used), and
    // the L2, their busiest unit, moves 3.2x the bytes asked in both: that is the larger lever
    // for each. The hog's register cap is its second finding (~30 %: the lean twin runs the
    // same gather with the L2 at 92 % instead of 75 %).
    ("regs_hog", Some("coalescing")),
    ("regs_lean", Some("coalescing")),
    ("bank_column", Some("bank-conflicts")),
    ("bank_padded", None),
    // A partial wave of issue-bound blocks runs faster than a full one: the tail costs little.
    ("tail_1p15", None),
    ("tail_waves", None),
    ("small_grid", Some("undersized-grid")),
    ("full_grid", None),
    ("diverge_lane", Some("divergence")),
    ("diverge_warp", None),
    ("spill_local", Some("spills")),
    ("spill_regs", Some("latency")),
    ("axpy", None),
    // At full occupancy one stage of 16-byte copies already keeps DRAM busy.
    ("async_1", None),
    ("async_4", None),
    ("sfu_sin", Some("sfu")),
    ("sfu_poly", None),
    ("l2_small", None),
    ("l2_big", None),
    // The shared-memory tree's cost is its idle lanes, not its barrier waits.
    ("barrier_tree", Some("divergence")),
    ("barrier_shfl", Some("latency")),
];

#[test]
fn every_planted_fault_heads_its_kernel_and_the_healthy_twins_stay_clean() {
    let ks = kernels("faults");
    assert_eq!(ks.len(), PLANTED.len());
    for (k, (name, want)) in ks.iter().zip(PLANTED) {
        assert_eq!(k.diagnosis.verdict, want, "{name}\n{}", explain(k));
        // A fault is stated as the first fix, a healthy kernel as its bound alone.
        assert_eq!(
            k.diagnosis.headline.contains("; first fix: "),
            want.is_some(),
            "{name}: {}",
            k.diagnosis.headline
        );
    }
}

#[test]
fn the_estimated_costs_track_what_the_faults_cost_in_time() {
    let ks = kernels("faults");
    let weight = |i: usize, rule: &str| {
        ks[i]
            .diagnosis
            .get(rule)
            .and_then(|f| f.weight)
            .unwrap_or_else(|| panic!("{} has no {rule}", PLANTED[i].0))
    };
    // The CUDA events (faults-times.csv): the conflicted tile takes 18.5x the padded one's
    // time, so the conflicts are nearly all of it; the spilled histogram 555 µs against 421 µs
    // (24 %); 16 blocks on 132 SMs leave seven in eight idle.
    assert!(weight(6, "bank-conflicts") > 0.9);
    assert!((0.15..0.35).contains(&weight(14, "spills")));
    assert!(weight(10, "undersized-grid") > 0.8);
    // The tail is found, and weighed as small as it is (833 µs against 739: 11 %).
    let tail = ks[8].diagnosis.get("tail").expect("tail found");
    assert!((0.03..0.15).contains(&tail.weight.unwrap()), "{tail:?}");
}

/// PyTorch's kernels: what each one's headline names, from both reports.
const TORCH: [(&str, Option<&str>); 6] = [
    ("sm80_xmma_gemm_f32f32", Some("tensor-cores")),
    ("nvjet_sm90_tst", None),
    (
        "cunn_SoftMaxForwardReg<float, float, float, SoftMaxForwardEpilogue, long, 4>",
        None,
    ),
    ("vectorized_layer_norm_kernel<float, float, 0>", None),
    ("reduce_kernel<512, 1, ", None),
    ("elementwise_kernel<128, 2, ", Some("coalescing")),
];

#[test]
fn pytorch_kernels_are_named_and_diagnosed_alike_from_either_report() {
    for report in ["torch", "torch-plain"] {
        let ks = kernels(report);
        assert_eq!(ks.len(), TORCH.len(), "{report}");
        for (k, (name, want)) in ks.iter().zip(TORCH) {
            assert!(
                k.short.starts_with(name),
                "{report}: {} for {name}",
                k.short
            );
            assert_eq!(k.diagnosis.verdict, want, "{report} {name}\n{}", explain(k));
        }
    }
}

#[test]
fn pytorch_findings_that_cost_nothing_raise_no_alarm() {
    let ks = kernels("torch");
    let find = |i: usize, rule: &str| ks[i].diagnosis.get(rule).cloned();
    // The sum's one 4-byte store per block wastes most of its sector, but those bytes are a
    // sliver of what the kernel moves: no alarm.
    assert!(
        find(4, "coalescing").is_none_or(|f| f.weight.unwrap() < 0.01),
        "{}",
        explain(&ks[4])
    );
    // cuBLAS's FP32 GEMM loads through cp.async: the SASS-level bytes per sector read 0 there,
    // which is no measurement, not an uncoalesced load.
    assert!(find(0, "coalescing").is_none(), "{}", explain(&ks[0]));
    // Both GEMMs cap occupancy by registers, by design: with a pipe saturated it costs nothing.
    for i in [0, 1] {
        let occ = find(i, "occupancy").expect("the cap is seen");
        assert_eq!(occ.weight, Some(0.0), "{occ:?}");
    }
    // The tensor-core GEMM's warps wait on barriers while its tensor pipe is 95 % busy.
    assert!(find(1, "barrier").is_none_or(|f| f.weight.unwrap() < 0.1));
    let bound = &ks[1].diagnosis.findings[0];
    assert_eq!(bound.kind, Kind::Bound);
    assert!(bound.verdict.contains("tensor pipe"), "{}", bound.verdict);
}

#[test]
fn a_throttle_is_traced_to_its_pipe() {
    let ks = kernels("faults");
    // __sinf queues through the MIO: the stall is mio_throttle, from the XU pipe.
    let stall = ks[19].diagnosis.get("stall").unwrap();
    assert!(stall.verdict.contains("mio_throttle"), "{}", stall.verdict);
    assert!(
        stall.evidence.contains("from the XU pipe"),
        "{}",
        stall.evidence
    );
    // The conflicted tile's mio_throttle comes from shared memory.
    let stall = ks[6].diagnosis.get("stall").unwrap();
    assert!(
        stall.evidence.contains("from shared memory"),
        "{}",
        stall.evidence
    );
}
