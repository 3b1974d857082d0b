//! The memory rules: coalescing, bank conflicts, same-address atomics.

use super::*;

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
