//! What the chapter expects of the reductions under ncu (its section 6).

use super::{Expect, Expectation, Tol};

const NVCC_SASS: &str = "the chapter counted its own nvcc's SASS for its own CUDA C++; nvcc 13 on \
                         this lab's C++ twins issues 71.5 / 82.5 / 69.5 per warp too, so the count \
                         is the compiler's, not the language's (compare with `cargo xtask asm --backend all`)";

/// Shared-load requests per block of one tree level at `stride`: threads `0..stride` read
/// `s[tid]` and `s[tid + stride]`, two requests from each warp with a lane on.
pub(super) fn level_requests(stride: u32) -> f64 {
    2.0 * stride.div_ceil(32) as f64
}

/// The chapter's expected values for the reductions, its section 6 (per block of 256 threads).
pub fn reductions() -> Vec<Expectation> {
    use Expect::*;
    let p = |kernel, column, expect, source| Expectation {
        kernel,
        column,
        expect,
        source,
        if_off: None,
    };
    let per_warp = |kernel| Expectation {
        kernel,
        column: "inst_per_warp",
        expect: Near(88.0, Tol::Rel(0.15)),
        source: "chapter §6: 88 instructions per warp in v1, v2, v3",
        if_off: Some(NVCC_SASS),
    };
    let two = Tol::Abs(2.0);
    vec![
        p(
            "reduce_v1",
            "sh_ld_req_per_block",
            Near(94.0, two),
            "chapter §6 (v1): 94 shared-load requests per block",
        ),
        p(
            "reduce_v1",
            "sh_ld_conflicts_per_block",
            Near(0.0, Tol::Abs(1.0)),
            "chapter §6 (v1): zero bank conflicts",
        ),
        p(
            "reduce_v1",
            "sh_ld_wavefronts_per_block",
            Near(94.0, two),
            "chapter §6 (v1): each request a single pass",
        ),
        p(
            "reduce_v1",
            "top_stall",
            DominantStall("barrier"),
            "chapter §6 (v1): barrier dominates",
        ),
        p(
            "reduce_v1",
            "inst",
            SameAs {
                kernel: "reduce_v3",
                rel: 0.05,
            },
            "chapter §6: v1-v3 issue the same number of instructions",
        ),
        per_warp("reduce_v1"),
        p(
            "reduce_v2",
            "sh_ld_req_per_block",
            Near(24.0, two),
            "chapter §6 (v2): requests drop from 94 to 24 per block",
        ),
        p(
            "reduce_v2",
            "sh_ld_conflicts_per_block",
            Near(70.0, Tol::Rel(0.15)),
            "chapter §6 (v2): about 70 conflicts per block",
        ),
        p(
            "reduce_v2",
            "sh_ld_wavefronts_per_block",
            Near(94.0, Tol::Abs(3.0)),
            "chapter §6 (v2): wavefronts stay at v1's 94",
        ),
        p(
            "reduce_v2",
            "top_stall",
            DominantStall("barrier"),
            "chapter §6: barrier dominates with 8 barriers per 256 values",
        ),
        p(
            "reduce_v2",
            "inst",
            SameAs {
                kernel: "reduce_v3",
                rel: 0.05,
            },
            "chapter §6: v1-v3 issue the same number of instructions",
        ),
        per_warp("reduce_v2"),
        p(
            "reduce_v3",
            "sh_ld_req_per_block",
            Near(24.0, two),
            "chapter §6 (v3): 24 requests per block",
        ),
        p(
            "reduce_v3",
            "sh_ld_conflicts_per_block",
            Near(0.0, Tol::Abs(1.0)),
            "chapter §6 (v3): no conflicts",
        ),
        p(
            "reduce_v3",
            "sh_ld_wavefronts_per_block",
            Near(24.0, two),
            "chapter §6 (v3): 24 passes per block",
        ),
        p(
            "reduce_v3",
            "top_stall",
            DominantStall("barrier"),
            "chapter §6: barrier dominates with 8 barriers per 256 values",
        ),
        per_warp("reduce_v3"),
        p(
            "reduce_v4",
            "sh_ld_req_per_block",
            Near(24.0, two),
            "chapter §6 (v4): v3's tree after the private sums",
        ),
        p(
            "reduce_v4",
            "dram_pct",
            Above {
                kernel: "reduce_v3",
            },
            "chapter §6 (v4): DRAM throughput jumps toward the ceiling",
        ),
        p(
            "reduce_v4",
            "stall_barrier",
            Below {
                kernel: "reduce_v3",
                factor: 1.0,
            },
            "chapter §6 (v4): barrier stalls shrink",
        ),
        p(
            "reduce_v4",
            "top_stall",
            DominantStall("long_scoreboard"),
            "chapter §6 (v4): long_scoreboard becomes the dominant stall",
        ),
        p(
            "reduce_v4",
            "inst",
            Below {
                kernel: "reduce_v3",
                factor: 0.5,
            },
            "chapter §6 (v4): total instructions drop sharply",
        ),
        p(
            "reduce_v5",
            "sh_ld_wavefronts_per_block",
            Below {
                kernel: "reduce_v4",
                factor: 1.0,
            },
            "chapter §6 (v5): fewer shared-memory wavefronts",
        ),
        p(
            "reduce_v5",
            "sh_ld_req_per_block",
            Near(
                level_requests(128) + level_requests(64) + level_requests(32),
                two,
            ),
            "derived: levels 128 and 64 in shared memory, then warp 0 reads the two halves \
             (level 32): 8 + 4 + 2 requests, no read of s[0] after",
        ),
        p(
            "reduce_v5",
            "stall_barrier",
            Below {
                kernel: "reduce_v4",
                factor: 1.0,
            },
            "chapter §6 (v5): fewer barrier stalls (3 barriers per block against v4's 9)",
        ),
        p(
            "reduce_v5",
            "inst",
            Below {
                kernel: "reduce_v4",
                factor: 1.0,
            },
            "derived: v4's load and grid, then a shorter tree; warps 1-7 leave after level 64",
        ),
        p(
            "reduce_v5",
            "dram_pct",
            SameAs {
                kernel: "reduce_v4",
                rel: 0.1,
            },
            "chapter §6 (v5): v4 was already close to the DRAM ceiling",
        ),
        p(
            "reduce_v5",
            "duration_us",
            SameAs {
                kernel: "reduce_v4",
                rel: 0.1,
            },
            "chapter §6 (v5): probably almost no change in time",
        ),
        p(
            "reduce_v6",
            "top_stall",
            DominantStall("long_scoreboard"),
            "chapter §6 (v6): long_scoreboard the main stall",
        ),
        p(
            "reduce_v6",
            "inst",
            Lowest,
            "chapter §6 (v6): the fewest instructions of any version",
        ),
        p(
            "reduce_v6",
            "dram_pct",
            AtLeast(70.0),
            "chapter §6 (v6): it should sit at the ceiling",
        ),
    ]
}
