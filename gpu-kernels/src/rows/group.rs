//! The groups of threads that hold a row (a warp, a block, a thread-block cluster), where
//! each thread sits in one, and how they merge their statistics.

use super::*;

/// The `$S` in slot `$lane` of `$slots` (a slot every `SLOT_WORDS`), or the empty one for a
/// lane past the `$filled` slots (unsafe: `$slots` points into shared memory at `$filled`
/// written slots). A macro, not a function: through an inlined helper rust-cuda's compiler
/// allocated the block kernels' registers differently.
macro_rules! slot_or_empty {
    ($S:ty, $slots:expr, $lane:expr, $filled:expr) => {{
        let (slots, lane): (*const u32, u32) = ($slots, $lane);
        if lane < $filled {
            let mut w = [0u32; 3];
            upto16!(<$S>::WORDS, i, {
                w[i] = *slots.add((lane * SLOT_WORDS) as usize + i);
            });
            <$S>::of_words(w)
        } else {
            <$S>::EMPTY
        }
    }};
}

/// The statistic over the `$filled` slots of `$slots` (unsafe, as [`slot_or_empty!`]), in every
/// lane of the warp: lane `l` reads slot `l` (past `$filled` the empty statistic) and the warp
/// merges them; with `$equal` (the slots' parts of one count, `$filled` a power of two) lane `l`
/// reads slot `l mod $filled` and the steps below `$filled` merge them ([`warp_merge_equal`]).
macro_rules! merge_slots {
    ($S:ty, $equal:expr, $slots:expr, $lane:expr, $filled:expr) => {{
        let (lane, filled): (u32, u32) = ($lane, $filled);
        if $equal {
            warp_merge_equal(
                slot_or_empty!($S, $slots, lane & (filled - 1), filled),
                filled,
            )
        } else {
            warp_merge(slot_or_empty!($S, $slots, lane, filled))
        }
    }};
}

/// The statistic over the warp, in every lane: five `shfl.sync.bfly` steps.
///
/// # Safety
/// All 32 lanes of the warp call it together.
#[inline(always)]
unsafe fn warp_merge<S: Stat>(mut s: S) -> S {
    let mut mask = 16;
    while mask > 0 {
        s = s.merge(s.shfl_xor(mask));
        mask >>= 1;
    }
    s
}

/// The statistic over the first `width` lanes' parts (a power of two, at most 32), each of
/// as many elements, in every lane whose `lane mod width` lane holds the same part as it: the
/// butterfly's steps of masks below `width` ([`Stat::merge_equal_lane`]).
///
/// # Safety
/// All 32 lanes of the warp call it together, with the same `width`.
#[inline(always)]
unsafe fn warp_merge_equal<S: Stat>(mut s: S, width: u32) -> S {
    let mut mask = 16;
    while mask > 0 {
        if mask < width {
            s = s.merge_equal_lane(mask);
        }
        mask >>= 1;
    }
    s
}

/// Where a thread sits in the group that holds its row.
#[derive(Clone, Copy)]
pub struct Seat {
    pub row: u32,
    /// Its block's rank in the cluster (0 outside a cluster), and how many blocks hold the
    /// row (1 outside a cluster).
    pub rank: u32,
    pub blocks: u32,
    /// Its index among the threads of its block that hold the row, and how many those are.
    pub t: u32,
    pub threads: u32,
    /// How many rows the group held before this one (a cluster walks several).
    pub turn: u32,
}

impl Seat {
    /// Whether the group's merges pair parts of as many elements at every step: every thread
    /// holds `L` whole vectors of a row of `at.vectors` (the row fills the group's vectors),
    /// and a block's warps and the group's blocks are powers of two (the bench's cluster rows
    /// of 32768, 131072 and 262144: clusters of 2, 8 and 16 blocks of 16 or 8 warps).
    #[inline(always)]
    pub fn equal_parts<const L: usize>(self, at: Lanes) -> bool {
        at.vectors == self.blocks * self.threads * L as u32
            && (self.threads / 32).is_power_of_two()
            && self.blocks.is_power_of_two()
    }
}

/// How many threads hold a row, and how they merge their statistics.
pub trait Group {
    /// This thread's seat; None when its group has no row (past the last).
    fn seat(rows: u32) -> Option<Seat>;
    /// The seat of the group's next row, after `seat`'s: None where each group holds one row
    /// (a warp, a block); a cluster walks the rows its grid does not cover.
    #[inline(always)]
    fn next(_seat: Seat, _rows: u32) -> Option<Seat> {
        None
    }
    /// Before the group's first row.
    ///
    /// # Safety
    /// Every thread of the group calls it, once, before [`Group::merge`].
    #[inline(always)]
    unsafe fn start() {}
    /// The statistic over the whole group, in every thread.
    ///
    /// # Safety
    /// Every thread of the group calls it together (it may hold barriers), once a row.
    unsafe fn merge<S: Stat>(seat: Seat, s: S) -> S;
    /// [`Group::merge`] where its merges pair parts of as many elements at every step
    /// ([`Seat::equal_parts`]): a statistic may then merge without its count
    /// ([`Stat::merge_equal_lane`]).
    ///
    /// # Safety
    /// As [`Group::merge`], where [`Seat::equal_parts`] holds.
    #[inline(always)]
    unsafe fn merge_equal<S: Stat>(seat: Seat, s: S) -> S {
        Self::merge(seat, s)
    }
    /// Whether a second merge costs about what the first did (a warp's shuffles, a block's
    /// one barrier more), so an op may spend one on a simpler statistic; not a cluster's,
    /// whose blocks wait on each other again.
    const MERGES_AGAIN_CHEAPLY: bool = true;
    /// Whether the group holds its row in registers from its load to its store; if not
    /// ([`Streamed`]), each pass over the row loads it again (`passes.rs`).
    const HOLDS_ROW: bool = true;
    /// Whether the row's loads are one straight run ([`load`]): where the kernel has the
    /// registers for their clamped addresses.
    const LOADS_IN_ONE_RUN: bool = false;
    /// Whether the row's loads ask the L2 to keep their lines (`evict_last`, [`load`]) rather
    /// than load them plainly (`evict_normal`): the row is dead once loaded, and the policy
    /// pays only where measured to.
    const ROW_EVICT_LAST: bool = true;
    /// Whether the group loads its weights (`w`, `b`) with its row, before the merge, and
    /// holds them in registers to the output pass, rather than loading them after the merge,
    /// each a round trip to the L1 or the L2 the output then waits for: where a group's row is
    /// short enough that those round trips are a part of its time.
    const WEIGHTS_WITH_ROW: bool = false;
    /// Whether the group keeps each thread's vectors of `w` in shared memory from its first
    /// row (past `SHARED_BYTES`) instead of loading them again for each row: where a group
    /// walks rows with the same threads on the same columns (a cluster).
    const KEEPS_WEIGHTS: bool = false;
    /// Whether a group that keeps its weights keeps all of LayerNorm's `b` with `w`, not its
    /// first `CLUSTER_KEPT_B_VECTORS` vectors ([`ClusterPair`], whose two rows share them).
    const KEEPS_ALL_B: bool = false;
    /// Whether a thread may be seated past the last row, holding none but keeping the
    /// group's barriers ([`ClusterPair`]'s second half of an odd row count).
    const SEATS_IDLE: bool = false;
    /// The merges' shared memory, before the kept weights.
    const SLOTS_BYTES: u32 = SHARED_BYTES;
    /// Whether this thread writes the kept weights ([`Group::KEEPS_WEIGHTS`]): each its own,
    /// unless threads of the group share them.
    #[inline(always)]
    fn writes_kept() -> bool {
        true
    }
    /// The threads whose kept vectors lie side by side ([`Group::KEEPS_WEIGHTS`]): the seat's.
    #[inline(always)]
    fn kept_stride<E: Elem>(seat: Seat) -> u32 {
        seat.threads
    }
    /// The seat again after the merge, for the row's output pass: the same seat, or one whose
    /// parts are read again from their special registers rather than held across the merge.
    #[inline(always)]
    fn seat_again(seat: Seat) -> Seat {
        seat
    }
    /// After the kept weights are written (`kept`: where they were), before the first row.
    ///
    /// # Safety
    /// Every thread of the block calls it, once.
    #[inline(always)]
    unsafe fn ready(_kept: bool) {}
    /// A merge after [`Group::merge`].
    ///
    /// # Safety
    /// As [`Group::merge`], after it, and the two statistics' words together at most
    /// `SLOT_WORDS`.
    #[inline(always)]
    unsafe fn merge_again<S: Stat>(seat: Seat, s: S) -> S {
        Self::merge(seat, s)
    }
    /// After the group's last row, before its threads exit.
    ///
    /// # Safety
    /// Every thread of the group calls it, once.
    #[inline(always)]
    unsafe fn done() {}
}

/// A warp per row: `block_dim / 32` rows per block.
pub struct Warp;

impl Group for Warp {
    /// The short rows, as Inductor's kernels for them load theirs. On the nine short cases a
    /// warp holds, `evict_normal` against `evict_last` in the peers' rotation: with the L2 clean
    /// 9 faster (+0.2 to +2.3 %), with another buffer's dirty lines 7 and 8 of 9 (−1.7 to +1.8
    /// %); in the lab's bench (its own output poisoned before each launch) all 9 slower (−0.1 to
    /// −2.3 %, the f32 norms most): results/rows/979852d/experiments, sections 5 and 6. The
    /// harnesses disagree, so the mechanism decides: a line kept past the others here is a dead
    /// line of `x`, kept over the `y` the next kernel reads.
    const ROW_EVICT_LAST: bool = false;
    /// As Inductor's kernels for these rows load theirs. After the merge, a warp's output
    /// waited for `w`, then `b`, of each vector in turn (SASS), a fixed cost a row that the
    /// peers' rotation split from the stream rate (results/rows/e8d2463/experiments). With
    /// the weights in flight beside the row, against torch.compile in the rotation (two
    /// rounds, both compilers, the norms' warp cases at 32768–131072 x 512 and 32768 x 1024
    /// bf16): time over compile's, LayerNorm bf16 1.009 → 0.992, RMSNorm bf16 1.016 → 1.004,
    /// LayerNorm f32 1.018 → 1.010, RMSNorm f32 1.009 → 1.008; the block kernels beside them,
    /// unchanged, 1.012 → 1.014 (results/rows/e8d2463/experiments, section 5). It costs
    /// registers: LayerNorm's warp kernels 64 (half the SM's warps), its narrow ones 40 (50 of
    /// its 64 warps), RMSNorm's 48 and 32.
    const WEIGHTS_WITH_ROW: bool = true;
    #[inline(always)]
    fn seat(rows: u32) -> Option<Seat> {
        let row = block_idx_x() * (block_dim_x() / 32) + thread_idx_x() / 32;
        (row < rows).then(|| Seat {
            row,
            rank: 0,
            blocks: 1,
            t: thread_idx_x() % 32,
            threads: 32,
            turn: 0,
        })
    }
    #[inline(always)]
    unsafe fn merge<S: Stat>(_seat: Seat, s: S) -> S {
        warp_merge(s)
    }
    #[inline(always)]
    unsafe fn merge_equal<S: Stat>(_seat: Seat, s: S) -> S {
        warp_merge_equal(s, 32)
    }
}

/// A block per row.
pub struct Block;

/// The statistic over the block, in every thread: each warp's in its lanes, lane 0 writes it
/// to the warp's shared slot (`slots`, a warp's every `SLOT_WORDS`), one barrier, then every
/// warp merges the slots. `EQUAL`: every thread's part is of as many elements and the warps
/// are a power of two ([`Group::merge_equal`]); lane `l` then reads slot `l mod warps`, and
/// the slots merge in the butterfly's steps below `warps`.
///
/// # Safety
/// Every thread of the block calls it; `slots` points into the block's shared memory, at 32
/// slots, `S::WORDS` words of each free for this merge.
#[inline(always)]
unsafe fn block_merge<S: Stat, const EQUAL: bool>(s: S, slots: *mut u32) -> S {
    let s = if EQUAL {
        warp_merge_equal(s, 32)
    } else {
        warp_merge(s)
    };
    let (tid, warps) = (thread_idx_x(), block_dim_x() / 32);
    let (warp, lane) = (tid / 32, tid % 32);
    if lane == 0 {
        let w = s.words();
        upto16!(S::WORDS, i, {
            *slots.add((warp * SLOT_WORDS) as usize + i) = w[i];
        });
    }
    sync_threads();
    merge_slots!(S, EQUAL, slots, lane, warps)
}

impl Group for Block {
    #[inline(always)]
    fn seat(rows: u32) -> Option<Seat> {
        (block_idx_x() < rows).then(|| Seat {
            row: block_idx_x(),
            rank: 0,
            blocks: 1,
            t: thread_idx_x(),
            threads: block_dim_x(),
            turn: 0,
        })
    }
    #[inline(always)]
    unsafe fn merge<S: Stat>(_seat: Seat, s: S) -> S {
        block_merge::<S, false>(s, dynamic_shared::<u32>())
    }
    #[inline(always)]
    unsafe fn merge_equal<S: Stat>(_seat: Seat, s: S) -> S {
        block_merge::<S, true>(s, dynamic_shared::<u32>())
    }
    /// In the words of each slot the first merge left free (the slots' last `S::WORDS`), so
    /// no warp waits for the others to have read the first merge's: its one barrier.
    #[inline(always)]
    unsafe fn merge_again<S: Stat>(_seat: Seat, s: S) -> S {
        block_merge::<S, false>(
            s,
            dynamic_shared::<u32>().add(SLOT_WORDS as usize - S::WORDS),
        )
    }
}

/// A block per row that holds none of it: each pass loads the row again (`passes.rs`),
/// the first from DRAM, the others from the L2; seated and merged as [`Block`].
pub struct Streamed;

impl Group for Streamed {
    #[inline(always)]
    fn seat(rows: u32) -> Option<Seat> {
        Block::seat(rows)
    }
    #[inline(always)]
    unsafe fn merge<S: Stat>(seat: Seat, s: S) -> S {
        Block::merge(seat, s)
    }
    #[inline(always)]
    unsafe fn merge_equal<S: Stat>(seat: Seat, s: S) -> S {
        Block::merge_equal(seat, s)
    }
    #[inline(always)]
    unsafe fn merge_again<S: Stat>(seat: Seat, s: S) -> S {
        Block::merge_again(seat, s)
    }
    const HOLDS_ROW: bool = false;
}

/// A thread-block cluster per row (sm_90).
pub struct Cluster;

/// The cluster's shared memory, past the block's 32 slots: a second set of 32 (rows of odd
/// turn), then the blocks' statistics of even and odd turns (`CLUSTER_MAX` slots each), then
/// the two barriers that count them.
mod cluster_shared {
    use super::*;
    /// The 32 warp slots of a turn's block merge.
    pub fn warp_slots(turn: u32) -> *mut u32 {
        // SAFETY (all three): offsets inside `SHARED_BYTES`.
        unsafe { dynamic_shared::<u32>().add(((turn % 2) * 32 * SLOT_WORDS) as usize) }
    }
    /// The blocks' statistics of a turn, block `r`'s at slot `r`.
    pub fn block_slots(turn: u32) -> *mut u32 {
        let at = 64 * SLOT_WORDS + (turn % 2) * CLUSTER_MAX * SLOT_WORDS;
        unsafe { dynamic_shared::<u32>().add(at as usize) }
    }
    /// The barrier whose phase completes when every block's statistic of a turn has arrived.
    pub fn arrived(turn: u32) -> *mut u64 {
        let at = (64 + 2 * CLUSTER_MAX) * SLOT_WORDS * 4 + (turn % 2) * 8;
        unsafe { dynamic_shared::<u8>().add(at as usize) as *mut u64 }
    }
}

/// Each block's statistic ([`block_merge`]), then thread `r` of each block sends it to block
/// `r`'s slot by an asynchronous store that block `r`'s barrier counts; every thread waits for
/// its block's barrier (every block's statistic there), and every warp merges the slots (lane
/// `r` block `r`'s; `EQUAL` as [`block_merge`]'s, over the blocks). No cluster barrier, no
/// fence: a block waits only for the words it needs. A turn's slots and barrier alternate with
/// the next's, and a block cannot send a turn ahead before every block has read this one (it
/// would need their next statistics first).
///
/// # Safety
/// As [`Group::merge`] for [`Cluster`].
#[inline(always)]
unsafe fn cluster_merge<S: Stat, const EQUAL: bool>(seat: Seat, s: S) -> S {
    let s = block_merge::<S, EQUAL>(s, cluster_shared::warp_slots(seat.turn));
    let (slots, arrived) = (
        cluster_shared::block_slots(seat.turn),
        cluster_shared::arrived(seat.turn),
    );
    exchange::<S, EQUAL>(seat, s, thread_idx_x(), slots, arrived)
}

/// [`cluster_merge`]'s exchange of the blocks' statistics `s` (each already its block's, or a
/// pair's half's), `t` the thread's index in its block (or half): thread `r` sends to block
/// `r`'s slot of `slots`, counted by that block's `arrived`; then the wait and the slots'
/// merge.
///
/// # Safety
/// Every thread of the block (or half) calls it with the same turn's `slots` and `arrived`.
#[inline(always)]
unsafe fn exchange<S: Stat, const EQUAL: bool>(
    seat: Seat,
    s: S,
    t: u32,
    slots: *mut u32,
    arrived: *mut u64,
) -> S {
    let blocks = cluster_nctarank();
    if t == 0 {
        mbarrier_arrive_expect_tx(arrived, blocks * S::WORDS as u32 * 4);
    }
    if t < blocks {
        let w = s.words();
        let mine = slots.add((seat.rank * SLOT_WORDS) as usize);
        upto16!(S::WORDS, i, {
            st_async_u32(mine.add(i), w[i], arrived, t);
        });
    }
    mbarrier_wait_parity(arrived, (seat.turn / 2) % 2);
    merge_slots!(S, EQUAL, slots, t % 32, blocks)
}

/// The seat `stride` rows down from `seat`'s, while there is a row there: the cluster's walk
/// ([`Cluster::next`]).
#[inline(always)]
fn walk(seat: Seat, rows: u32, stride: u32) -> Option<Seat> {
    let row = seat.row.checked_add(stride).filter(|&r| r < rows)?;
    Some(Seat {
        row,
        t: opaque_u32(seat.t),
        turn: seat.turn + 1,
        ..seat
    })
}

impl Group for Cluster {
    #[inline(always)]
    fn seat(rows: u32) -> Option<Seat> {
        (cluster_id_x() < rows).then(|| Seat {
            row: cluster_id_x(),
            rank: cluster_ctarank(),
            blocks: cluster_nctarank(),
            t: thread_idx_x(),
            threads: block_dim_x(),
            turn: 0,
        })
    }
    /// The grid holds at most the clusters that fit on the GPU at once (the host's launch):
    /// each walks the rows `r, r + clusters, …`, so its barriers are set up once, not once a
    /// row ([`Group::start`], [`Group::done`]). The thread's index passes through
    /// [`opaque_u32`]: the addresses of its vectors and weights are then computed for each
    /// row, not hoisted and held across rows (which took the kernels from 56–64 registers to
    /// 72–96: one block an SM instead of two).
    #[inline(always)]
    fn next(seat: Seat, rows: u32) -> Option<Seat> {
        walk(seat, rows, cluster_count_x())
    }
    /// Thread 0 sets up the two barriers (each completes a phase on its one arrival and the
    /// bytes it expects); a cluster barrier, so no block sends to another's before they are.
    #[inline(always)]
    unsafe fn start() {
        if thread_idx_x() == 0 {
            mbarrier_init_for_cluster(cluster_shared::arrived(0), 1);
            mbarrier_init_for_cluster(cluster_shared::arrived(1), 1);
        }
        cluster_arrive_relaxed();
        cluster_wait();
    }
    #[inline(always)]
    unsafe fn merge<S: Stat>(seat: Seat, s: S) -> S {
        cluster_merge::<S, false>(seat, s)
    }
    #[inline(always)]
    unsafe fn merge_equal<S: Stat>(seat: Seat, s: S) -> S {
        cluster_merge::<S, true>(seat, s)
    }
    const MERGES_AGAIN_CHEAPLY: bool = false;
    const LOADS_IN_ONE_RUN: bool = true;
    const KEEPS_WEIGHTS: bool = true;
    /// No block exits while another may still send to it.
    #[inline(always)]
    unsafe fn done() {
        cluster_arrive_relaxed();
        cluster_wait();
    }
}

mod pair;
pub use pair::*;
