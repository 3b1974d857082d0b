//! Two rows a block of a thread-block cluster ([`ClusterPair`]): the pair schedule, each half
//! of a block merging as a [`Cluster`]'s block does, on its own named barrier.

use super::*;

/// Two rows a block of a thread-block cluster: each half of a block holds a row with the same
/// half of the cluster's other blocks, on the same columns as the other half, so the block
/// keeps one copy of its columns' weights for both rows (all of `b` with `w`: `rows.rs`'s
/// `kept_b`). The second half starts its first row once the first half has merged its own, so
/// that one half loads while the other merges and writes. A half merges as a [`Cluster`]'s
/// block does, with its own slots and barriers and a named barrier (1 + half) for its warps.
pub struct ClusterPair<const HALF: u32>;

/// A [`ClusterPair`] block's shared memory, before its kept weights: for each half (at
/// `half · PAIR_SHARED_BYTES / 2`), [`cluster_shared`]'s layout with warp slots for the
/// half's at most `CLUSTER_THREADS / 32` warps a turn instead of 32.
mod pair_shared {
    use super::*;
    /// A half's most warps.
    const WARPS: u32 = CLUSTER_THREADS / 32;
    fn base(half: u32) -> *mut u8 {
        // SAFETY (all four): offsets inside the launch's `PAIR_SHARED_BYTES`.
        unsafe { dynamic_shared::<u8>().add((half * PAIR_SHARED_BYTES / 2) as usize) }
    }
    /// The warp slots of a turn's merge of `half`.
    pub fn warp_slots(turn: u32, half: u32) -> *mut u32 {
        unsafe { (base(half) as *mut u32).add(((turn % 2) * WARPS * SLOT_WORDS) as usize) }
    }
    /// The blocks' statistics of a turn of `half`, block `r`'s at slot `r`.
    pub fn block_slots(turn: u32, half: u32) -> *mut u32 {
        let at = (2 * WARPS + (turn % 2) * CLUSTER_MAX) * SLOT_WORDS;
        unsafe { (base(half) as *mut u32).add(at as usize) }
    }
    /// The barrier whose phase completes when every block's statistic of a turn of `half` has
    /// arrived.
    pub fn arrived(turn: u32, half: u32) -> *mut u64 {
        let at = (2 * WARPS + 2 * CLUSTER_MAX) * SLOT_WORDS * 4 + (turn % 2) * 8;
        unsafe { base(half).add(at as usize) as *mut u64 }
    }
}

/// This thread's half (0 or 1) of a block of two halves of `HALF` threads, and `HALF`.
#[inline(always)]
fn half<const HALF: u32>() -> (u32, u32) {
    ((thread_idx_x() >= HALF) as u32, HALF)
}

/// The named barrier the first half arrives at after its first merge, for the second to start.
const SECOND_HALF_STARTS: u32 = 3;

/// [`block_merge`] over one half of the block, at its named barrier.
///
/// # Safety
/// Every thread of the half calls it; `slots` as [`block_merge`]'s.
#[inline(always)]
unsafe fn half_merge<S: Stat, const EQUAL: bool, const HALF: u32>(
    s: S,
    slots: *mut u32,
    t: u32,
) -> S {
    let s = if EQUAL {
        warp_merge_equal(s, 32)
    } else {
        warp_merge(s)
    };
    let threads = HALF;
    let (warp, lane) = (t / 32, t % 32);
    if lane == 0 {
        let w = s.words();
        upto16!(S::WORDS, i, {
            *slots.add((warp * SLOT_WORDS) as usize + i) = w[i];
        });
    }
    sync_half_block();
    merge_slots!(S, EQUAL, slots, lane, threads / 32)
}

/// [`cluster_merge`] for this thread's half: its half of every block of the cluster.
///
/// # Safety
/// As [`Group::merge`] for [`ClusterPair`].
#[inline(always)]
unsafe fn pair_merge<S: Stat, const EQUAL: bool, const HALF: u32>(seat: Seat, s: S) -> S {
    let (half, _) = half::<HALF>();
    let s = half_merge::<S, EQUAL, HALF>(s, pair_shared::warp_slots(seat.turn, half), seat.t);
    let (slots, arrived) = (
        pair_shared::block_slots(seat.turn, half),
        pair_shared::arrived(seat.turn, half),
    );
    let merged = exchange::<S, EQUAL>(seat, s, seat.t, slots, arrived);
    if seat.turn == 0 && half == 0 {
        arrive_named(SECOND_HALF_STARTS, 2 * HALF);
    }
    merged
}

impl<const HALF: u32> Group for ClusterPair<HALF> {
    /// A half whose first row is past the last (the cluster's second, of an odd count) is
    /// seated at `rows`, holding no row but keeping the block's barriers.
    #[inline(always)]
    fn seat(rows: u32) -> Option<Seat> {
        let (half, threads) = half::<HALF>();
        let first = cluster_id_x() * 2;
        (first < rows).then(|| Seat {
            row: (first + half).min(rows),
            rank: cluster_ctarank(),
            blocks: cluster_nctarank(),
            t: thread_idx_x() - half * threads,
            threads,
            turn: 0,
        })
    }
    /// Each half walks the rows `r, r + 2 · clusters, …` ([`Cluster::next`]'s walk, two rows
    /// a cluster).
    #[inline(always)]
    fn next(seat: Seat, rows: u32) -> Option<Seat> {
        walk(seat, rows, 2 * cluster_count_x())
    }
    /// Thread 0 sets up both halves' two barriers; a cluster barrier, as [`Cluster::start`].
    #[inline(always)]
    unsafe fn start() {
        if thread_idx_x() == 0 {
            for half in 0..2 {
                mbarrier_init_for_cluster(pair_shared::arrived(0, half), 1);
                mbarrier_init_for_cluster(pair_shared::arrived(1, half), 1);
            }
        }
        cluster_arrive_relaxed();
        cluster_wait();
    }
    /// The rank read again: held across the merge, rustc's pair kernels spilled the row's
    /// offset in the cluster (`rank · HALF · L`) and reloaded it each row and twice in the
    /// output pass, where ncu found ~1,000 of `layernorm_pair_f32`'s 14,400 stall samples
    /// waiting on the local loads (results/rows/ee86824/experiments, section 2).
    #[inline(always)]
    fn seat_again(seat: Seat) -> Seat {
        Seat {
            rank: cluster_ctarank_here(),
            ..seat
        }
    }
    /// A half's threads, a constant: every kept vector is then an immediate offset from one
    /// address, where the 16 offsets `n · threads` held in registers spilled.
    #[inline(always)]
    fn kept_stride<E: Elem>(_seat: Seat) -> u32 {
        HALF
    }
    /// The first half writes the kept weights, which both read.
    #[inline(always)]
    fn writes_kept() -> bool {
        half::<HALF>().0 == 0
    }
    /// Every thread waits for the kept weights; the second half then for the first half's
    /// first merge.
    #[inline(always)]
    unsafe fn ready(kept: bool) {
        if kept {
            sync_threads();
        }
        if half::<HALF>().0 == 1 {
            sync_named(SECOND_HALF_STARTS, 2 * HALF);
        }
    }
    #[inline(always)]
    unsafe fn merge<S: Stat>(seat: Seat, s: S) -> S {
        pair_merge::<S, false, HALF>(seat, s)
    }
    #[inline(always)]
    unsafe fn merge_equal<S: Stat>(seat: Seat, s: S) -> S {
        pair_merge::<S, true, HALF>(seat, s)
    }
    const MERGES_AGAIN_CHEAPLY: bool = false;
    const LOADS_IN_ONE_RUN: bool = true;
    const KEEPS_WEIGHTS: bool = true;
    const KEEPS_ALL_B: bool = true;
    const SEATS_IDLE: bool = true;
    const SLOTS_BYTES: u32 = PAIR_SHARED_BYTES;
    /// As [`Cluster::done`]: no block exits while another may still send to it.
    #[inline(always)]
    unsafe fn done() {
        Cluster::done()
    }
}
