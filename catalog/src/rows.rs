//! The row-wise family (`gpu-kernels/src/rows.rs`, the chapter's Part II): its operations, its
//! schedules, which schedule a row's length gets, the launch each schedule takes for a shape,
//! the eps the lab passes, and the shapes the bench measures. The kernels' own constants (the
//! vectors each thread holds, the cluster's limits) are `launch::rows`'s; everything the host
//! derives from them is here, once.

pub use crate::launch::rows::SHARED_BYTES;
use crate::launch::rows::{
    BLOCK_MAX_THREADS, BLOCK_VECTORS, CLUSTER_KEPT_B_VECTORS, CLUSTER_MAX, CLUSTER_MIN,
    CLUSTER_SM_THREADS, CLUSTER_THREADS, CLUSTER_THREADS_BF16, CLUSTER_VECTORS, NARROW_VECTORS,
    PAIR_SHARED_BYTES, STREAMED_THREADS, STREAMED_VECTORS, WARP_ROWS_PER_BLOCK, WARP_VECTORS,
    WIDE_MAX_THREADS, WIDE_VECTORS,
};
use crate::{Backend, Dtype};
use serde::{Deserialize, Serialize};

/// LayerNorm's eps: PyTorch's default for `F.layer_norm`.
pub const LAYER_NORM_EPS: f32 = 1e-5;
/// RMSNorm's eps, passed explicitly: `F.rms_norm`'s default (`eps=None`) is
/// `torch.finfo(dtype).eps`, which differs between f32 (1.2e-7) and bf16 (7.8e-3); the peers
/// must pass this value too.
pub const RMS_NORM_EPS: f32 = 1e-6;

/// The shapes (rows, cols) the bench measures: the issue's, short rows to rows one SM cannot
/// hold.
pub const SHAPES: [(u32, u32); 7] = [
    (65536, 512),
    (32768, 1024),
    (16384, 4096),
    (8192, 8192),
    (4096, 32768),
    (1024, 131072),
    (256, 262144),
];

/// The element types the family is instantiated for.
pub const DTYPES: [Dtype; 2] = [Dtype::F32, Dtype::Bf16];

/// What a row kernel computes, as PyTorch defines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// `F.softmax(x, dim=-1)`.
    Softmax,
    /// `F.rms_norm(x, (cols,), w, eps)`.
    RmsNorm,
    /// `F.layer_norm(x, (cols,), w, b, eps)`.
    LayerNorm,
}

impl Op {
    pub const ALL: [Op; 3] = [Op::Softmax, Op::RmsNorm, Op::LayerNorm];

    /// `softmax`, `rmsnorm`, `layernorm`: the kernels' names start with it.
    pub fn name(self) -> &'static str {
        match self {
            Op::Softmax => "softmax",
            Op::RmsNorm => "rmsnorm",
            Op::LayerNorm => "layernorm",
        }
    }

    /// Weight vectors of `cols` elements it reads: none, `w`, or `w` and `b`.
    pub const fn weights(self) -> u32 {
        match self {
            Op::Softmax => 0,
            Op::RmsNorm => 1,
            Op::LayerNorm => 2,
        }
    }

    /// Whether its block kernel keeps to 32 registers a thread at `BLOCK_VECTORS`, so two
    /// blocks of 1024 fit an SM (`cargo xtask asm --stats`): softmax's and RMSNorm's, not
    /// LayerNorm's (36–40), which past 512 threads fills an SM alone.
    pub const fn block_is_lean(self) -> bool {
        !matches!(self, Op::LayerNorm)
    }

    /// The eps the lab passes (0 for softmax, which has none).
    pub fn eps(self) -> f32 {
        match self {
            Op::Softmax => 0.0,
            Op::RmsNorm => RMS_NORM_EPS,
            Op::LayerNorm => LAYER_NORM_EPS,
        }
    }

    /// The PyTorch call it matches, with the lab's eps.
    pub fn torch(self) -> String {
        match self {
            Op::Softmax => "F.softmax(x, dim=-1)".into(),
            Op::RmsNorm => format!("F.rms_norm(x, (cols,), w, eps={RMS_NORM_EPS:e})"),
            Op::LayerNorm => format!("F.layer_norm(x, (cols,), w, b, eps={LAYER_NORM_EPS:e})"),
        }
    }
}

/// How many threads hold one row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    /// A warp per row holding half the warp's vectors a lane: rows of up to 1 KiB, in the
    /// registers (and so the warps an SM holds) such a row needs, not a longer one's.
    Narrow,
    /// A warp per row, `WARP_ROWS_PER_BLOCK` rows per block: short rows.
    Warp,
    /// A block per row, its size from the row's length.
    Block,
    /// A block per row holding twice the block's vectors a thread: the block's longest rows
    /// in half its threads (two blocks an SM where the block's kernel leaves one:
    /// [`Op::block_is_lean`]), or rows twice as long in a block of 1024.
    Wide,
    /// A thread-block cluster per row, its blocks exchanging their statistics through
    /// distributed shared memory: rows one block should not hold alone.
    Cluster,
    /// A block per row holding none of it: each pass over the row loads it again, the first
    /// from DRAM, the others from the L2 while the rows in flight fit there. Any row length.
    Streamed,
    /// A cluster per two rows, each block two halves of a cluster's block, one a row, the
    /// weights kept once for both: one half loads while the other merges and writes. The
    /// cluster's rows; chosen for LayerNorm's longest rows alone ([`pairs_layernorm`]),
    /// measured beside the cluster everywhere.
    Pair,
}

/// One launch of a row kernel: the grid's blocks (along x), threads per block, blocks per
/// cluster (1 outside the cluster schedule), dynamic shared memory, and whether the driver
/// places the clusters by its load-balancing policy ([`balances_clusters`]; written only when
/// it does, so a launch without it, as every file from before it, is the default placement).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowLaunch {
    pub blocks: u32,
    pub threads: u32,
    pub cluster: u32,
    pub shared_bytes: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub balanced: bool,
}

/// The most blocks of a portable cluster: past it, the function must allow the size first.
pub const PORTABLE_CLUSTER: u32 = 8;

/// Whether clusters of `cluster` blocks launch under the driver's load-balancing placement
/// (`CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING`) rather than its default, spread: the sizes
/// past the portable 8. A cluster's blocks share one GPC; by the driver's count
/// (`cuOccupancyMaxActiveClusters`) the H200 holds 7 clusters of 16 blocks one block an SM
/// (112 SMs) and 15 of 8, and the lab's clusters of 16 blocks fill the same 112 SMs under
/// spread (14 of 512 threads, f32, two an SM; 28 of 256, bf16, four an SM), where load
/// balancing, which stacks a cluster's blocks on fewer SMs, places 15 and 30.
/// At 256 x 262144 (the lab's bench, two rounds each, x copy) the balanced clusters read
/// softmax f32 0.932 → 0.953 and bf16 0.907 → 0.952, RMSNorm 0.951 → 0.953 and 0.947 →
/// 0.973, LayerNorm bf16 0.857 → 0.897, but LayerNorm f32 0.886 → 0.877; with 2cb137a's
/// kernels (three rounds) LayerNorm f32 too, 0.861–0.862 → 0.870–0.873
/// (results/rows/2cb137a/experiments, section 4). At 8 blocks (1024 x 131072) balancing
/// places more bf16 clusters too (66 against 62) but read 2–6 % slower, f32 level: there the
/// default stays (results/rows/e8c249d/experiments, section 3).
pub const fn balances_clusters(cluster: u32) -> bool {
    cluster > PORTABLE_CLUSTER
}

/// Elements of `dtype` in one 16-byte vector (4 f32, 8 bf16).
pub fn per_vector(dtype: Dtype) -> u64 {
    16 / dtype.size()
}

/// Threads of each block of a cluster over rows of `dtype` (`launch::rows`: 512 in f32, 256
/// in bf16, whose elements cost twice the work a byte).
pub const fn cluster_threads(dtype: Dtype) -> u32 {
    match dtype {
        Dtype::Bf16 => CLUSTER_THREADS_BF16,
        _ => CLUSTER_THREADS,
    }
}

/// The launch bounds `backend`'s PTX of `op`'s kernel of `schedule` over `dtype` carries
/// (`cargo xtask ptx` writes them into the PTX, neither Rust compiler having an attribute for
/// them): the most threads a block, and the fewest blocks an SM ptxas must fit, here
/// `CLUSTER_SM_THREADS` of a cluster kernel's threads an SM, so 64 registers a thread.
/// - rustc's LayerNorm clusters: its loads of `b` ahead (`rows.rs`'s `b_ahead`) took ptxas to
///   70 (f32) and 68 (BF16) registers without them: one block an SM, not two or four.
/// - rust-cuda's RMSNorm f32 cluster: without them ptxas took 48 registers and issued 5 of a
///   thread's 8 row loads before waiting on the first, the other 3 once the first three had
///   landed (80 bytes in flight a thread, then 48, where rustc's kernel, 58 registers, has all
///   128 out at once): 0.867 x copy at 256 x 262144 against rustc's 0.958
///   (results/rows/b11491a); bounded, 64 registers and the 8 loads at once.
///
/// - every pair kernel (both Rust compilers): a block of two halves of a cluster's threads
///   must hold 64 registers a thread, or the f32 block of 1024 threads would not launch.
///
/// The other kernels none: they fit their blocks by ptxas's own choice and issue their loads
/// at once, and bounded, ptxas took rustc's softmax clusters from 55–56 to 62–64 registers,
/// which read 0.4–0.9 % slower in three of the four cases the catalogue chooses them for,
/// level in the fourth (results/rows/827b5c3/experiments); rust-cuda's LayerNorm f32 cluster
/// spilled 4 bytes.
pub fn launch_bounds(
    backend: Backend,
    op: Op,
    schedule: Schedule,
    dtype: Dtype,
) -> Option<(u32, u32)> {
    let bounded = match backend {
        Backend::Llvm => op == Op::LayerNorm,
        Backend::Nvvm => op == Op::RmsNorm && dtype == Dtype::F32,
        Backend::Nvcc => false,
    };
    if schedule == Schedule::Pair && backend != Backend::Nvcc {
        let threads = largest_block(op, schedule, dtype);
        return Some((threads, (CLUSTER_SM_THREADS / threads).max(1)));
    }
    (bounded && schedule == Schedule::Cluster).then(|| {
        let threads = cluster_threads(dtype);
        (threads, CLUSTER_SM_THREADS / threads)
    })
}

/// The largest grid x dimension.
const MAX_GRID_X: u64 = (1 << 31) - 1;

impl Schedule {
    pub const ALL: [Schedule; 7] = [
        Schedule::Narrow,
        Schedule::Warp,
        Schedule::Block,
        Schedule::Wide,
        Schedule::Cluster,
        Schedule::Streamed,
        Schedule::Pair,
    ];

    /// `narrow`, `warp`, `block`, `wide`, `cluster`, `streamed`, `pair`: the kernels' names end
    /// with it.
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Narrow => "narrow",
            Schedule::Warp => "warp",
            Schedule::Block => "block",
            Schedule::Wide => "wide",
            Schedule::Cluster => "cluster",
            Schedule::Streamed => "streamed",
            Schedule::Pair => "pair",
        }
    }

    /// Whether its kernels run in thread-block clusters (the cluster and the pair): launched
    /// by the cluster launch, each cluster walking rows.
    pub fn in_clusters(self) -> bool {
        matches!(self, Schedule::Cluster | Schedule::Pair)
    }

    /// 16-byte vectors each thread holds (the streamed schedule: loads at once, each pass).
    pub fn vectors(self) -> u32 {
        match self {
            Schedule::Narrow => NARROW_VECTORS,
            Schedule::Warp => WARP_VECTORS,
            Schedule::Block => BLOCK_VECTORS,
            Schedule::Wide => WIDE_VECTORS,
            Schedule::Cluster | Schedule::Pair => CLUSTER_VECTORS,
            Schedule::Streamed => STREAMED_VECTORS,
        }
    }

    /// The most threads that hold one row of `dtype`.
    fn max_threads(self, dtype: Dtype) -> u64 {
        match self {
            Schedule::Narrow | Schedule::Warp => 32,
            Schedule::Block => BLOCK_MAX_THREADS as u64,
            Schedule::Wide => WIDE_MAX_THREADS as u64,
            Schedule::Cluster | Schedule::Pair => {
                cluster_threads(dtype) as u64 * CLUSTER_MAX as u64
            }
            Schedule::Streamed => STREAMED_THREADS as u64,
        }
    }

    /// The longest row it holds, in elements of `dtype` (the streamed schedule: what the
    /// kernels' `u32` parameters can say).
    pub fn max_cols(self, dtype: Dtype) -> u64 {
        match self {
            Schedule::Streamed => u32::MAX as u64,
            _ => self.max_threads(dtype) * self.vectors() as u64 * per_vector(dtype),
        }
    }

    /// Dynamic shared memory of a launch of `op` in this schedule with blocks of `threads`:
    /// none for a warp's rows (narrow or not), which merge by shuffles alone; the merges'
    /// slots, and in a cluster the threads' kept vectors (`rows.rs`'s `keeps_w`, `kept_b`):
    /// RMSNorm's `w`, LayerNorm's `w` and its first vectors of `b` (a pair: each half's slots,
    /// `PAIR_SHARED_BYTES`, and one half's kept vectors, LayerNorm's all of `b`). No more:
    /// what a launch asks and leaves unused is L1 its SM lacks (the warp kernels' 32 blocks an
    /// SM asking the slots, 48 KiB: LayerNorm BF16 at 32768 x 1024 1.1 and 1.5 % slower in two
    /// of the peers' rotations, elsewhere within about 1 %, results/rows/5b88863/experiments).
    pub const fn shared_bytes(self, op: Op, threads: u32) -> u32 {
        if matches!(self, Schedule::Narrow | Schedule::Warp) {
            return 0;
        }
        let kept = match (self, op) {
            (Schedule::Cluster | Schedule::Pair, Op::RmsNorm) => CLUSTER_VECTORS,
            (Schedule::Cluster, Op::LayerNorm) => CLUSTER_VECTORS + CLUSTER_KEPT_B_VECTORS,
            // A pair's halves share one copy of `w` and all of `b`.
            (Schedule::Pair, Op::LayerNorm) => 2 * CLUSTER_VECTORS,
            _ => 0,
        };
        if matches!(self, Schedule::Pair) {
            return PAIR_SHARED_BYTES + kept * (threads / 2) * 16;
        }
        SHARED_BYTES + kept * threads * 16
    }

    /// The launch of `op` for `rows × cols` elements of `dtype`; a shape it cannot take is
    /// refused in one line that says what can.
    pub fn launch(self, op: Op, rows: u64, cols: u64, dtype: Dtype) -> Result<RowLaunch, String> {
        if rows == 0 || cols == 0 {
            return Err(format!(
                "{rows}×{cols}: a row kernel needs at least one row and one column"
            ));
        }
        if rows > u32::MAX as u64 || cols > u32::MAX as u64 {
            return Err(format!(
                "{rows}×{cols}: rows and cols must fit the kernels' u32 parameters"
            ));
        }
        let max = self.max_cols(dtype);
        if cols > max {
            let fits = Schedule::ALL
                .into_iter()
                .filter(|s| cols <= s.max_cols(dtype))
                .map(Schedule::name)
                .collect::<Vec<_>>();
            let instead = match fits.split_last() {
                None => "no schedule holds such a row".to_string(),
                Some((last, [])) => format!("use the {last} schedule"),
                Some((last, rest)) => format!("use the {} or {last} schedule", rest.join(", ")),
            };
            return Err(format!(
                "cols = {cols}: the {} schedule holds rows of at most {max} {dtype} elements; \
                 {instead}",
                self.name()
            ));
        }
        let vectors = cols.div_ceil(per_vector(dtype));
        let per_thread = self.vectors() as u64;
        let (blocks, threads, cluster) = match self {
            Schedule::Narrow | Schedule::Warp => (
                rows.div_ceil(WARP_ROWS_PER_BLOCK as u64),
                32 * WARP_ROWS_PER_BLOCK,
                1,
            ),
            Schedule::Block | Schedule::Wide => {
                let threads = vectors.div_ceil(per_thread).div_ceil(32) * 32;
                (rows, threads as u32, 1)
            }
            Schedule::Streamed => (rows, STREAMED_THREADS, 1),
            Schedule::Cluster | Schedule::Pair => {
                let threads = cluster_threads(dtype);
                let c = vectors
                    .div_ceil(threads as u64 * per_thread)
                    .clamp(CLUSTER_MIN as u64, CLUSTER_MAX as u64);
                if self == Schedule::Pair {
                    (rows.div_ceil(2) * c, 2 * threads, c as u32)
                } else {
                    (rows * c, threads, c as u32)
                }
            }
        };
        if blocks > MAX_GRID_X {
            return Err(format!(
                "rows = {rows}: the {} schedule's grid of {blocks} blocks passes the x limit \
                 ({MAX_GRID_X})",
                self.name()
            ));
        }
        Ok(RowLaunch {
            blocks: blocks as u32,
            threads,
            cluster,
            shared_bytes: self.shared_bytes(op, threads),
            balanced: balances_clusters(cluster),
        })
    }
}

/// The schedule the lab picks for `op`'s rows of `cols` elements of `dtype`, the first that
/// holds the row in as many threads as it is taken for:
/// - the narrow warp while the row fits it (1 KiB), then the warp (2 KiB): the fewest
///   vectors a lane that hold the row (`launch::rows::NARROW_VECTORS` says what the
///   narrower kernel buys);
/// - a block while one holds it with room for a second on its SM: 1024 threads (64 KiB)
///   where its kernel is lean ([`Op::block_is_lean`]), else 512 (32 KiB);
/// - the wide block: 512 threads (64 KiB, two an SM), or 1024 (128 KiB, alone on its SM)
///   where the op reads no weights. Alone with rows of 128 KiB, a block reads its weights
///   through an L1 that does not hold them for the next row (RMSNorm's 128 KiB of `w`,
///   LayerNorm's 256 KiB of `w` and `b`), where a cluster keeps them in shared memory: at
///   4096 × 32768 f32 on the H200 the wide block read softmax at 0.97 × copy against the
///   cluster's 0.94, RMSNorm 0.93–0.95 against 0.94, LayerNorm 0.71–0.72 against 0.92
///   (results/rows/b9aa4d6);
/// - else a cluster, but the pair for LayerNorm's rows of clusters of 8 blocks or more
///   ([`pairs_layernorm`]); past what a cluster holds, the streamed block (the row read
///   again from the L2); None past what the kernels' parameters say.
pub fn chosen(op: Op, cols: u64, dtype: Dtype) -> Option<Schedule> {
    let longest = |s: Schedule| match s {
        Schedule::Block | Schedule::Wide => {
            largest_block(op, s, dtype) as u64 * s.vectors() as u64 * per_vector(dtype)
        }
        _ => s.max_cols(dtype),
    };
    let s = Schedule::ALL
        .into_iter()
        .filter(|&s| s != Schedule::Pair)
        .find(|&s| cols <= longest(s))?;
    Some(
        if s == Schedule::Cluster && pairs_layernorm(op, cols, dtype) {
            Schedule::Pair
        } else {
            s
        },
    )
}

/// Whether rows of `cols` elements of `dtype` that take a cluster go to the pair instead:
/// LayerNorm's rows of clusters of `PORTABLE_CLUSTER` (8) blocks or more, 131072 elements and
/// up. Its clusters load 5 of a thread's 8 vectors of `b` from the L2 after each merge (3 kept
/// in shared memory); the pair keeps all of `b` with `w`, once for the two rows of its block's
/// halves, and one half loads while the other merges. On the H200 (two rounds,
/// results/rows/18d5d0a/experiments, section 3), cluster → pair, rustc / rust-cuda: BF16 at 256
/// x 262144 0.906 → 0.920 and 0.888 → 0.911 x copy, at 1024 x 131072 0.931 → 0.930 and 0.912
/// → 0.930; f32 (rust-cuda's) 0.87 → 0.90 and 0.94 → 0.96. rustc's f32 pair lost there while
/// it spilled the rank it held across the merge (`ClusterPair::seat_again`); read again
/// instead, it reads what rust-cuda's does: on the H200 at 256 x 262144 0.895–0.911 x copy on
/// both compilers against the cluster's 0.868–0.872, at 1024 x 131072 0.967–0.975 against
/// 0.953–0.965 (results/rows/ee86824/experiments, sections 3 and 5). Not for softmax and
/// RMSNorm, which keep no `b` and lose with it everywhere (up to 17 % on the H200).
pub fn pairs_layernorm(op: Op, cols: u64, dtype: Dtype) -> bool {
    op == Op::LayerNorm
        && Schedule::Cluster
            .launch(op, 1, cols, dtype)
            .is_ok_and(|l| l.cluster >= PORTABLE_CLUSTER)
}

/// The largest block the lab launches `op`'s kernel of `schedule` in, for rows of `dtype`
/// ([`chosen`] takes the schedule up to it): the warp schedules' `WARP_ROWS_PER_BLOCK` warps;
/// a block of 1024 threads where the op's block kernel is lean ([`Op::block_is_lean`]), else
/// 512, room for a second on its SM; the wide block of 1024 where the op reads no weights,
/// else 512; a cluster's blocks ([`cluster_threads`]), twice that in a pair.
pub fn largest_block(op: Op, schedule: Schedule, dtype: Dtype) -> u32 {
    let half = BLOCK_MAX_THREADS / 2;
    match schedule {
        Schedule::Narrow | Schedule::Warp => 32 * WARP_ROWS_PER_BLOCK,
        Schedule::Block if !op.block_is_lean() => half,
        Schedule::Block => BLOCK_MAX_THREADS,
        Schedule::Wide if op.weights() > 0 => half,
        Schedule::Wide => WIDE_MAX_THREADS,
        Schedule::Cluster => cluster_threads(dtype),
        Schedule::Streamed => STREAMED_THREADS,
        Schedule::Pair => 2 * cluster_threads(dtype),
    }
}

/// Bytes one launch must move: the matrix read once and written once, and the weights read
/// once (they stay in the L2 for every other row).
pub fn bytes(op: Op, rows: u64, cols: u64, dtype: Dtype) -> u64 {
    (2 * rows + op.weights() as u64) * cols * dtype.size()
}

#[cfg(test)]
mod tests;
