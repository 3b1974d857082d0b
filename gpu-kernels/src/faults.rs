//! The microscope's fault catalogue, planted: for each fault a kernel that has it
//! (`<fault>_fault`) and its fixed twin (`<fault>_fixed`), exactly one thing changed between
//! them: the fix the catalogue names. The catalogue (`catalog/src/kernels/faults.rs`) states for
//! each the verdict its profile must get and the ncu counter that shows the fix; `docs/faults.md`
//! has the table.
//!
//! | pair | the fault | the fix |
//! |---|---|---|
//! | `tensor_cores` ([`gemm`]) | FP32 GEMM on the FMA pipe | BF16 inputs, `mma.sync` |
//! | `coalescing` | `out[i] = in[32 i]` | `out[i] = in[i]` |
//! | `occupancy` | 96 live values per thread | 2 |
//! | `bank_conflicts` | column reads of a 32 × 32 tile | a 32 × 33 tile |
//! | `tail` | 1.15 waves of long blocks | one wave, grid-stride |
//! | `undersized_grid` | 16 blocks | one wave |
//! | `divergence` | the path chosen per lane | per warp |
//! | `spills` | a per-thread array indexed at run time | at compile time |
//! | `memory_bound` (control) | two elementwise passes | fused into one |
//! | `async_stages` | `cp.async`, one stage | four stages |
//! | `sfu` | 32 `sin.approx` per element | the same sines by an FMA recurrence |
//! | `l2_resident` | a 16 MiB working set | 256 MiB |
//! | `barrier` | a shared-memory butterfly per 32 elements | warp shuffles |
//!
//! Every kernel takes raw pointers and `u64`/`u32` sizes; each launch's shape is in its
//! catalogue entry and its launcher (`host/src/launchers/faults/`), which checks what the
//! kernel assumes. Mixing uses [`mix`], which the host's references repeat.

use crate::device::*;
pub use crate::launch::faults::*;

/// `$body` once for each `$i` in `$base .. $base + $n` (`$n` one of 1, 2, 4, 8, 16, 32, 64,
/// 96), `$i` a `usize` constant in each copy: no loop is left for a compiler to keep, so arrays
/// indexed by `$i` stay in registers whatever the compiler's unrolling heuristics decide.
macro_rules! unroll {
    (1, $i:ident, $base:expr, $body:block) => {{
        let $i: usize = $base;
        $body
    }};
    (2, $i:ident, $base:expr, $body:block) => {
        unroll!(1, $i, $base, $body);
        unroll!(1, $i, $base + 1, $body);
    };
    (4, $i:ident, $base:expr, $body:block) => {
        unroll!(2, $i, $base, $body);
        unroll!(2, $i, $base + 2, $body);
    };
    (8, $i:ident, $base:expr, $body:block) => {
        unroll!(4, $i, $base, $body);
        unroll!(4, $i, $base + 4, $body);
    };
    (16, $i:ident, $base:expr, $body:block) => {
        unroll!(8, $i, $base, $body);
        unroll!(8, $i, $base + 8, $body);
    };
    (32, $i:ident, $base:expr, $body:block) => {
        unroll!(16, $i, $base, $body);
        unroll!(16, $i, $base + 16, $body);
    };
    (64, $i:ident, $base:expr, $body:block) => {
        unroll!(32, $i, $base, $body);
        unroll!(32, $i, $base + 32, $body);
    };
    (96, $i:ident, $base:expr, $body:block) => {
        unroll!(64, $i, $base, $body);
        unroll!(32, $i, $base + 64, $body);
    };
}

pub mod gemm;

// The literal counts of the `unroll!`s below, held to the launch constants they stand for.
const _: () = assert!(LIVE_FAULT == 96 && LIVE_FIXED == 2);
const _: () = assert!(SPILL_WORDS == 32 && SPILL_PASSES * SPILL_WORDS == 64);
const _: () = assert!(PER_THREAD == 4 && LINE_WORDS == 256 && SEGMENT == 32);
const _: () = assert!(UNIT_CHAINS == 8 && UNIT_STEPS % 16 == 0);

/// One step of an FNV-1a-style hash: `(h ^ v) · 0x01000193`, wrapping. Order-dependent, so no
/// compiler can merge or reorder the steps of a chain of them.
#[inline(always)]
pub fn mix(h: u32, v: u32) -> u32 {
    (h ^ v).wrapping_mul(0x0100_0193)
}

#[inline(always)]
fn global_thread() -> u64 {
    block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64
}

#[inline(always)]
fn grid_threads() -> u64 {
    grid_dim_x() as u64 * block_dim_x() as u64
}

/// `a · x + b` for each of the four lanes of a 16-byte group, one rounding each.
#[inline(always)]
fn fma4(v: Vec4<f32>, a: f32, b: f32) -> Vec4<f32> {
    let Vec4([x, y, z, w]) = v;
    Vec4([
        fma_f32(x, a, b),
        fma_f32(y, a, b),
        fma_f32(z, a, b),
        fma_f32(w, a, b),
    ])
}

// ---- 2. Uncoalesced global access. ----

/// `out[i] = f(load(i))` for the [`PER_THREAD`] elements `i` of this thread below `n`: thread
/// `t` of block `b` takes `i = (b · PER_THREAD + k) · BLOCK + t`, `k < PER_THREAD`, all its loads
/// issued before the first `f`, so each thread has [`PER_THREAD`] independent loads in flight
/// and each of them is a warp's consecutive `i`.
///
/// # Launch
/// 1-D, blocks of [`BLOCK`] threads, `ceil(n / (BLOCK · PER_THREAD))` of them.
#[inline(always)]
unsafe fn per_thread<F: Fn(u64) -> f32, G: Fn(f32) -> f32>(n: u64, out: *mut f32, load: F, f: G) {
    let first = block_idx_x() as u64 * (BLOCK * PER_THREAD) as u64 + thread_idx_x() as u64;
    let at = |k: usize| first + k as u64 * BLOCK as u64;
    let mut v = [0.0f32; PER_THREAD as usize];
    unroll!(4, k, 0, {
        if at(k) < n {
            v[k] = load(at(k));
        }
    });
    unroll!(4, k, 0, {
        if at(k) < n {
            *out.add(at(k) as usize) = f(v[k]);
        }
    });
}

/// `out[i] = input[(i · STRIDE) & mask]` for `i < n`, [`PER_THREAD`] elements per thread
/// ([`per_thread`]). At `STRIDE` 32 the lanes of a warp read 32 different 128-byte lines (a
/// 32-byte sector each for 4 useful bytes); at 1, one line. `mask` (a power of two minus one,
/// the input's length − 1) keeps the strided reads inside an input 4 × the L2 or more.
#[inline(always)]
unsafe fn strided_copy<const STRIDE: u64>(input: *const f32, mask: u64, out: *mut f32, n: u64) {
    per_thread(
        n,
        out,
        |i| unsafe { *input.add(((i * STRIDE) & mask) as usize) },
        |x| x,
    )
}

kernel! {
    /// The fault: a copy that reads every [`STRIDE`]-th element.
    fn coalescing_fault(input: *const f32, mask: u64, out: *mut f32, n: u64) {
        strided_copy::<{ STRIDE as u64 }>(input, mask, out, n)
    }
}

kernel! {
    /// The fix: consecutive elements.
    fn coalescing_fixed(input: *const f32, mask: u64, out: *mut f32, n: u64) {
        strided_copy::<1>(input, mask, out, n)
    }
}

// ---- 3. Occupancy starved by registers. ----

/// A warp-wide chase through `table`, `steps` steps per thread: at each step every lane loads
/// its two 16-byte groups of the warp's current line (1 KiB per warp, each load a warp's
/// consecutive 512 bytes) and folds their eight words into one of `$live` accumulators in turn
/// ([`mix`]), all of them live for the whole loop; the next line is named by the first word,
/// so each step waits for the one before. One step in flight per warp: the bytes in flight,
/// and so the speed, are set by the warps resident, which the `$live` registers per thread
/// decide. (A macro, not a function generic over `$live`: [`unroll!`] takes a literal count.)
///
/// - `table`: `(mask + 1) · LINE_WORDS` words, 16-byte aligned; every word of line `l` holds
///   the next line after `l` in its low bits (`& mask`).
/// - `steps`: a multiple of `$live`.
/// - `out`: one word per thread, the fold of its accumulators.
///
/// # Launch
/// 1-D, blocks of [`BLOCK`] threads, no shared memory, any grid; warp `w` (of the grid)
/// starts at line `w · 0x9E3779B1 & mask`.
macro_rules! chase_live {
    ($(#[$m:meta])* $name:ident, $live:tt) => {
        kernel! {
            $(#[$m])*
            fn $name(table: *const u32, mask: u32, steps: u32, out: *mut u32) {
                let gtid = global_thread();
                let lane = thread_idx_x() % 32;
                let groups = table as *const Vec4<u32>;
                let mut line = ((gtid / 32) as u32).wrapping_mul(0x9E37_79B1) & mask;
                let mut acc = [lane; $live];
                let mut t = 0;
                while t < steps {
                    unroll!($live, j, 0, {
                        let g = (line * (LINE_WORDS / 4) + lane) as usize;
                        let Vec4([a, b, c, d]) = load4(groups.add(g));
                        let Vec4([e, f, g2, h]) = load4(groups.add(g + 32));
                        let v = mix(mix(mix(mix(acc[j], a), b), c), d);
                        acc[j] = mix(mix(mix(mix(v, e), f), g2), h);
                        line = a & mask;
                    });
                    t += $live;
                }
                let mut h = 0;
                unroll!($live, j, 0, {
                    h = mix(h, acc[j]);
                });
                *out.add(gtid as usize) = h;
            }
        }
    };
}

chase_live! {
    /// The fault: [`LIVE_FAULT`] live accumulators per thread.
    occupancy_fault, 96
}

chase_live! {
    /// The fix: [`LIVE_FIXED`].
    occupancy_fixed, 2
}

// ---- 4. Shared-memory bank conflicts. ----

/// Each warp copies a 32 × 32 tile of `input` into shared memory (rows `PITCH` words apart),
/// then reads it by columns `reps` times: lane `l` reads row `l`, word by word, with one
/// volatile `ld.shared` each, folding them into `acc = acc · 31 + v`. With `PITCH` 32 the 32
/// lanes' words share one bank (32-way conflicts); with 33 they fall in 32 banks.
///
/// - `input`: 1024 words per warp of the grid; `out`: one word per thread.
///
/// # Launch
/// 1-D, blocks of [`BLOCK`] threads, `input.len() / (BLOCK · 32)` of them, dynamic shared
/// memory `BLOCK / 32 · TILE · PITCH · 4` bytes.
#[inline(always)]
unsafe fn column_reads<const PITCH: u32>(input: *const u32, reps: u32, out: *mut u32) {
    let tid = thread_idx_x();
    let (lane, warp) = (tid % 32, tid / 32);
    let tile = dynamic_shared::<u32>().add((warp * TILE * PITCH) as usize);
    let src = input.add(((global_thread() / 32) * (TILE * TILE) as u64) as usize);
    let mut r = 0;
    while r < TILE {
        *tile.add((r * PITCH + lane) as usize) = *src.add((r * TILE + lane) as usize);
        r += 1;
    }
    sync_threads();
    let row = tile.add((lane * PITCH) as usize);
    let mut acc = lane;
    let mut k = 0;
    while k < reps {
        let mut c = 0;
        while c < TILE {
            let v = ld_shared_volatile_u32(row.add(c as usize));
            acc = acc.wrapping_mul(31).wrapping_add(v);
            c += 1;
        }
        k += 1;
    }
    *out.add(global_thread() as usize) = acc;
}

kernel! {
    /// The fault: an unpadded tile, [`PITCH_FAULT`] words per row.
    fn bank_conflicts_fault(input: *const u32, reps: u32, out: *mut u32) {
        column_reads::<PITCH_FAULT>(input, reps, out)
    }
}

kernel! {
    /// The fix: one word of padding per row, [`PITCH_FIXED`].
    fn bank_conflicts_fixed(input: *const u32, reps: u32, out: *mut u32) {
        column_reads::<PITCH_FIXED>(input, reps, out)
    }
}

// ---- 5. Tail effect, and 6. an undersized grid. ----

/// `units` units of work, block `b` taking units `b, b + grid, b + 2·grid, …`: in each, every
/// thread runs [`UNIT_STEPS`] steps of [`UNIT_CHAINS`] independent chains `x = x · a + b`
/// (`fma.rn.f32`) and stores their sum. Eight warps of eight chains keep an SM's FMA pipe
/// busy on their own, and the launch holds the blocks to one per SM, so a unit takes the same
/// time wherever it runs: a grid of 1.15 waves takes two units' time per block where one wave
/// of grid-stride blocks takes 1.15, and in the second round most SMs have nothing to run.
///
/// Chain `c` of thread `t` in unit `u` starts at `(mix(seed ^ u, t) >> c) & 0xFFFF`. With the
/// host's `a = 1` and a small integer `b` every value is an integer below 2^24, so each sum
/// is exact and the host checks every one (`a` stays a run-time value, so the compilers keep
/// the FMA).
///
/// - `out`: `units · BLOCK` f32.
///
/// # Launch
/// 1-D, blocks of [`BLOCK`] threads, any grid: the work is the same for every grid; the grid
/// decides how it spreads over the SMs. The shared memory the launch reserves is not used.
#[inline(always)]
unsafe fn fma_units(seed: u32, a: f32, b: f32, units: u32, out: *mut f32) {
    let tid = thread_idx_x();
    let mut u = block_idx_x();
    while u < units {
        let h = mix(seed ^ u, tid);
        let mut x = [0f32; UNIT_CHAINS as usize];
        unroll!(8, c, 0, {
            x[c] = ((h >> c) & 0xFFFF) as f32;
        });
        let mut s = 0;
        while s < UNIT_STEPS {
            unroll!(16, _step, 0, {
                unroll!(8, c, 0, {
                    x[c] = fma_f32(x[c], a, b);
                });
            });
            s += 16;
        }
        let mut sum = 0f32;
        unroll!(8, c, 0, {
            sum += x[c];
        });
        *out.add((u as u64 * BLOCK as u64 + tid as u64) as usize) = sum;
        u += grid_dim_x();
    }
}

kernel! {
    /// The tail fault: 1.15 waves of blocks (a wave: one block per SM), [`UNITS_PER_BLOCK`]
    /// units each.
    fn tail_fault(seed: u32, a: f32, b: f32, units: u32, out: *mut f32) {
        fma_units(seed, a, b, units, out)
    }
}

kernel! {
    /// The tail fix: the same code and work on exactly one wave of blocks.
    fn tail_fixed(seed: u32, a: f32, b: f32, units: u32, out: *mut f32) {
        fma_units(seed, a, b, units, out)
    }
}

/// `out[i] = a · input[i] + b` over `groups` 16-byte groups, in a grid-stride loop.
///
/// # Launch
/// 1-D, blocks of [`BLOCK`] threads, no shared memory, any grid; `input`, `out` 16-byte
/// aligned, `4 · groups` f32 each.
#[inline(always)]
unsafe fn fma_grid_stride(input: *const f32, out: *mut f32, groups: u64, a: f32, b: f32) {
    let (src, dst) = (input as *const Vec4<f32>, out as *mut Vec4<f32>);
    let threads = grid_threads();
    let mut i = global_thread();
    while i < groups {
        store4(dst.add(i as usize), fma4(load4(src.add(i as usize)), a, b));
        i += threads;
    }
}

kernel! {
    /// The fault: launched on [`UNDERSIZED_BLOCKS`] blocks.
    fn undersized_grid_fault(input: *const f32, out: *mut f32, groups: u64, a: f32, b: f32) {
        fma_grid_stride(input, out, groups, a, b)
    }
}

kernel! {
    /// The fix: the same code on one wave of blocks.
    fn undersized_grid_fixed(input: *const f32, out: *mut f32, groups: u64, a: f32, b: f32) {
        fma_grid_stride(input, out, groups, a, b)
    }
}

// ---- 7. Warp divergence. ----

/// `steps` rounds of a multiply-xorshift: `x = (x ^ x >> 16) · 0x7feb352d`.
#[inline(always)]
pub fn path_a(mut x: u32, steps: u32) -> u32 {
    let mut s = 0;
    while s < steps {
        x = (x ^ (x >> 16)).wrapping_mul(0x7feb_352d);
        s += 1;
    }
    x
}

/// `steps` rounds of an add-rotate: `x = ((x ^ x << 5) + 0x9e3779b9).rotate_left(7)`.
#[inline(always)]
pub fn path_b(mut x: u32, steps: u32) -> u32 {
    let mut s = 0;
    while s < steps {
        x = (x ^ (x << 5)).wrapping_add(0x9e37_79b9).rotate_left(7);
        s += 1;
    }
    x
}

/// `out[t] = path(seeds[t], steps)`: half the threads take [`path_a`], half [`path_b`], chosen
/// by the thread's lane parity (`PER_WARP` false: both paths in every warp, run one after the
/// other with half the lanes idle) or its warp's parity (true: each warp runs one path).
///
/// # Launch
/// 1-D, blocks of [`BLOCK`] threads, one per `BLOCK` seeds, no shared memory.
#[inline(always)]
unsafe fn two_paths<const PER_WARP: bool>(seeds: *const u32, steps: u32, out: *mut u32) {
    let gtid = global_thread() as usize;
    let tid = thread_idx_x();
    let pick = if PER_WARP { tid / 32 } else { tid };
    let x = *seeds.add(gtid);
    *out.add(gtid) = if pick % 2 == 0 {
        path_a(x, steps)
    } else {
        path_b(x, steps)
    };
}

kernel! {
    /// The fault: the path chosen by lane parity.
    fn divergence_fault(seeds: *const u32, steps: u32, out: *mut u32) {
        two_paths::<false>(seeds, steps, out)
    }
}

kernel! {
    /// The fix: the path chosen by warp parity.
    fn divergence_fixed(seeds: *const u32, steps: u32, out: *mut u32) {
        two_paths::<true>(seeds, steps, out)
    }
}

// ---- 8. Register spilling. ----

/// Each thread keeps [`SPILL_WORDS`] words (starting at `thread ^ j`) and folds
/// `SPILL_PASSES · SPILL_WORDS` elements of `input` into them, element `e` (input index
/// `e · threads + thread`, coalesced) into word `(e + shift) % SPILL_WORDS` with [`mix`]; then
/// stores the fold of its words. `DYNAMIC` false: no shift, every index is known at compile
/// time and the words live in registers; true: the index depends on the run-time `shift`, so
/// the array lives in local memory (`ld.local`/`st.local`).
///
/// - `input`: `n` words, `n = SPILL_PASSES · SPILL_WORDS · threads`; `out`: one per thread.
///
/// # Launch
/// 1-D, blocks of [`BLOCK`] threads, `n / (BLOCK · SPILL_PASSES · SPILL_WORDS)` of them.
#[inline(always)]
unsafe fn words_array<const DYNAMIC: bool>(input: *const u32, shift: u32, out: *mut u32) {
    const W: u32 = SPILL_WORDS;
    let gtid = global_thread();
    let threads = grid_threads();
    let mut words = [0u32; W as usize];
    unroll!(32, j, 0, {
        words[j] = gtid as u32 ^ j as u32;
    });
    unroll!(64, e, 0, {
        let x = *input.add((e as u64 * threads + gtid) as usize);
        let j = if DYNAMIC {
            (e as u32 + shift) % W
        } else {
            e as u32 % W
        } as usize;
        words[j] = mix(words[j], x);
    });
    let mut h = 0;
    unroll!(32, j, 0, {
        h = mix(h, words[j]);
    });
    *out.add(gtid as usize) = h;
}

kernel! {
    /// The fault: the words indexed through the run-time `shift`.
    fn spills_fault(input: *const u32, shift: u32, out: *mut u32) {
        words_array::<true>(input, shift, out)
    }
}

kernel! {
    /// The fix: compile-time indices (what `spills_fault` computes at `shift` 0).
    fn spills_fixed(input: *const u32, out: *mut u32) {
        words_array::<false>(input, 0, out)
    }
}

// ---- 9. A genuinely memory-bound operation (the control, not a fault). ----

kernel! {
    /// One elementwise pass, `out[i] = a · input[i] + b` (one rounding), at the DRAM roof:
    /// thread `t` moves the 16-byte group `t`. The control pair launches it twice
    /// (`x → t → y`), against [`memory_bound_fused`]'s one pass.
    ///
    /// - `input`, `out`: device pointers, `4 · groups` f32 each, 16-byte aligned.
    ///
    /// # Launch
    /// 1-D, blocks of [`BLOCK`] threads, `ceil(groups / BLOCK)` of them.
    fn memory_bound_twopass(input: *const f32, out: *mut f32, groups: u64, a: f32, b: f32) {
        let i = global_thread();
        if i < groups {
            let (src, dst) = (input as *const Vec4<f32>, out as *mut Vec4<f32>);
            store4(dst.add(i as usize), fma4(load4(src.add(i as usize)), a, b));
        }
    }
}

kernel! {
    /// Both passes of [`memory_bound_twopass`] in one: `out[i] = a2 · (a1 · input[i] + b1) + b2`,
    /// rounded after each step exactly as the two passes round: half the bytes, the same
    /// results.
    ///
    /// # Launch
    /// As [`memory_bound_twopass`].
    fn memory_bound_fused(
        input: *const f32,
        out: *mut f32,
        groups: u64,
        a1: f32,
        b1: f32,
        a2: f32,
        b2: f32,
    ) {
        let i = global_thread();
        if i < groups {
            let (src, dst) = (input as *const Vec4<f32>, out as *mut Vec4<f32>);
            let t = fma4(load4(src.add(i as usize)), a1, b1);
            store4(dst.add(i as usize), fma4(t, a2, b2));
        }
    }
}

// ---- 10. Async copies without enough stages. ----

/// Words of one tile of the async pair: one 16-byte copy per thread.
const ASYNC_TILE_WORDS: u32 = ASYNC_THREADS * 4;

/// Block `b` sums tiles `b, b + grid, …` of `input` (`tiles` tiles of [`ASYNC_TILE_WORDS`]
/// words), each copied into shared memory by `cp.async` (16 bytes per thread), through a ring
/// of `STAGES` buffers: `STAGES − 1` tiles are in flight while one is read. Each thread reads
/// words `tid, tid + 1024, tid + 2048, tid + 3072` of every tile (other threads' copies) and
/// folds them into `acc = acc · 33 + v`; `out[thread]` gets `acc`. `PENDING` = `STAGES − 1`:
/// the groups a wait may leave in flight (with one stage, none: each copy is waited for right
/// after it is issued).
///
/// # Launch
/// 1-D, blocks of [`ASYNC_THREADS`] threads, dynamic shared memory at least
/// `STAGES · ASYNC_TILE_WORDS · 4` bytes, any grid; `input` 16-byte aligned.
#[inline(always)]
unsafe fn staged_sum<const STAGES: u32, const PENDING: u32>(
    input: *const u32,
    tiles: u32,
    out: *mut u32,
) {
    let tid = thread_idx_x();
    let (block, grid) = (block_idx_x(), grid_dim_x());
    let ring = dynamic_shared::<u32>();
    let mine = if block < tiles {
        (tiles - 1 - block) / grid + 1
    } else {
        0
    };
    let copy = |t: u32| {
        let tile = (block + t * grid) as u64 * ASYNC_TILE_WORDS as u64;
        let dst = ring.add(((t % STAGES) * ASYNC_TILE_WORDS + 4 * tid) as usize);
        cp_async_16(dst, input.add((tile + 4 * tid as u64) as usize));
    };
    let mut s = 0;
    while s + 1 < STAGES {
        if s < mine {
            copy(s);
        }
        cp_async_commit();
        s += 1;
    }
    let mut acc = tid;
    let mut t = 0;
    while t < mine {
        if t + STAGES - 1 < mine {
            copy(t + STAGES - 1);
        }
        cp_async_commit();
        cp_async_wait::<PENDING>();
        sync_threads();
        let buf = ring.add(((t % STAGES) * ASYNC_TILE_WORDS) as usize);
        let mut w = 0;
        while w < 4 {
            acc = acc
                .wrapping_mul(33)
                .wrapping_add(*buf.add((tid + w * ASYNC_THREADS) as usize));
            w += 1;
        }
        sync_threads();
        t += 1;
    }
    *out.add(global_thread() as usize) = acc;
}

kernel! {
    /// The fault: one stage (`cp.async.wait_group 0` after every copy).
    fn async_stages_fault(input: *const u32, tiles: u32, out: *mut u32) {
        staged_sum::<1, 0>(input, tiles, out)
    }
}

kernel! {
    /// The fix: [`ASYNC_STAGES`] stages (`cp.async.wait_group ASYNC_STAGES − 1`).
    fn async_stages_fixed(input: *const u32, tiles: u32, out: *mut u32) {
        staged_sum::<ASYNC_STAGES, { ASYNC_STAGES - 1 }>(input, tiles, out)
    }
}

// ---- 11. Instruction-mix drag: the SFU. ----

/// `θ = x · π / SFU_TERMS` for an input `x` in [-1, 1]: every `kθ`, k ≤ `SFU_TERMS`, lies in
/// [-π, π], where `sin.approx` is accurate.
const SFU_SCALE: f32 = core::f32::consts::PI / SFU_TERMS as f32;

kernel! {
    /// The fault: `out[i] = Σ_{k=1..SFU_TERMS} sin(k θ)`, θ from `input[i]` (see
    /// [`SFU_SCALE`]), each sine one `sin.approx.f32` (`MUFU.SIN` on the XU pipe, 16 lanes per
    /// SM per clock against the FMA pipe's 128).
    ///
    /// # Launch
    /// 1-D, blocks of [`BLOCK`] threads, `ceil(n / (BLOCK · PER_THREAD))` of them
    /// ([`per_thread`]), no shared memory.
    fn sfu_fault(input: *const f32, out: *mut f32, n: u64) {
        per_thread(n, out, |i| unsafe { *input.add(i as usize) }, |x| {
            let theta = x * SFU_SCALE;
            let mut y = 0.0;
            let mut k = 1;
            while k <= SFU_TERMS {
                y += sin_approx_f32(theta * k as f32);
                k += 1;
            }
            y
        })
    }
}

kernel! {
    /// The fix: the same sum with the sines from FMAs: `sin θ` and `cos θ` by their Taylor
    /// polynomials (|θ| ≤ π/32: errors below 1e-10), then `sin((k+1)θ) = 2 cos θ · sin kθ −
    /// sin((k−1)θ)`, one FMA and one add per term.
    ///
    /// # Launch
    /// As [`sfu_fault`].
    fn sfu_fixed(input: *const f32, out: *mut f32, n: u64) {
        per_thread(n, out, |i| unsafe { *input.add(i as usize) }, |x| {
            let theta = x * SFU_SCALE;
            let t2 = theta * theta;
            let sin1 = theta * fma_f32(t2, fma_f32(t2, 1.0 / 120.0, -1.0 / 6.0), 1.0);
            let cos1 = fma_f32(
                t2,
                fma_f32(t2, fma_f32(t2, -1.0 / 720.0, 1.0 / 24.0), -0.5),
                1.0,
            );
            let two_cos = 2.0 * cos1;
            let (mut prev, mut cur) = (0.0, sin1);
            let mut y = sin1;
            let mut k = 2;
            while k <= SFU_TERMS {
                let next = fma_f32(two_cos, cur, -prev);
                y += next;
                prev = cur;
                cur = next;
                k += 1;
            }
            y
        })
    }
}

// ---- 12. The L2-resident working set. ----

/// `reads` 16-byte loads in a grid-stride loop, load `r` from group `r & (2^WS_LOG2 − 1)` of
/// `input`: the same number of loads over a working set of `2^WS_LOG2` groups. Each thread
/// adds up the words it loads (wrapping) and stores the sum.
///
/// - `input`: `4 · 2^WS_LOG2` words, 16-byte aligned; `out`: one word per thread.
///
/// # Launch
/// 1-D, blocks of [`BLOCK`] threads, no shared memory, any grid (one wave).
#[inline(always)]
unsafe fn reread<const WS_LOG2: u32>(input: *const u32, reads: u64, out: *mut u32) {
    let groups = input as *const Vec4<u32>;
    let mask = (1u64 << WS_LOG2) - 1;
    let threads = grid_threads();
    let gtid = global_thread();
    let mut acc = 0u32;
    let mut r = gtid;
    while r < reads {
        let Vec4([a, b, c, d]) = load4(groups.add((r & mask) as usize));
        acc = acc.wrapping_add(a.wrapping_add(b).wrapping_add(c.wrapping_add(d)));
        r += threads;
    }
    *out.add(gtid as usize) = acc;
}

kernel! {
    /// The fault (of the measurement): a 16 MiB working set, which the L2 keeps.
    fn l2_resident_fault(input: *const u32, reads: u64, out: *mut u32) {
        reread::<L2_FITS_LOG2>(input, reads, out)
    }
}

kernel! {
    /// The fix: the same loads over 256 MiB, as a step whose other kernels evict the L2 sees.
    fn l2_resident_fixed(input: *const u32, reads: u64, out: *mut u32) {
        reread::<L2_EXCEEDS_LOG2>(input, reads, out)
    }
}

// ---- 13. Barrier-bound. ----

/// Elements per chunk of the barrier pair: [`PER_THREAD`] per thread of a block.
const CHUNK: u64 = (BLOCK * PER_THREAD) as u64;

/// The barrier pair's walk: block `b` takes chunks `b, b + grid, …` of [`CHUNK`] elements, warp
/// `w` of it the chunk's four segments `4w … 4w + 3` ([`SEGMENT`] elements each, lane `l`
/// loading element `l` of each: four coalesced loads in flight per thread, all issued before
/// the first sum). `sum(v)` gives the segment's sum in every lane; lane `l` stores segment
/// `l & 3`'s, so the warp writes its four sums as one 16-byte request and no branch splits it
/// (lanes `l`, `l + 4`, … store the same word).
#[inline(always)]
unsafe fn segment_walk<F: FnMut(i32) -> i32>(input: *const i32, n: u64, out: *mut i32, mut sum: F) {
    let tid = thread_idx_x();
    let (lane, warp) = (tid % 32, tid / 32);
    let chunks = n / CHUNK;
    let grid = grid_dim_x() as u64;
    let mut c = block_idx_x() as u64;
    while c < chunks {
        // The warp's first segment.
        let first = c * (CHUNK / SEGMENT as u64) + (warp * PER_THREAD) as u64;
        let mut v = [0i32; PER_THREAD as usize];
        unroll!(4, k, 0, {
            v[k] = *input.add(((first + k as u64) * SEGMENT as u64 + lane as u64) as usize);
        });
        let mut sums = [0i32; PER_THREAD as usize];
        unroll!(4, k, 0, {
            sums[k] = sum(v[k]);
        });
        // Two-way picks, which both compilers lower to selects (a four-way `match` became a
        // jump table on llvm: a divergent indirect branch per trip).
        let (odd, high) = (lane & 1 != 0, lane & 2 != 0);
        let low_pair = if odd { sums[1] } else { sums[0] };
        let high_pair = if odd { sums[3] } else { sums[2] };
        let mine = if high { high_pair } else { low_pair };
        *out.add((first + (lane & 3) as u64) as usize) = mine;
        c += grid;
    }
}

kernel! {
    /// The fault: sums of every [`SEGMENT`] consecutive elements (`out[s] = Σ
    /// input[32s..32s+32]`, wrapping), a segment's 32 elements meeting in a shared-memory
    /// butterfly, every lane busy at every level, with a block-wide barrier after each write
    /// and each read: ten barriers per 256 elements ([`segment_walk`]).
    ///
    /// - `input`: `n` i32, `n` a multiple of `BLOCK · PER_THREAD`; `out`: `n / 32` i32.
    ///
    /// # Launch
    /// 1-D, blocks of [`BLOCK`] threads, dynamic shared memory `BLOCK · 4` bytes, one wave.
    fn barrier_fault(input: *const i32, n: u64, out: *mut i32) {
        let s = Shared::<i32>::dynamic();
        let tid = thread_idx_x();
        segment_walk(input, n, out, |mut v| {
            let mut stride = 16;
            while stride > 0 {
                s.set(tid, v);
                sync_threads();
                v = v.wrapping_add(s.get(tid ^ stride));
                sync_threads();
                stride /= 2;
            }
            v
        })
    }
}

/// `v` summed over the warp (wrapping), in every lane: a butterfly of five `shfl.sync.bfly`.
///
/// # Safety
/// All 32 lanes of the warp must call it together.
#[inline(always)]
unsafe fn warp_all_sum(mut v: i32) -> i32 {
    let mut mask = 16;
    while mask > 0 {
        v = v.wrapping_add(shfl_xor(v as u32, mask) as i32);
        mask /= 2;
    }
    v
}

kernel! {
    /// The fix: the same sums by a butterfly of five warp shuffles ([`warp_all_sum`]), no
    /// shared memory, no barrier.
    ///
    /// # Launch
    /// As [`barrier_fault`], without shared memory.
    fn barrier_fixed(input: *const i32, n: u64, out: *mut i32) {
        segment_walk(input, n, out, |v| warp_all_sum(v))
    }
}
