//! The roofs' unit tests: which row each roof is read from, and the at-size rule.

use super::*;
use crate::{Dtype, Family, Runner};

/// A measured row of `kernel` doing `n` operations in `us`.
fn row(kernel: &str, backend: &str, n: u64, us: f64) -> Row {
    let backend: Runner = backend.parse().unwrap();
    let mut r = Row::new(
        Family::Ceiling,
        kernel,
        backend,
        Dtype::F32,
        n,
        n.to_string(),
        0,
    );
    r.status = Status::Ok;
    r.median_us = Some(us);
    r
}

fn with_gbps(mut r: Row, bytes: u64, g: f64) -> Row {
    r.bytes = bytes;
    r.gbps = Some(g);
    r
}

fn ceilings() -> Vec<Row> {
    let mut fma = row(FMA_PEAK, "llvm", 1, 1.0);
    fma.gflops = Some(65_000.0);
    let mut gap = row(BACK_TO_BACK, "llvm", 4096, 3500.0);
    gap.us_per_launch = Some(3.5);
    let mut gap2 = row(BACK_TO_BACK, "nvvm", 4096, 3600.0);
    gap2.us_per_launch = Some(3.6);
    vec![
        // The smaller size's read is faster (L2): the largest size's counts.
        with_gbps(row(READ_STREAM, "llvm", 1 << 24, 1.0), 1 << 26, 9000.0),
        with_gbps(row(READ_STREAM, "llvm", 1 << 28, 1.0), 1 << 30, 4400.0),
        with_gbps(row(READ_STREAM, "nvvm", 1 << 28, 1.0), 1 << 30, 4500.0),
        with_gbps(row(D2D_COPY, "driver", 1 << 24, 1.0), 1 << 27, 5000.0),
        with_gbps(row(D2D_COPY, "driver", 1 << 28, 1.0), 1 << 31, 4200.0),
        fma,
        gap,
        gap2,
    ]
}

#[test]
fn each_roof_is_its_fastest_row_and_the_ceilings_their_largest_size() {
    let mut rows = ceilings();
    rows.extend([
        // 2^20 reds in 1900 µs (llvm) and 1910 µs (nvvm): 1.812 ns each at best.
        row(ATOMIC_SAME, "llvm", 1 << 20, 1900.0),
        row(ATOMIC_SAME, "nvvm", 1 << 20, 1910.0),
        row(ATOMIC_SAME_LOOPED, "llvm", 1 << 20, 1800.0),
        row(ATOMIC_SPREAD, "llvm", 1 << 26, 671.0),
        row(SHARED_RW, "llvm", 2_000_000, 1000.0),
        row(EMPTY_BLOCKS, "llvm", 1 << 22, 1000.0),
        row(SCATTER_STORE, "nvvm", 1 << 26, 1000.0),
    ]);
    let mut failed = row(EMPTY_BLOCKS, "nvvm", 1 << 22, 1.0);
    failed.status = Status::Failed;
    rows.push(failed);
    let mut cold = row(SHARED_RW, "llvm", 2_000_000, 1.0);
    cold.cache = Cache::Cold;
    rows.push(cold);

    let r = Roofs::from_rows(&rows, Cache::Hot, Some(1.98e9)).unwrap();
    assert_eq!(r.read_bytes_per_s, 4500e9);
    assert_eq!(r.copy_bytes_per_s, 4200e9);
    assert_eq!(r.fma_flop_per_s, 65_000e9);
    let ns = r.atomic_same_ns.unwrap();
    assert!((ns - 1900e3 / (1 << 20) as f64).abs() < 1e-9, "{ns}");
    let looped = r.atomic_same_looped_ns.unwrap();
    assert!((looped - 1800e3 / (1 << 20) as f64).abs() < 1e-9);
    assert!((r.atomic_spread_per_s.unwrap() - (1u64 << 26) as f64 / 671e-6).abs() < 1.0);
    // The failed row's 1 µs and the cold row's are not roofs.
    assert_eq!(r.blocks_per_s, Some((1u64 << 22) as f64 / 1e-3));
    assert_eq!(r.shared_wavefronts_per_s, Some(2e9));
    assert_eq!(
        r.scattered_store_sectors_per_s,
        Some((1u64 << 26) as f64 / 1e-3)
    );
    assert!((r.launch_s.unwrap() - 3.5e-6).abs() < 1e-15);
    assert_eq!(
        (r.sm_clock_hz, r.atomic_same_slot.as_deref()),
        (Some(1.98e9), None)
    );

    let rows = r.table_rows(132);
    let value = |name: &str| {
        rows.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(
        value("same-address red, ns each"),
        Some("1.812"),
        "{rows:?}"
    );
    assert_eq!(
        value("same-address red, one wave looping, ns each"),
        Some("1.717"),
        "{rows:?}"
    );
    // 2e9 wavefronts/s over 132 SMs at 1.98 GHz.
    assert_eq!(
        value("shared memory, G wavefronts/s"),
        Some("2.0 (0.01 per SM per cycle at 1980 MHz)"),
        "{rows:?}"
    );
    assert_eq!(value("launch, back to back, µs"), Some("3.50"), "{rows:?}");
}

#[test]
fn the_timed_launch_is_the_empty_launch_row_else_the_smallest_read_streams() {
    let mut rows = ceilings();
    // A file without the row: the median of the per-size best read stream up to 2^16.
    for (n, us) in [
        (1 << 10, 5.2),
        (1 << 12, 5.6),
        (1 << 14, 5.4),
        (1 << 20, 9.0),
    ] {
        rows.push(row(READ_STREAM, "llvm", n, us));
        rows.push(row(READ_STREAM, "nvvm", n, us + 1.0));
    }
    let (r, from) = Roofs::measure(&rows, Cache::Hot, None);
    assert!((r.timed_launch_s.unwrap() - 5.4e-6).abs() < 1e-15);
    assert!(
        from["timed_launch_s"].contains("at 3 sizes up to 2^16"),
        "{from:?}"
    );
    assert!(
        from["launch_s"].starts_with("bump_back_to_back [llvm]"),
        "{from:?}"
    );
    assert!(
        from["read_bytes_per_s"].starts_with("read_stream [nvvm]"),
        "{from:?}"
    );
    // The cost a timed row pays: the timed launch over the back-to-back one.
    assert_eq!(r.launch_cost_s(), r.timed_launch_s);

    // The row, fastest backend, replaces the rule.
    rows.push(row(EMPTY_LAUNCH, "llvm", 1, 5.9));
    rows.push(row(EMPTY_LAUNCH, "nvvm", 1, 5.7));
    let (r, from) = Roofs::measure(&rows, Cache::Hot, None);
    assert!((r.timed_launch_s.unwrap() - 5.7e-6).abs() < 1e-15);
    assert!(
        from["timed_launch_s"].starts_with("empty_launch [nvvm]"),
        "{from:?}"
    );
    assert!(r.table_rows(132).contains(&(
        "launch, one timed alone, µs".to_string(),
        "5.70".to_string()
    )));
    assert_eq!(
        rate(&row(EMPTY_LAUNCH, "nvvm", 1, 5.7)).as_deref(),
        Some("5.70 µs per timed launch")
    );

    // Neither: the back-to-back launch is the cost.
    let (r, _) = Roofs::measure(&ceilings(), Cache::Hot, None);
    assert_eq!(r.timed_launch_s, None);
    assert_eq!(r.launch_cost_s(), r.launch_s);
}

#[test]
fn a_size_with_its_own_stream_row_takes_its_rate_less_the_launch() {
    let mut rows = ceilings();
    // 2^24 f32 read in 21.6 µs (nvcc) and 22.4 µs (llvm); 2^24 moved by the copy in 35 µs.
    rows.push(with_gbps(
        row(READ_STREAM, "llvm", 1 << 24, 22.4),
        1 << 26,
        3000.0,
    ));
    rows.push(with_gbps(
        row(READ_STREAM, "nvcc", 1 << 24, 21.6),
        1 << 26,
        3100.0,
    ));
    let mut cold = with_gbps(row(READ_STREAM, "nvcc", 1 << 24, 10.0), 1 << 26, 9000.0);
    cold.cache = Cache::Cold;
    rows.push(cold);
    let mut roofs = Roofs::from_rows(&rows, Cache::Hot, None).unwrap();
    roofs.timed_launch_s = Some(5.1e-6);
    // The ceilings' 2^24 rows took 1 µs; give the copy a real time.
    for r in rows
        .iter_mut()
        .filter(|r| r.kernel == D2D_COPY && r.n == 1 << 24)
    {
        r.median_us = Some(35.0);
    }

    let at = roofs.at_size(&rows, Cache::Hot, 1 << 26, 1 << 27);
    // The fastest hot row, its time less the launch: launch + bytes / rate is 21.6 µs.
    let want = (1u64 << 26) as f64 / (21.6e-6 - 5.1e-6);
    assert!(
        (at.read_bytes_per_s - want).abs() < 1.0,
        "{}",
        at.read_bytes_per_s
    );
    let back = 5.1e-6 + (1u64 << 26) as f64 / at.read_bytes_per_s;
    assert!((back - 21.6e-6).abs() < 1e-12);
    let copy = (1u64 << 27) as f64 / (35.0e-6 - 5.1e-6);
    assert!((at.copy_bytes_per_s - copy).abs() < 1.0);
    assert_eq!(at.fma_flop_per_s, roofs.fma_flop_per_s);

    // Sizes the run did not measure keep the largest size's roofs.
    let other = roofs.at_size(&rows, Cache::Hot, 1 << 27, 1 << 29);
    assert_eq!(other, roofs);
    assert_eq!(
        (other.read_bytes_per_s, other.copy_bytes_per_s),
        (4500e9, 4200e9)
    );
    // Cold rows bound cold rows only: no cold copy, and the cold read's own time.
    let cold = roofs.at_size(&rows, Cache::Cold, 1 << 26, 1 << 27);
    assert!((cold.read_bytes_per_s - (1u64 << 26) as f64 / 4.9e-6).abs() < 1.0);
    assert_eq!(cold.copy_bytes_per_s, roofs.copy_bytes_per_s);
    // A stream no longer than the launch says nothing about a rate.
    roofs.timed_launch_s = Some(40e-6);
    assert_eq!(roofs.at_size(&rows, Cache::Hot, 1 << 26, 1 << 27), roofs);
}

#[test]
fn measure_keeps_what_rows_without_every_ceiling_show() {
    let rows: Vec<Row> = ceilings()
        .into_iter()
        .filter(|r| r.kernel == READ_STREAM)
        .collect();
    let (r, from) = Roofs::measure(&rows, Cache::Hot, None);
    assert_eq!(r.read_bytes_per_s, 4500e9);
    assert_eq!((r.copy_bytes_per_s, r.fma_flop_per_s), (0.0, 0.0));
    assert_eq!(
        from.keys().copied().collect::<Vec<_>>(),
        ["read_bytes_per_s"]
    );
    assert!(Roofs::from_rows(&rows, Cache::Hot, None).is_none());
}

#[test]
fn without_the_three_ceilings_there_are_no_roofs() {
    let rows = ceilings();
    assert!(Roofs::from_rows(&rows, Cache::Hot, None).is_some());
    assert!(Roofs::from_rows(&rows, Cache::Cold, None).is_none());
    for name in [READ_STREAM, D2D_COPY, FMA_PEAK] {
        let some: Vec<Row> = rows.iter().filter(|r| r.kernel != name).cloned().collect();
        assert!(
            Roofs::from_rows(&some, Cache::Hot, None).is_none(),
            "{name}"
        );
    }
    // Ceilings alone: every other roof unmeasured.
    let r = Roofs::from_rows(&rows, Cache::Hot, None).unwrap();
    assert_eq!(r.atomic_same_ns, None);
    assert_eq!(r.table_rows(132).len(), 4);
}

#[test]
fn a_record_without_the_optional_roofs_reads_and_round_trips() {
    let text = r#"{"read_bytes_per_s": 4.5e12, "copy_bytes_per_s": 4.2e12,
        "fma_flop_per_s": 6.5e13}"#;
    let r: Roofs = serde_json::from_str(text).unwrap();
    assert_eq!(r.atomic_same_ns, None);
    assert_eq!(r.read_bytes_per_s, 4.5e12);
    let full = Roofs {
        atomic_same_ns: Some(1.81),
        atomic_same_slot: Some("slot 3 of 64".into()),
        blocks_per_s: Some(3e9),
        ..r
    };
    let back: Roofs = serde_json::from_str(&serde_json::to_string(&full).unwrap()).unwrap();
    assert_eq!(back, full);
}

#[test]
fn a_roof_rows_note_states_its_rate() {
    assert_eq!(
        rate(&row(ATOMIC_SAME, "llvm", 1 << 20, 1900.0)).as_deref(),
        Some("1.812 ns per red")
    );
    assert_eq!(
        rate(&row(EMPTY_BLOCKS, "llvm", 1 << 22, 1000.0)).as_deref(),
        Some("4.19 G blocks/s")
    );
    assert_eq!(rate(&row(READ_STREAM, "llvm", 1 << 20, 1.0)), None);
    let mut failed = row(SHARED_RW, "llvm", 1 << 20, 1.0);
    failed.median_us = None;
    assert_eq!(rate(&failed), None);
}

#[test]
fn every_roof_row_is_a_roof() {
    for name in [
        ATOMIC_SAME,
        ATOMIC_SPREAD,
        SHARED_RW,
        EMPTY_BLOCKS,
        SCATTER_STORE,
        TILE_COPY,
        LOAD_WAIT,
    ] {
        assert!(is_roof(name), "{name}");
    }
    assert!(!is_roof(READ_STREAM) && is_roof(ATOMIC_SAME_LOOPED) && is_roof(LOAD_WAIT_BASE));
}

#[test]
fn each_red_type_has_its_own_chain_and_the_tile_order_its_own_size() {
    let mut rows = ceilings();
    let typed = |dtype: &str, us: f64| {
        let mut r = row(ATOMIC_SAME, "llvm", 1 << 20, us);
        r.dtype = dtype.parse().unwrap();
        r
    };
    // The i32 chain is faster; it must not become the f32 rows' roof.
    rows.extend([typed("f32", 1850.0), typed("i32", 773.0)]);
    let tile = |edge: u64, us: f64| {
        let n = edge * edge;
        let mut r = row(TILE_COPY, "nvvm", n, us);
        r.bytes = 8 * n;
        r.gbps = Some(8.0 * n as f64 / (us * 1e-6) / 1e9);
        r
    };
    rows.extend([tile(4096, 37.3), tile(8192, 145.1)]);
    let (r, from) = Roofs::measure(&rows, Cache::Hot, None);
    assert!((r.atomic_same_ns.unwrap() - 1850e3 / (1 << 20) as f64).abs() < 1e-9);
    assert!((r.atomic_same_i32_ns.unwrap() - 773e3 / (1 << 20) as f64).abs() < 1e-9);
    // The largest size's rate is the record's; the smaller size's only at its own bytes.
    let largest = 8.0 * (8192u64 * 8192) as f64 / 145.1e-6;
    assert!((r.tile_copy_bytes_per_s.unwrap() / largest - 1.0).abs() < 1e-9);
    assert!(
        from["tile_copy_bytes_per_s"].starts_with("tile_copy [nvvm]"),
        "{from:?}"
    );
    let mut roofs = r.clone();
    roofs.timed_launch_s = Some(5e-6);
    let small = 8 * 4096u64 * 4096;
    let at = roofs.at_size(&rows, Cache::Hot, small / 2, small);
    let own = small as f64 / (37.3e-6 - 5e-6);
    assert!((at.tile_copy_bytes_per_s.unwrap() / own - 1.0).abs() < 1e-9);
    assert!(r.table_rows(132).contains(&(
        "same-address red.s32, ns each".to_string(),
        "0.737".to_string()
    )));
    assert_eq!(rate(&tile(4096, 37.3)).as_deref(), Some("3598 GB/s moved"));
}

#[test]
fn the_trees_by_occupancy_and_the_load_pair_are_read_per_compiler() {
    let mut rows = ceilings();
    let tree = |backend: &str, resident: u32, us: f64| {
        let mut r = row(TREE_V3, backend, 1 << 20, us);
        r.dtype = Dtype::I32;
        r.resident = Some(resident);
        r
    };
    // llvm's tree is flat from 6 to 8 per SM (and a hair faster at 6); nvvm's is slower.
    rows.extend([
        tree("llvm", 8, 1020.0),
        tree("llvm", 6, 1019.0),
        tree("llvm", 4, 1167.0),
        tree("nvvm", 8, 1497.0),
        tree("nvvm", 4, 2803.0),
    ]);
    let load = |kernel: &str, backend: &str, us: f64| {
        let mut r = row(kernel, backend, 1 << 26, us);
        r.dtype = Dtype::I32;
        r.resident = Some(1);
        r
    };
    rows.extend([
        load(LOAD_WAIT, "llvm", 1191.0),
        load(LOAD_WAIT_BASE, "llvm", 527.5),
        load(LOAD_WAIT, "nvvm", 1176.0),
        load(LOAD_WAIT_BASE, "nvvm", 515.9),
    ]);
    let (r, from) = Roofs::measure(&rows, Cache::Hot, None);
    let ns = |us: f64| us * 1e3 / (1u64 << 20) as f64;
    let llvm = &r.tree_resident_ns["tree_v3_i32"]["llvm"];
    assert_eq!(llvm.keys().copied().collect::<Vec<_>>(), [4, 6, 8]);
    assert!((llvm[&4] - ns(1167.0)).abs() < 1e-12);
    assert_eq!(r.tree_resident_ns["tree_v3_i32"]["nvvm"].len(), 2);
    // The tree alone is the fastest compiler's row at the occupancy the tree gets, not a held one.
    assert!((r.tree_ns["tree_v3_i32"] - ns(1020.0)).abs() < 1e-12);
    // The load pair of the compiler whose load costs the least: nvvm's 660.1 µs over 2^18 blocks.
    let w = r.load_wait.unwrap();
    let blocks = (1u64 << 18) as f64;
    assert_eq!(w.resident, 1);
    assert!((w.load_ns - 1176e3 / blocks).abs() < 1e-12);
    assert!((w.slot_ns(132) - (1176.0 - 515.9) * 1e3 / blocks * 132.0).abs() < 1e-9);
    assert!(
        from["load_wait"].starts_with("load_wait [nvvm]"),
        "{from:?}"
    );
    assert_eq!(
        rate(&load(LOAD_WAIT, "llvm", 1191.0)).as_deref(),
        Some("4.543 ns per block")
    );
    // A load row without its base row, or at another occupancy, gives no pair.
    let alone: Vec<Row> = rows
        .iter()
        .filter(|r| r.kernel != LOAD_WAIT_BASE)
        .cloned()
        .collect();
    assert_eq!(Roofs::measure(&alone, Cache::Hot, None).0.load_wait, None);
}
