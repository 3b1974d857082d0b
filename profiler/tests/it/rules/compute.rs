//! The rules of the pipes and the lanes: spills, divergence, tensor cores, the special-function
//! pipe, barriers that fill the ADU pipe.

use super::*;

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
