use super::*;

#[test]
fn each_issue_shape_gets_a_schedule_that_holds_it() {
    let picks = |op: Op| -> Vec<(u32, &str, &str)> {
        SHAPES
            .iter()
            .map(|&(_, cols)| {
                let name = |d| chosen(op, cols as u64, d).map_or("-", Schedule::name);
                (cols, name(Dtype::F32), name(Dtype::Bf16))
            })
            .collect()
    };
    for op in [Op::Softmax, Op::RmsNorm] {
        assert_eq!(
            picks(op),
            [
                (512, "warp", "narrow"),
                (1024, "block", "warp"),
                (4096, "block", "block"),
                (8192, "block", "block"),
                // 128 KiB: softmax reads no weights, RMSNorm reads `w`.
                (
                    32768,
                    if op == Op::Softmax { "wide" } else { "cluster" },
                    "block"
                ),
                (131072, "cluster", "cluster"),
                (262144, "cluster", "cluster"),
            ]
        );
    }
    // The narrow warp to 1 KiB, then the warp: each op, each type.
    for op in Op::ALL {
        for (d, narrow) in [(Dtype::F32, 256), (Dtype::Bf16, 512)] {
            assert_eq!(chosen(op, 1, d), Some(Schedule::Narrow));
            assert_eq!(chosen(op, narrow, d), Some(Schedule::Narrow));
            assert_eq!(chosen(op, narrow + 1, d), Some(Schedule::Warp));
        }
    }
    // LayerNorm's block past 512 threads is its wide block; past 64 KiB, a cluster; its rows
    // of clusters of 8 blocks and more, the pair.
    assert_eq!(picks(Op::LayerNorm)[4], (32768, "cluster", "wide"));
    assert_eq!(picks(Op::LayerNorm)[5], (131072, "pair", "pair"));
    assert_eq!(picks(Op::LayerNorm)[6], (262144, "pair", "pair"));
    // A cluster of 5 blocks of 256 (past 65536 BF16 elements) stays a cluster; of 8, the pair;
    // in f32 (blocks of 512), 7 blocks and 8.
    assert_eq!(
        chosen(Op::LayerNorm, 65536 + 8, Dtype::Bf16),
        Some(Schedule::Cluster)
    );
    assert_eq!(
        chosen(Op::LayerNorm, 7 * 16384 + 8, Dtype::Bf16),
        Some(Schedule::Pair)
    );
    assert_eq!(
        chosen(Op::LayerNorm, 7 * 16384, Dtype::F32),
        Some(Schedule::Cluster)
    );
    assert_eq!(
        chosen(Op::LayerNorm, 7 * 16384 + 4, Dtype::F32),
        Some(Schedule::Pair)
    );
    assert_eq!(
        chosen(Op::LayerNorm, 16384, Dtype::F32),
        Some(Schedule::Wide)
    );
    assert_eq!(
        chosen(Op::LayerNorm, 8192, Dtype::F32),
        Some(Schedule::Block)
    );
    for op in Op::ALL {
        for &(rows, cols) in &SHAPES {
            for d in DTYPES {
                let s = chosen(op, cols as u64, d).unwrap();
                assert!(
                    s.launch(op, rows as u64, cols as u64, d).is_ok(),
                    "{op:?} {rows}x{cols} {d}"
                );
            }
        }
    }
}

#[test]
fn launches_cover_the_row_with_their_threads() {
    for d in DTYPES {
        for s in Schedule::ALL {
            let max = s.max_cols(d);
            for cols in [1u64, 7, 31, 33, 513, 4097, max]
                .into_iter()
                .filter(|&c| c <= max)
            {
                let l = s.launch(Op::Softmax, 5, cols, d).unwrap();
                let held = l.threads as u64 * l.cluster as u64 * s.vectors() as u64 * per_vector(d);
                let per_row = match s {
                    Schedule::Narrow | Schedule::Warp => 32 * s.vectors() as u64 * per_vector(d),
                    // A block of its threads passes over any row.
                    Schedule::Streamed => {
                        assert_eq!((l.blocks, l.threads), (5, STREAMED_THREADS), "{cols}");
                        max
                    }
                    _ => held,
                };
                assert!(per_row >= cols, "{s:?} {d} cols {cols}: {l:?}");
                assert_eq!(l.threads % 32, 0);
                assert!(l.threads <= 1024);
            }
        }
    }
    let w = Schedule::Warp
        .launch(Op::Softmax, 17, 512, Dtype::F32)
        .unwrap();
    assert_eq!((w.blocks, w.threads, w.cluster), (9, 64, 1));
    let b = Schedule::Block
        .launch(Op::Softmax, 16384, 4096, Dtype::F32)
        .unwrap();
    assert_eq!((b.blocks, b.threads), (16384, 256));
    // The wide block: the block's longest row in half the threads, or twice it in all.
    assert_eq!(
        Schedule::Wide.max_cols(Dtype::Bf16),
        2 * Schedule::Block.max_cols(Dtype::Bf16)
    );
    let w = Schedule::Wide
        .launch(Op::LayerNorm, 4096, 32768, Dtype::Bf16)
        .unwrap();
    assert_eq!((w.blocks, w.threads), (4096, 512));
    let w = Schedule::Wide
        .launch(Op::Softmax, 4096, 32768, Dtype::F32)
        .unwrap();
    assert_eq!((w.blocks, w.threads), (4096, 1024));
    let c = Schedule::Cluster
        .launch(Op::Softmax, 256, 262144, Dtype::F32)
        .unwrap();
    assert_eq!((c.blocks, c.threads, c.cluster), (256 * 16, 512, 16));
    let tiny = Schedule::Cluster
        .launch(Op::Softmax, 3, 1, Dtype::Bf16)
        .unwrap();
    assert_eq!((tiny.blocks, tiny.cluster), (6, CLUSTER_MIN));
    // A cluster keeps its blocks' share of `w` in shared memory (LayerNorm part of `b`
    // too); softmax reads none.
    assert_eq!(c.shared_bytes, SHARED_BYTES);
    let kept = |op, d| {
        let l = Schedule::Cluster.launch(op, 256, 262144, d).unwrap();
        l.shared_bytes - SHARED_BYTES
    };
    // bf16's blocks are half as many threads, each keeping as many vectors.
    assert_eq!(kept(Op::RmsNorm, Dtype::F32), 512 * 8 * 16);
    assert_eq!(kept(Op::RmsNorm, Dtype::Bf16), 256 * 8 * 16);
    assert_eq!(
        kept(Op::LayerNorm, Dtype::F32),
        512 * (8 + CLUSTER_KEPT_B_VECTORS) * 16
    );
    assert_eq!(
        kept(Op::LayerNorm, Dtype::Bf16),
        256 * (8 + CLUSTER_KEPT_B_VECTORS) * 16
    );
    let b = Schedule::Cluster
        .launch(Op::Softmax, 256, 262144, Dtype::Bf16)
        .unwrap();
    assert_eq!((b.blocks, b.threads, b.cluster), (256 * 16, 256, 16));
    // Clusters past the portable 8 blocks are placed by load balancing, the others and
    // every other schedule by the driver's default.
    assert!(c.balanced && b.balanced);
    let eight = Schedule::Cluster
        .launch(Op::Softmax, 1024, 131072, Dtype::Bf16)
        .unwrap();
    assert_eq!((eight.cluster, eight.balanced), (8, false));
    assert!(!tiny.balanced && !w.balanced);
    for op in Op::ALL {
        let b = Schedule::Block.launch(op, 16384, 4096, Dtype::F32).unwrap();
        assert_eq!(b.shared_bytes, SHARED_BYTES);
        // A warp's rows merge by shuffles alone: no shared memory asked.
        for s in [Schedule::Narrow, Schedule::Warp] {
            let w = s.launch(op, 65536, 512, Dtype::Bf16).unwrap();
            assert_eq!((w.blocks, w.threads, w.shared_bytes), (32768, 64, 0));
        }
    }
    // The narrow warp: half the warp's row, in the same launch.
    assert_eq!(
        2 * Schedule::Narrow.max_cols(Dtype::Bf16),
        Schedule::Warp.max_cols(Dtype::Bf16)
    );
}

#[test]
fn a_launch_recorded_before_the_placement_policy_reads_as_the_default() {
    let old = r#"{"blocks": 224, "threads": 512, "cluster": 16, "shared_bytes": 91664}"#;
    let l: RowLaunch = serde_json::from_str(old).unwrap();
    assert_eq!((l.cluster, l.balanced), (16, false));
    let new = serde_json::to_value(
        Schedule::Cluster
            .launch(Op::LayerNorm, 256, 262144, Dtype::F32)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(new["balanced"], true);
    let default = Schedule::Cluster
        .launch(Op::LayerNorm, 1024, 131072, Dtype::F32)
        .unwrap();
    assert!(
        serde_json::to_value(default)
            .unwrap()
            .get("balanced")
            .is_none()
    );
}

#[test]
fn hostile_shapes_are_refused_in_one_line() {
    let e = Schedule::Warp
        .launch(Op::Softmax, 8, 513, Dtype::F32)
        .unwrap_err();
    assert!(
        e.contains("at most 512 f32")
            && e.contains("the block, wide, cluster, streamed or pair schedule"),
        "{e}"
    );
    let e = Schedule::Cluster
        .launch(
            Op::Softmax,
            8,
            Schedule::Cluster.max_cols(Dtype::F32) + 1,
            Dtype::F32,
        )
        .unwrap_err();
    assert!(e.contains("use the streamed schedule"), "{e}");
    let e = Schedule::Streamed
        .launch(Op::Softmax, 8, 1 << 32, Dtype::F32)
        .unwrap_err();
    assert!(e.contains("u32"), "{e}");
    assert!(
        Schedule::Block
            .launch(Op::Softmax, 0, 8, Dtype::F32)
            .is_err()
    );
    assert!(
        Schedule::Block
            .launch(Op::Softmax, 8, 0, Dtype::F32)
            .is_err()
    );
    let e = Schedule::Block
        .launch(Op::Softmax, 1 << 32, 8, Dtype::F32)
        .unwrap_err();
    assert!(e.contains("u32"), "{e}");
    let e = Schedule::Cluster
        .launch(Op::Softmax, u32::MAX as u64, 8, Dtype::F32)
        .unwrap_err();
    assert!(e.contains("x limit"), "{e}");
    for e in [
        Schedule::Warp
            .launch(Op::Softmax, 8, 513, Dtype::F32)
            .unwrap_err(),
        Schedule::Block
            .launch(Op::Softmax, 0, 8, Dtype::F32)
            .unwrap_err(),
    ] {
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    // Past what a cluster holds, the streamed block; past the kernels' u32, nothing.
    assert_eq!(
        chosen(
            Op::Softmax,
            Schedule::Cluster.max_cols(Dtype::Bf16) + 1,
            Dtype::Bf16
        ),
        Some(Schedule::Streamed)
    );
    assert_eq!(chosen(Op::Softmax, 1 << 32, Dtype::Bf16), None);
}

#[test]
fn bytes_are_one_read_and_one_write_and_the_weights() {
    assert_eq!(bytes(Op::Softmax, 2, 4, Dtype::F32), 2 * 2 * 4 * 4);
    assert_eq!(bytes(Op::LayerNorm, 2, 4, Dtype::Bf16), (4 + 2) * 4 * 2);
    assert_eq!(Op::RmsNorm.torch(), "F.rms_norm(x, (cols,), w, eps=1e-6)");
}

#[test]
fn a_pair_holds_two_rows_a_block_and_its_weights_once() {
    // 5 rows of 262144 f32: clusters of 16 blocks of two halves of 512 threads, three of them
    // (the last one's second half idle).
    let l = Schedule::Pair
        .launch(Op::LayerNorm, 5, 262144, Dtype::F32)
        .unwrap();
    assert_eq!((l.blocks, l.threads, l.cluster), (3 * 16, 1024, 16));
    // One copy of `w` and all of `b` for both halves, past each half's slots.
    assert_eq!(l.shared_bytes, PAIR_SHARED_BYTES + 2 * 8 * 512 * 16);
    let r = Schedule::Pair
        .launch(Op::RmsNorm, 4, 262144, Dtype::Bf16)
        .unwrap();
    assert_eq!((r.blocks, r.threads), (2 * 16, 512));
    assert_eq!(r.shared_bytes, PAIR_SHARED_BYTES + 8 * 256 * 16);
    let s = Schedule::Pair
        .launch(Op::Softmax, 1, 32768, Dtype::F32)
        .unwrap();
    assert_eq!(
        (s.blocks, s.cluster, s.shared_bytes),
        (2, 2, PAIR_SHARED_BYTES)
    );
    // The f32 block of 1024 threads keeps its kept weights inside the SM's 132 KiB carveout.
    assert!(l.shared_bytes + 1024 <= 132 * 1024);
    for d in DTYPES {
        assert_eq!(Schedule::Pair.max_cols(d), Schedule::Cluster.max_cols(d));
        for op in Op::ALL {
            for (_, cols) in SHAPES {
                // LayerNorm's rows of clusters of 8 and 16 blocks alone.
                let pair = op == Op::LayerNorm && cols >= 131072;
                assert_eq!(
                    chosen(op, cols as u64, d) == Some(Schedule::Pair),
                    pair,
                    "{op:?} {cols} {d}"
                );
            }
            // Bounded on both Rust compilers: 64 registers, or the f32 block would not launch.
            let threads = 2 * cluster_threads(d);
            for b in [Backend::Llvm, Backend::Nvvm] {
                assert_eq!(
                    launch_bounds(b, op, Schedule::Pair, d),
                    Some((threads, (CLUSTER_SM_THREADS / threads).max(1)))
                );
            }
        }
    }
}
