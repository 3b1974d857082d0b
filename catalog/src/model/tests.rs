use super::*;
use crate::kernels::{Tree, find};

fn k(name: &str) -> &'static Kernel {
    find(name).unwrap()
}

fn vector(dtype: Dtype, n: u64) -> Problem {
    Problem {
        dtype,
        size: Size::Vector(n),
        sm_count: 132,
        backend: None,
    }
}

fn square(edge: u32) -> Problem {
    Problem {
        dtype: Dtype::F32,
        size: Size::Matrix {
            rows: edge,
            cols: edge,
        },
        sm_count: 132,
        backend: None,
    }
}

fn counts_of(name: &str, p: &Problem) -> Counts {
    counts(k(name), p).unwrap()
}

#[test]
fn reductions_count_one_red_per_block_to_one_word() {
    let c = counts_of("reduce_v3", &vector(Dtype::F32, 1 << 28));
    assert_eq!(c.blocks, 1_048_576);
    assert_eq!(c.same_address_reds, 1_048_576);
    assert_eq!(c.read_bytes, 1 << 30);
    assert_eq!(c.written_bytes, 0);
    assert_eq!(c.barriers, 9 * 1_048_576);
    assert_eq!(c.shared_wavefronts, 45 * 1_048_576);
    assert_eq!((c.flops, c.launches), ((1 << 28) - 1, 1));
    // v4 and v5 cover 2048 elements per block: 8× fewer blocks and reds.
    let v4 = counts_of("reduce_v4", &vector(Dtype::F32, 1 << 28));
    assert_eq!((v4.blocks, v4.same_address_reds), (131_072, 131_072));
    // The chapter's per-block shared counts: v1 and v2 the same 150 wavefronts (v2's through
    // bank conflicts), v3 the minimum tree; v5 down to 64 values, then shuffles.
    let per_block = |name: &str| {
        let c = counts_of(name, &vector(Dtype::I32, 1 << 20));
        (c.shared_wavefronts / c.blocks, c.barriers / c.blocks)
    };
    assert_eq!(per_block("reduce_v1"), (150, 9));
    assert_eq!(per_block("reduce_v2"), (150, 9));
    assert_eq!(per_block("reduce_v5"), (28, 3));
    // One wave: 8 blocks of 256 threads per SM on 132 SMs, never more than the input needs.
    assert_eq!(
        counts_of("reduce_v6", &vector(Dtype::F32, 1 << 28)).blocks,
        1056
    );
    assert_eq!(
        counts_of("reduce_v6", &vector(Dtype::F32, 1 << 12)).blocks,
        4
    );
    // i32 adds are not FLOPs.
    assert_eq!(
        counts_of("reduce_v3", &vector(Dtype::I32, 1 << 20)).flops,
        0
    );
    let cub = counts_of("cub_reduce_sum", &vector(Dtype::F32, 1 << 20));
    assert_eq!(
        (cub.launches, cub.read_bytes, cub.same_address_reds),
        (2, 4 << 20, 0)
    );
}

#[test]
fn transposes_count_their_tiles_conflicts_and_scattered_sectors() {
    let n: u64 = 4096 * 4096;
    let tiled = counts_of("transpose_tiled", &square(4096));
    assert_eq!(tiled.blocks, 16_384);
    // 524,288 column reads of 32 wavefronts each (32-way), 524,288 conflict-free row stores.
    assert_eq!(tiled.shared_wavefronts, 524_288 * 32 + 524_288);
    assert_eq!((tiled.read_bytes, tiled.written_bytes), (4 * n, 4 * n));
    // Beside them, one L1 wavefront per 128 bytes loaded or stored: 64 per 8 KiB tile.
    assert_eq!(tiled.global_wavefronts, 16_384 * 64);
    let padded = counts_of("transpose_padded", &square(4096));
    assert_eq!(padded.shared_wavefronts, 2 * 524_288);
    let naive = counts_of("transpose_naive", &square(4096));
    // One sector per scattered lane, and the loads' 128 sectors per tile of 1024 elements.
    assert_eq!(
        (naive.scattered_sectors, naive.shared_wavefronts),
        (n + n / 8, 0)
    );
    // Its scattered stores are not coalesced wavefronts; its loads are.
    assert_eq!(naive.global_wavefronts, 4 * n / 128);
    // The three 32×32 raster transposes move every byte in the tile order; v4 (64×64, down
    // the columns) and the copy do not.
    for (t, c) in [(&naive, 8 * n), (&tiled, 8 * n), (&padded, 8 * n)] {
        assert_eq!(t.tile_order_bytes, c);
    }
    let v4 = counts_of("transpose_v4", &square(4096));
    assert_eq!((v4.blocks, v4.shared_wavefronts), (4096, n / 16));
    let copy = counts_of("copy_stream", &square(4096));
    assert_eq!(
        (copy.read_bytes, copy.written_bytes, copy.blocks),
        (4 * n, 4 * n, n / 1024)
    );
    assert_eq!((v4.tile_order_bytes, copy.tile_order_bytes), (0, 0));
    // A shape that is not a multiple of the tile still covers every element.
    let odd = Problem {
        size: Size::Matrix { rows: 33, cols: 65 },
        ..square(0)
    };
    assert_eq!(counts_of("transpose_padded", &odd).blocks, 2 * 3);
}

#[test]
fn the_roofs_themselves_and_the_demo_have_no_counts() {
    for name in ["fma_peak", "bump"] {
        assert!(
            counts(k(name), &vector(Dtype::F32, 1 << 20)).is_none(),
            "{name}"
        );
    }
    for kernel in crate::KERNELS {
        let reduce_or_transpose = matches!(
            kernel.family,
            crate::Family::Reduce | crate::Family::Transpose | crate::Family::Rows
        );
        assert_eq!(
            kernel.counts.is_some(),
            reduce_or_transpose || kernel.name == "read_stream",
            "{}",
            kernel.name
        );
    }
}

/// Round numbers: 1 TB/s read and copy, 2 ns per red, 5 µs per launch.
fn synthetic() -> Roofs {
    Roofs {
        read_bytes_per_s: 1e12,
        copy_bytes_per_s: 1e12,
        fma_flop_per_s: 1e14,
        atomic_same_ns: Some(2.0),
        launch_s: Some(5e-6),
        ..Roofs::default()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
}

#[test]
fn the_longest_roof_binds_and_the_launch_is_added() {
    let p = predict(k("reduce_v3"), &vector(Dtype::F32, 1 << 20), &synthetic()).unwrap();
    // 4096 reds × 2 ns = 8.192 µs; the read 4 MiB / 1 TB/s = 4.194 µs; the slice 4.194 µs +
    // 4096 × 2 / 3.10 ns.
    assert_eq!(p.bound, Roof::Atomic);
    assert!(close(p.bound_s(), 4096.0 * 2e-9));
    assert!(close(p.seconds, 4096.0 * 2e-9 + 5e-6));
    let slice = p
        .terms
        .iter()
        .find(|t| t.roof == Roof::ResultSlice)
        .unwrap();
    assert!(close(
        slice.seconds,
        (4u64 << 20) as f64 / 1e12 + 4096.0 * 2e-9 / RED_CHAIN_L2_CYCLES
    ));
    // Shared, blocks and scattered stores were not measured: named, not guessed.
    assert!(p.missing.contains(&Roof::Shared) && p.missing.contains(&Roof::Blocks));
    assert!(close(p.pct_of(p.us() * 2.0), 50.0));
}

#[test]
fn an_i32_row_takes_the_i32_chain_and_still_the_result_slice() {
    // Without the i32 chain measured, the row names it missing and keeps the slice.
    let mut roofs = synthetic();
    let p = predict(k("reduce_v4"), &vector(Dtype::I32, 1 << 28), &roofs).unwrap();
    assert!(p.terms.iter().all(|t| t.roof != Roof::Atomic));
    assert!(p.missing.contains(&Roof::Atomic));
    assert_eq!(p.bound, Roof::ResultSlice);
    let read = (1u64 << 30) as f64 / 1e12;
    assert!(close(
        p.seconds,
        read + 131_072.0 * 2e-9 / RED_CHAIN_L2_CYCLES + 5e-6
    ));
    // With it, v1's million reds at 0.75 ns: the i32 chain's rate, not the f32 one's 2 ns.
    roofs.atomic_same_i32_ns = Some(0.75);
    let p = predict(k("reduce_v1"), &vector(Dtype::I32, 1 << 28), &roofs).unwrap();
    let atomic = p.terms.iter().find(|t| t.roof == Roof::Atomic).unwrap();
    assert!(close(atomic.seconds, 1_048_576.0 * 0.75e-9));
    assert!(!p.missing.contains(&Roof::Atomic), "{:?}", p.missing);
    let f32_row = predict(k("reduce_v1"), &vector(Dtype::F32, 1 << 28), &roofs).unwrap();
    assert_eq!(f32_row.bound, Roof::Atomic);
    assert!(close(f32_row.bound_s(), 1_048_576.0 * 2e-9));
}

#[test]
fn the_tile_order_binds_the_padded_transpose_when_slower_than_the_copy() {
    let mut roofs = synthetic();
    roofs.tile_copy_bytes_per_s = Some(0.8e12);
    let p = predict(k("transpose_padded"), &square(4096), &roofs).unwrap();
    assert_eq!(p.bound, Roof::Tiles);
    assert!(close(p.bound_s(), 8.0 * 4096.0 * 4096.0 / 0.8e12));
    // v4 is not launched in that order: still the copy's.
    let v4 = predict(k("transpose_v4"), &square(4096), &roofs).unwrap();
    assert_eq!(v4.bound, Roof::Copy);
    assert!(v4.terms.iter().all(|t| t.roof != Roof::Tiles));
}

#[test]
fn a_writing_kernel_is_bound_by_the_copy_and_a_measured_roof_can_take_over() {
    let mut roofs = synthetic();
    let p = predict(k("transpose_tiled"), &square(4096), &roofs).unwrap();
    assert_eq!(p.bound, Roof::Copy);
    assert!(close(p.bound_s(), 8.0 * 4096.0 * 4096.0 / 1e12));
    // A slow enough shared-memory roof binds the conflicted tile, not the padded one.
    roofs.shared_wavefronts_per_s = Some(1e11);
    assert_eq!(
        predict(k("transpose_tiled"), &square(4096), &roofs)
            .unwrap()
            .bound,
        Roof::Shared
    );
    assert_eq!(
        predict(k("transpose_padded"), &square(4096), &roofs)
            .unwrap()
            .bound,
        Roof::Copy
    );
    // Without a launch roof the prediction says so and adds nothing.
    roofs.launch_s = None;
    let p = predict(k("copy_stream"), &square(4096), &roofs).unwrap();
    assert_eq!(p.launch_s, 0.0);
    assert_eq!(p.missing, [Roof::Blocks, Roof::Launch]);
    // CUB pays two launches.
    let cub = predict(
        k("cub_reduce_sum"),
        &vector(Dtype::F32, 1 << 20),
        &synthetic(),
    )
    .unwrap();
    assert!(close(cub.launch_s, 10e-6));
}

#[test]
fn a_timed_row_pays_the_timed_launch_when_measured() {
    let mut roofs = synthetic();
    roofs.timed_launch_s = Some(7e-6);
    let p = predict(k("reduce_v7"), &vector(Dtype::F32, 1 << 24), &roofs).unwrap();
    assert!(close(p.launch_s, 7e-6));
    assert!(close(p.seconds, p.bound_s() + 7e-6));
    // Two launches, each timed: twice the timed launch, not the back-to-back 5 µs.
    let cub = predict(k("cub_reduce_sum"), &vector(Dtype::F32, 1 << 20), &roofs).unwrap();
    assert!(close(cub.launch_s, 14e-6));
}

#[test]
fn the_slice_cycle_comes_from_the_chain_without_blocks_retiring_when_measured() {
    let mut roofs = synthetic();
    roofs.atomic_same_looped_ns = Some(3.1);
    let p = predict(k("reduce_v4"), &vector(Dtype::F32, 1 << 28), &roofs).unwrap();
    let slice = p
        .terms
        .iter()
        .find(|t| t.roof == Roof::ResultSlice)
        .unwrap();
    // One L2 cycle = 3.1 ns / 3.10 = 1 ns per red.
    assert!(close(
        slice.seconds,
        (1u64 << 30) as f64 / 1e12 + 131_072.0 * 1e-9
    ));
}

#[test]
fn a_one_wave_reductions_few_reds_leave_the_stream_its_bound() {
    // 1056 reds × 2 / 3.10 ns = 0.68 µs against a 268 µs read: under 5 %, no slice term.
    let p = predict(k("reduce_v6"), &vector(Dtype::F32, 1 << 28), &synthetic()).unwrap();
    assert_eq!(p.bound, Roof::Read);
    assert!(p.terms.iter().all(|t| t.roof != Roof::ResultSlice));
}

#[test]
fn sizes_read_back_from_their_labels() {
    assert_eq!(
        Size::of_label("4096x2048", 0),
        Some(Size::Matrix {
            rows: 4096,
            cols: 2048
        })
    );
    assert_eq!(Size::of_label("2^28", 1 << 28), Some(Size::Vector(1 << 28)));
    assert_eq!(Size::Vector(1 << 28).label(), "2^28");
    assert_eq!(Size::Vector(1000).label(), "1000");
    assert_eq!(Size::of_label("axb", 0), None);
    assert!(holds(109.0, 100.0, 0.10) && !holds(111.0, 100.0, 0.10));
}

#[test]
fn a_reductions_own_tree_bounds_it_when_slower_than_every_other_roof() {
    let mut roofs = synthetic();
    roofs.atomic_same_i32_ns = Some(0.75);
    let p = vector(Dtype::I32, 1 << 28);
    // v1 runs v1's tree, v4 v3's, v5 and v3_shfl the shuffle tree, v6 none.
    for (name, tree) in [
        ("reduce_v1", Some(Tree::V1)),
        ("reduce_v2", Some(Tree::V2)),
        ("reduce_v4", Some(Tree::V3)),
        ("reduce_v5", Some(Tree::V5)),
        ("reduce_v3_shfl", Some(Tree::V5)),
        ("reduce_v6", None),
    ] {
        assert_eq!(counts_of(name, &p).tree, tree, "{name}");
    }
    // Unmeasured: named missing.
    let before = predict(k("reduce_v1"), &p, &roofs).unwrap();
    assert!(before.missing.contains(&Roof::Tree));
    // 2.2 ns per block of v1's i32 tree: 1,048,576 blocks take 2.31 ms, over the 0.79 ms chain
    // and the 1.75 ms read+red; the f32 tree's time does not count for an i32 row.
    roofs.tree_ns.insert("tree_v1_i32".into(), 2.2);
    roofs.tree_ns.insert("tree_v1_f32".into(), 9.0);
    let after = predict(k("reduce_v1"), &p, &roofs).unwrap();
    assert_eq!(after.bound, Roof::Tree);
    assert!(close(after.bound_s(), 1_048_576.0 * 2.2e-9));
    // v2's tree was not measured: its row does not borrow v1's.
    let v2 = predict(k("reduce_v2"), &p, &roofs).unwrap();
    assert!(v2.missing.contains(&Roof::Tree));
    assert_ne!(v2.bound, Roof::Tree);
}

/// A tree curve by resident blocks per SM: ns per block.
fn curve(points: &[(u32, f64)]) -> BTreeMap<u32, f64> {
    points.iter().copied().collect()
}

#[test]
fn the_slots_solve_puts_the_loads_and_the_trees_in_the_sms_slots() {
    // r·τ(r) is linear between 4 (4.8) and 8 (8.0): 1.6 + 0.8·r. With 100 SMs and a load
    // holding its slot 213.3 ns, r = 6 solves r + L·r / (SMs·(1.6 + 0.8·r)) = 8: τ(6) = 6.4 / 6.
    let c = curve(&[(4, 1.2), (8, 1.0)]);
    let load = |ns: f64| LoadWait {
        resident: 1,
        load_ns: ns,
        base_ns: 0.5,
    };
    let l = load(0.5 + 640.0 / 3.0 / 100.0);
    assert!((l.slot_ns(100) - 640.0 / 3.0).abs() < 1e-9);
    let got = slots_ns_per_block(&c, 8, &l, 100);
    assert!((got - 6.4 / 6.0).abs() < 1e-9, "{got}");
    // No load: the tree at the SM's own occupancy. A load cheaper than nothing counts as none.
    assert!((slots_ns_per_block(&c, 8, &load(0.5), 100) - 1.0).abs() < 1e-9);
    assert!((slots_ns_per_block(&c, 8, &load(0.1), 100) - 1.0).abs() < 1e-9);
    // A long load leaves fewer than the lowest measured occupancy in their trees: there a
    // block's time in its tree stays what it was at 4 (τ grows as 4.8 / r).
    let long = slots_ns_per_block(&c, 8, &load(0.5 + 20.0), 100);
    assert!(long > 1.2, "{long}");
}

#[test]
fn a_reduction_that_loads_before_its_tree_is_bound_by_its_own_compilers_slots() {
    // A fast stream and chain, so that the trees bind.
    let mut roofs = Roofs {
        read_bytes_per_s: 1e14,
        atomic_same_ns: Some(0.5),
        atomic_same_i32_ns: Some(0.5),
        ..synthetic()
    };
    roofs.tree_ns.insert("tree_v3_i32".into(), 1.0);
    // nvvm's tree is slower than llvm's at every occupancy.
    let by_backend = roofs
        .tree_resident_ns
        .entry("tree_v3_i32".into())
        .or_default();
    by_backend.insert("llvm".into(), curve(&[(2, 2.0), (4, 1.2), (8, 1.0)]));
    by_backend.insert("nvvm".into(), curve(&[(2, 3.0), (4, 1.8), (8, 1.5)]));
    let blocks = 1_048_576.0;
    let at = |backend: Option<Backend>, roofs: &Roofs| {
        let p = Problem {
            backend,
            ..vector(Dtype::I32, 1 << 28)
        };
        predict(k("reduce_v3"), &p, roofs).unwrap()
    };
    // Without the load roof: each compiler's tree alone at 8 per SM, the fastest's for nvcc.
    let (llvm, nvvm, nvcc) = (
        at(Some(Backend::Llvm), &roofs),
        at(Some(Backend::Nvvm), &roofs),
        at(Some(Backend::Nvcc), &roofs),
    );
    assert_eq!(
        (llvm.bound, nvvm.bound),
        (Roof::Tree, Roof::Tree),
        "{llvm:?}"
    );
    assert!(close(llvm.bound_s(), blocks * 1.0e-9));
    assert!(close(nvvm.bound_s(), blocks * 1.5e-9));
    assert!(close(nvcc.bound_s(), blocks * 1.0e-9));
    assert!(!llvm.terms.iter().any(|t| t.roof == Roof::Slots));
    // With it, the slots bind, above the tree alone and below the tree at 4 per SM.
    roofs.load_wait = Some(LoadWait {
        resident: 1,
        load_ns: 3.0,
        base_ns: 1.0,
    });
    let p = at(Some(Backend::Llvm), &roofs);
    assert_eq!(p.bound, Roof::Slots);
    assert!(
        p.bound_s() > blocks * 1.0e-9 && p.bound_s() < blocks * 1.2e-9,
        "{p:?}"
    );
    // v4 loads eight elements per thread before its tree: no slots term.
    let v4 = predict(k("reduce_v4"), &vector(Dtype::I32, 1 << 28), &roofs).unwrap();
    assert!(!v4.terms.iter().any(|t| t.roof == Roof::Slots), "{v4:?}");
    assert!(counts_of("reduce_v3_shfl", &vector(Dtype::I32, 1 << 20)).loads_before_tree);
}

/// A row-wise kernel is its matrix's bytes over the copy (read once, written once; the weights
/// left out), in its schedule's blocks.
#[test]
fn a_row_kernel_is_predicted_at_the_copy_of_its_bytes() {
    let p = |name: &str, dtype: Dtype, rows: u32, cols: u32| {
        let problem = Problem {
            dtype,
            size: Size::Matrix { rows, cols },
            sm_count: 132,
            backend: None,
        };
        predict(k(name), &problem, &synthetic()).unwrap()
    };
    let s = p("softmax_warp", Dtype::F32, 65536, 512);
    assert_eq!(s.bound, Roof::Copy);
    assert!(close(s.bound_s(), 2.0 * 65536.0 * 512.0 * 4.0 / 1e12));
    assert!(close(s.seconds, s.bound_s() + 5e-6));
    assert_eq!(
        s.counts.blocks,
        65536 / crate::launch::rows::WARP_ROWS_PER_BLOCK as u64
    );
    let ln = p("layernorm_cluster", Dtype::Bf16, 256, 262144);
    assert!(close(ln.bound_s(), 2.0 * 256.0 * 262144.0 * 2.0 / 1e12));
    // bf16: clusters of 16 blocks of 256 threads, 32 KiB of the row each.
    assert_eq!(ln.counts.blocks, 256 * 16);
    assert_eq!(ln.counts.read_bytes, 256 * 262144 * 2);
    // A shape its schedule cannot hold launches nothing: no blocks.
    assert_eq!(p("rmsnorm_warp", Dtype::F32, 8, 4096).counts.blocks, 0);
}
