//! The roof kernels on the GPU, every Rust backend: each must do exactly the work its rate is
//! counted from (a roof that measured nothing would report a fast rate and be wrong), so each
//! launch is checked word for word: the same-address word (f32 and i32) ends at its count of
//! `red`s, every spread line at its own, every shared-memory thread at its checksum, every
//! block's mark at its index, every scattered element where the naive transpose puts it,
//! every tile-copied element at its source's index, every tree's block sum exact (also held to
//! fewer blocks per SM), the load phase finding its one key (and nothing without its load).
//! Each case resets and launches twice before the check, so the reset is checked too. Then one bench run measures
//! every roof and reads them back. Skips visibly without a GPU.

use crate::common::{assert_no_failures, lab_or_skip};
use catalog::Family;
use catalog::kernels::Tree;
use catalog::records::{Cache, Status};
use catalog::roofs as roof;
use host::bench::measure::{Bench, roofs as bench_roofs};
use host::bench::{Args, Format, Plan};
use host::cases::Case;
use host::cases::roofs::{
    AtomicSame, AtomicSpread, EXACT_COUNT_MAX, EmptyBlocks, LoadWait, ScatterStore, SharedRw,
    TileCopy, TreeAlone, scatter_value, tile_copy_source,
};
use host::cases::verify::Verdict;
use host::launchers::roofs as kernels;
use host::placement::ResultSlots;
use host::{Backend, HostError, Lab};

/// The backends that carry the roofs (the Rust compilers).
fn rust_backends(lab: &Lab) -> Vec<Backend> {
    lab.backends()
        .into_iter()
        .filter(|&b| kernels::atomic_same().carried_by(b))
        .collect()
}

/// Reset, launch, reset, launch, wait, check: a failure line for `failures`, or `ok`.
fn twice(
    lab: &Lab,
    case: &impl Case,
    verify: impl FnOnce() -> host::Result<Verdict>,
    label: &str,
    failures: &mut Vec<String>,
) {
    let run = || -> host::Result<Verdict> {
        for _ in 0..2 {
            case.reset()?;
            case.launch()?;
        }
        lab.sync()?;
        verify()
    };
    match run() {
        Ok(Ok(note)) => println!("ok      {label}: {note}"),
        Ok(Err(wrong)) => failures.push(format!("{label}: {wrong}")),
        Err(e) => failures.push(format!("{label}: {e}")),
    }
}

#[test]
fn atomic_same_counts_every_red_exactly() {
    let Some(lab) = lab_or_skip("atomic_same_counts_every_red_exactly") else {
        return;
    };
    let slots = ResultSlots::new().unwrap();
    let mut failures = Vec::new();
    for b in rust_backends(&lab) {
        // One red per block (the reductions' shape), then looped blocks; two different words.
        for (slot, blocks, per_block) in [
            (0, 1, 1),
            (0, 257, 1),
            (5, 4097, 1),
            (5, 1 << 20, 1),
            (0, 7, 3),
            (5, 1056, 993),
            (0, 64, (EXACT_COUNT_MAX / 64) as u32),
        ] {
            let label = format!("atomic_same_f32 [{b}] slot {slot}, {blocks} x {per_block}");
            match AtomicSame::new(&lab, b, slots.slot::<f32>(slot), blocks, per_block) {
                Ok(c) => twice(&lab, &c, || c.verify(), &label, &mut failures),
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
        // The i32 chain: the s32 red, into the i32 reductions' word.
        for (slot, blocks, per_block) in [(0, 1, 1), (3, 4097, 1), (3, 1 << 20, 1), (0, 7, 3)] {
            let label = format!("atomic_same_i32 [{b}] slot {slot}, {blocks} x {per_block}");
            match AtomicSame::new(&lab, b, slots.slot::<i32>(slot), blocks, per_block) {
                Ok(c) => twice(&lab, &c, || c.verify(), &label, &mut failures),
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
    }
    assert_no_failures(&failures);
    // One red past what an f32 counts exactly is refused before launching.
    let e = AtomicSame::new(
        &lab,
        Backend::Llvm,
        slots.slot::<f32>(0),
        EXACT_COUNT_MAX + 1,
        1,
    );
    assert!(
        matches!(e, Err(HostError::TooLarge { .. })),
        "{:?}",
        e.err()
    );
}

#[test]
fn atomic_spread_counts_every_line_exactly() {
    let Some(lab) = lab_or_skip("atomic_spread_counts_every_line_exactly") else {
        return;
    };
    let mut failures = Vec::new();
    for b in rust_backends(&lab) {
        for (reds, lines) in [(1, 1), (2048, 64), (1 << 20, 1 << 10), (1 << 26, 1 << 16)] {
            let label = format!("atomic_spread_f32 [{b}] {reds} reds, {lines} lines");
            match AtomicSpread::new(&lab, b, reds, lines) {
                Ok(c) => {
                    assert!(c.reds() >= reds && c.reds() < reds + 2048, "{label}");
                    twice(&lab, &c, || c.verify(), &label, &mut failures)
                }
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
    }
    assert_no_failures(&failures);
    for (reds, lines) in [(1 << 20, 3), (1 << 26, 1)] {
        let e = AtomicSpread::new(&lab, Backend::Llvm, reds, lines);
        assert!(e.is_err(), "{reds} reds over {lines} lines must be refused");
    }
}

#[test]
fn shared_rw_leaves_every_threads_checksum() {
    let Some(lab) = lab_or_skip("shared_rw_leaves_every_threads_checksum") else {
        return;
    };
    let mut failures = Vec::new();
    for b in rust_backends(&lab) {
        for trips in [0, 1, 3, 512] {
            let label = format!("shared_rw [{b}] {trips} trips");
            match SharedRw::new(&lab, b, trips) {
                Ok(c) => twice(&lab, &c, || c.verify(), &label, &mut failures),
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
    }
    assert_no_failures(&failures);
}

#[test]
fn empty_blocks_mark_every_block() {
    let Some(lab) = lab_or_skip("empty_blocks_mark_every_block") else {
        return;
    };
    let mut failures = Vec::new();
    for b in rust_backends(&lab) {
        for blocks in [1, 257, 1 << 22] {
            let label = format!("empty_blocks [{b}] {blocks} blocks");
            match EmptyBlocks::new(&lab, b, blocks) {
                Ok(c) => twice(&lab, &c, || c.verify(), &label, &mut failures),
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
    }
    assert_no_failures(&failures);
    assert!(EmptyBlocks::new(&lab, Backend::Llvm, 0).is_err());
}

#[test]
fn scatter_store_writes_every_element_where_the_naive_transpose_does() {
    let Some(lab) =
        lab_or_skip("scatter_store_writes_every_element_where_the_naive_transpose_does")
    else {
        return;
    };
    let mut failures = Vec::new();
    for b in rust_backends(&lab) {
        for (rows, cols) in [(1, 1), (33, 31), (1000, 777), (64, 64), (8192, 8192)] {
            let label = format!("scatter_store [{b}] {rows}x{cols}");
            match ScatterStore::new(&lab, b, rows, cols) {
                Ok(c) => twice(&lab, &c, || c.verify(), &label, &mut failures),
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
        // The same positions as the naive transpose of the input's indices (exact in f32 up to
        // 2^24 elements).
        let (rows, cols) = (1000u32, 777u32);
        let iota: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
        let input = lab.upload(&iota).unwrap();
        let naive_out = lab.upload(&vec![0f32; iota.len()]).unwrap();
        let scatter_out = lab.upload(&vec![0u32; iota.len()]).unwrap();
        let naive = host::launchers::kernel("transpose_naive");
        lab.launch_transpose(b, naive, &input, &naive_out, rows, cols, &lab.stream)
            .unwrap();
        lab.launch_scatter_store(b, &scatter_out, rows, cols, &lab.stream)
            .unwrap();
        lab.sync().unwrap();
        let (mut t, mut s) = (vec![0f32; iota.len()], vec![0u32; iota.len()]);
        cust::memory::CopyDestination::copy_to(&*naive_out, &mut t[..]).unwrap();
        cust::memory::CopyDestination::copy_to(&*scatter_out, &mut s[..]).unwrap();
        let differ = (0..t.len()).filter(|&i| t[i] as u32 != s[i]).count();
        if differ > 0 {
            failures.push(format!(
                "scatter_store [{b}] {rows}x{cols}: {differ} elements differ from transpose_naive's"
            ));
        }
        assert_eq!(s[1], scatter_value(1, rows, cols));
    }
    assert_no_failures(&failures);
    assert!(ScatterStore::new(&lab, Backend::Llvm, 0, 5).is_err());
}

#[test]
fn every_tree_alone_sums_every_block_exactly() {
    let Some(lab) = lab_or_skip("every_tree_alone_sums_every_block_exactly") else {
        return;
    };
    let mut failures = Vec::new();
    for b in rust_backends(&lab) {
        for t in Tree::ALL {
            for blocks in [1, 7, 4097, 1 << 20] {
                let label = format!("{} [{b}] {blocks} blocks", t.roof());
                match TreeAlone::<f32>::new(&lab, b, t, blocks, None) {
                    Ok(c) => twice(
                        &lab,
                        &c,
                        || c.verify(),
                        &format!("{label} f32"),
                        &mut failures,
                    ),
                    Err(e) => failures.push(format!("{label} f32: {e}")),
                }
                match TreeAlone::<i32>::new(&lab, b, t, blocks, None) {
                    Ok(c) => twice(
                        &lab,
                        &c,
                        || c.verify(),
                        &format!("{label} i32"),
                        &mut failures,
                    ),
                    Err(e) => failures.push(format!("{label} i32: {e}")),
                }
            }
        }
    }
    assert_no_failures(&failures);
    assert!(TreeAlone::<i32>::new(&lab, Backend::Llvm, Tree::V1, 0, None).is_err());
}

#[test]
fn a_tree_held_to_fewer_blocks_per_sm_gets_that_many_and_still_sums_exactly() {
    let Some(lab) =
        lab_or_skip("a_tree_held_to_fewer_blocks_per_sm_gets_that_many_and_still_sums_exactly")
    else {
        return;
    };
    let mut failures = Vec::new();
    for b in rust_backends(&lab) {
        let full = TreeAlone::<i32>::new(&lab, b, Tree::V3, 4097, None).unwrap();
        assert_eq!(full.resident().unwrap(), 8, "[{b}] 256 threads: 8 per SM");
        for held in [1, 2, 4, 6] {
            let label = format!("tree_v3 [{b}] i32 held to {held} per SM");
            match TreeAlone::<i32>::new(&lab, b, Tree::V3, 4097, Some(held)) {
                Ok(c) => {
                    assert_eq!(c.resident().unwrap(), held, "{label}");
                    twice(&lab, &c, || c.verify(), &label, &mut failures);
                }
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
    }
    assert_no_failures(&failures);
    // More than the threads allow is refused with the occupancy it would get.
    let e = TreeAlone::<i32>::new(&lab, Backend::Llvm, Tree::V1, 7, Some(9)).err();
    assert!(
        matches!(
            &e,
            Some(HostError::Invalid {
                what: "occupancy",
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn the_load_phase_finds_its_one_key_and_nothing_without_its_load() {
    let Some(lab) = lab_or_skip("the_load_phase_finds_its_one_key_and_nothing_without_its_load")
    else {
        return;
    };
    let mut failures = Vec::new();
    for b in rust_backends(&lab) {
        for n in [256, 1000, 1 << 22] {
            for (with_load, resident) in [(true, 1), (false, 1), (true, 8)] {
                let label =
                    format!("load_wait [{b}] {n} elements, load {with_load}, {resident}/SM");
                match LoadWait::new(&lab, b, n, resident, with_load) {
                    Ok(c) => twice(&lab, &c, || c.verify(), &label, &mut failures),
                    Err(e) => failures.push(format!("{label}: {e}")),
                }
            }
        }
    }
    assert_no_failures(&failures);
    assert!(LoadWait::new(&lab, Backend::Llvm, 0, 1, true).is_err());
}

#[test]
fn tile_copy_moves_every_tile_whole_to_the_transposed_place() {
    let Some(lab) = lab_or_skip("tile_copy_moves_every_tile_whole_to_the_transposed_place") else {
        return;
    };
    let mut failures = Vec::new();
    for b in rust_backends(&lab) {
        for (rows, cols) in [(32, 32), (64, 96), (96, 64), (4096, 4096), (8192, 8192)] {
            let label = format!("tile_copy [{b}] {rows}x{cols}");
            match TileCopy::new(&lab, b, rows, cols) {
                Ok(c) => twice(&lab, &c, || c.verify(), &label, &mut failures),
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
    }
    assert_no_failures(&failures);
    // The output's first row holds the first input tile's first row, then the tile below's.
    assert_eq!(tile_copy_source(32, 64, 96), 32 * 96);
    // A side that is not a whole number of tiles is refused before anything is allocated.
    for (rows, cols) in [(33, 32), (32, 1000), (0, 32)] {
        let e = TileCopy::new(&lab, Backend::Llvm, rows, cols);
        assert!(
            matches!(e, Err(HostError::Invalid { .. })),
            "{rows}x{cols}: {:?}",
            e.err()
        );
    }
}

/// One bench run of the roofs with a reduction (for the calibrated word), the ceilings and
/// the launch gap: every roof row passes its check, and every roof comes back, within what the
/// hardware can do (wide bounds: this catches a roof that counts the wrong thing, not a slow
/// GPU).
#[test]
fn a_bench_run_measures_every_roof() {
    let Some(lab) = lab_or_skip("a_bench_run_measures_every_roof") else {
        return;
    };
    let args = Args {
        size: vec![1 << 20],
        sweep: false,
        transpose: vec![1024],
        backend: vec![],
        kernel: vec!["reduce_v1".into(), "ceiling".into(), "bump".into()],
        dtype: vec![host::bench::Dtype::F32],
        shape: vec![],
        reps: 5,
        warmup: 1,
        cache: Default::default(),
        format: Format::Json,
        roof_rows: false,
        out: None,
        seed: 4,
        quiet: true,
    };
    let plan = Plan::new(&args, &lab.backends()).unwrap();
    let mut bench = Bench::new(&lab, &plan, true).unwrap();
    bench.compute_ceiling().unwrap();
    bench.reductions().unwrap();
    bench.roofs().unwrap();
    bench.launch_gap().unwrap();
    let slot = bench.atomic_slot.clone();
    let rows = bench.finish();

    let roof_rows: Vec<_> = rows.iter().filter(|r| roof::is_roof(&r.kernel)).collect();
    // Forty-three rows (five kernels, the i32 same-address, the looped same-address, the
    // timed empty launch, four trees in two types at four occupancies, the load phase with and
    // without its load; the tile copy at the one edge) per Rust backend.
    assert_eq!(
        roof_rows.len(),
        43 * rust_backends(&lab).len(),
        "{roof_rows:#?}"
    );
    for r in &roof_rows {
        assert_eq!(
            r.status,
            Status::Ok,
            "{} [{}]: {}",
            r.kernel,
            r.backend,
            r.note
        );
        assert_eq!(r.section, Family::Ceiling);
        println!(
            "{} [{}]: {}",
            r.kernel,
            r.backend,
            host::bench::report::print::note(r)
        );
    }

    let roofs = bench_roofs::measured(
        &rows,
        &[Cache::Hot],
        Some(lab.info.sm_clock_khz as f64 * 1e3),
        slot,
    )
    .expect("the ceilings ran, so the roofs come back");
    println!("{roofs:#?}");
    let ns = roofs.atomic_same_ns.unwrap();
    let looped = roofs.atomic_same_looped_ns.unwrap();
    assert!(
        (0.3..20.0).contains(&ns) && (0.3..20.0).contains(&looped),
        "{ns} {looped}"
    );
    assert!(
        roofs
            .atomic_same_slot
            .as_deref()
            .unwrap()
            .contains("group by reduce_v4"),
        "the word is the calibrated one: {:?}",
        roofs.atomic_same_slot
    );
    // Distinct lines are not serialised on one slice: faster than one word.
    assert!(roofs.atomic_spread_per_s.unwrap() > 1e9 / ns);
    // At most one wavefront per SM per cycle (32 banks × 4 bytes), with room for the clock.
    let per_sm_cycle = roofs.shared_wavefronts_per_s.unwrap()
        / lab.info.sm_count as f64
        / roofs.sm_clock_hz.unwrap();
    assert!((0.05..1.2).contains(&per_sm_cycle), "{per_sm_cycle}");
    // v1 retires a block (with its loads, tree and red) every ~1.8 ns: empty ones are faster.
    assert!(
        roofs.blocks_per_s.unwrap() > 4e8,
        "{:?}",
        roofs.blocks_per_s
    );
    assert!(roofs.scattered_store_sectors_per_s.unwrap() > 1e9);
    // The i32 chain is a rate of its own, within what the hardware can do; the tile order
    // moves bytes at a DRAM-like rate (1024² fits the L2: faster than DRAM is allowed).
    let i32_ns = roofs.atomic_same_i32_ns.unwrap();
    assert!((0.2..20.0).contains(&i32_ns), "{i32_ns}");
    let tiles = roofs.tile_copy_bytes_per_s.unwrap();
    assert!((1e11..2e13).contains(&tiles), "{tiles}");
    // Every tree in both types, each slower than an empty block (it does a tree) and faster
    // than 20 ns per block.
    assert_eq!(roofs.tree_ns.len(), 8, "{:?}", roofs.tree_ns);
    let empty_ns = 1e9 / roofs.blocks_per_s.unwrap();
    for (entry, ns) in &roofs.tree_ns {
        assert!((empty_ns..20.0).contains(ns), "{entry}: {ns} ns per block");
    }
    // Each tree on each backend at 8, 6, 4 and 2 per SM, slower per block with fewer.
    assert_eq!(roofs.tree_resident_ns.len(), 8);
    for (entry, by_backend) in &roofs.tree_resident_ns {
        assert_eq!(by_backend.len(), rust_backends(&lab).len(), "{entry}");
        for (b, curve) in by_backend {
            let got: Vec<u32> = curve.keys().copied().collect();
            assert_eq!(got, [2, 4, 6, 8], "{entry} [{b}]");
            assert!(curve[&2] > curve[&8], "{entry} [{b}]: {curve:?}");
        }
    }
    // A block's load holds its slot for about a DRAM latency (the H200: ~360 ns).
    let load = roofs.load_wait.expect("the load roof ran");
    let slot_ns = load.slot_ns(lab.info.sm_count);
    assert!((50.0..5000.0).contains(&slot_ns), "{load:?}: {slot_ns} ns");
    assert!((0.5e-6..50e-6).contains(&roofs.launch_s.unwrap()));
    // Every backend's empty launch ran, and its time is the timed-launch roof.
    for b in rust_backends(&lab) {
        assert!(
            roof_rows
                .iter()
                .any(|r| r.kernel == roof::EMPTY_LAUNCH && r.backend == b),
            "no {} row for {b}",
            roof::EMPTY_LAUNCH
        );
    }
    let timed = roofs
        .timed_launch_s
        .expect("the empty launch row is a roof");
    assert!((0.5e-6..50e-6).contains(&timed), "{timed}");
}
