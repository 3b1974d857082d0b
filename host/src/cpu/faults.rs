//! CPU references of the fault catalogue's kernels (`gpu-kernels/src/faults.rs`), one per pair,
//! each computing what both twins of the pair must give (the spill pair's at its shift), for
//! one output element at a time so a check can take every element or a sample. Integer
//! kernels are matched exactly; the float ones state their bounds where they are checked
//! (`crate::cases::faults`).

use catalog::launch::faults::{
    ASYNC_THREADS, LINE_WORDS, SEGMENT, SFU_TERMS, SPILL_PASSES, SPILL_WORDS, TILE, UNIT_CHAINS,
    UNIT_STEPS,
};

/// The kernels' hash step: `(h ^ v) · 0x01000193`, wrapping.
pub fn mix(h: u32, v: u32) -> u32 {
    (h ^ v).wrapping_mul(0x0100_0193)
}

/// `count` indices spread evenly over `0..n` (all of them when `count ≥ n`), the last one
/// always included: the sample a check takes of an output too costly to reference whole.
pub fn sample(n: usize, count: usize) -> impl Iterator<Item = usize> {
    let step = n.div_ceil(count.max(1)).max(1);
    (0..n)
        .step_by(step)
        .chain((n > 0 && !(n - 1).is_multiple_of(step)).then(|| n - 1))
}

/// The BF16 bits of `x`, rounded to nearest even (exact for the GEMMs' inputs, which have at
/// most 8 significant bits).
pub fn bf16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let round = 0x7fff + ((b >> 16) & 1);
    (b.wrapping_add(round) >> 16) as u16
}

/// `C[i][j] = Σ_k A[i][k] · B[j][k]` in f64 (A `m × kd`, B `n × kd`, k contiguous), and
/// `Σ_k |A[i][k] · B[j][k]|`, the scale of the f32 accumulation's error.
pub fn gemm_element(a: &[f32], b: &[f32], kd: usize, i: usize, j: usize) -> (f64, f64) {
    let (ra, rb) = (&a[i * kd..(i + 1) * kd], &b[j * kd..(j + 1) * kd]);
    ra.iter().zip(rb).fold((0.0, 0.0), |(s, abs), (&x, &y)| {
        let p = x as f64 * y as f64;
        (s + p, abs + p.abs())
    })
}

/// The occupancy pair's warp `warp`, its 32 lanes' results: the warp's chase through
/// `table` (lines of [`LINE_WORDS`] words, `mask + 1` of them; every word of a line names the
/// same next line), `steps` steps, each lane folding its eight words of the line (its 16-byte
/// groups `lane` and `lane + 32`) into `live` accumulators in turn.
pub fn chase_live(table: &[u32], mask: u32, steps: u32, live: usize, warp: u64) -> Vec<u32> {
    let mut line = (warp as u32).wrapping_mul(0x9E37_79B1) & mask;
    let mut acc: Vec<Vec<u32>> = (0..32).map(|lane| vec![lane; live]).collect();
    for s in 0..steps as usize {
        let words = &table[(line * LINE_WORDS) as usize..][..LINE_WORDS as usize];
        for (lane, a) in acc.iter_mut().enumerate() {
            let mine = words[4 * lane..][..4]
                .iter()
                .chain(&words[128 + 4 * lane..][..4]);
            a[s % live] = mine.fold(a[s % live], |h, &w| mix(h, w));
        }
        line = words[0] & mask;
    }
    acc.iter()
        .map(|a| a.iter().fold(0, |h, &v| mix(h, v)))
        .collect()
}

/// The bank-conflict pair's thread `t`: lane `l` of warp `w` folds row `l` of the warp's
/// 32 × 32 tile of `input`, `reps` times, `acc = acc · 31 + v`, from `acc = l`. One pass is an
/// affine map `acc → acc · 31^32 + R` (R the pass from 0), applied `reps` times.
pub fn column_reads(input: &[u32], reps: u32, t: u64) -> u32 {
    let (lane, warp) = ((t % 32) as usize, (t / 32) as usize);
    let tile = TILE as usize;
    let row = &input[warp * tile * tile + lane * tile..][..tile];
    let pass = |acc: u32| {
        row.iter()
            .fold(acc, |a, &v| a.wrapping_mul(31).wrapping_add(v))
    };
    let r = pass(0);
    let scale = (0..TILE).fold(1u32, |s, _| s.wrapping_mul(31));
    (0..reps).fold(lane as u32, |acc, _| {
        acc.wrapping_mul(scale).wrapping_add(r)
    })
}

/// The tail pair's unit `u`, thread `t`, at `a = 1`: the sum of its [`UNIT_CHAINS`] chains,
/// each [`UNIT_STEPS`] steps of `x = x + b` from `(mix(seed ^ u, t) >> c) & 0xFFFF`. For an
/// integer `b` of at most 8 every value is an integer below 2^24, so every FMA is exact and
/// the chain ends at its start plus `UNIT_STEPS · b`.
pub fn fma_unit(seed: u32, b: f32, u: u32, t: u32) -> f32 {
    let h = mix(seed ^ u, t);
    (0..UNIT_CHAINS)
        .map(|c| ((h >> c) & 0xFFFF) as f32 + UNIT_STEPS as f32 * b)
        .fold(0.0, |sum, x| sum + x)
}

/// The divergence pair's paths (the kernels' `path_a`, `path_b`).
pub fn path_a(mut x: u32, steps: u32) -> u32 {
    for _ in 0..steps {
        x = (x ^ (x >> 16)).wrapping_mul(0x7feb_352d);
    }
    x
}

pub fn path_b(mut x: u32, steps: u32) -> u32 {
    for _ in 0..steps {
        x = (x ^ (x << 5)).wrapping_add(0x9e37_79b9).rotate_left(7);
    }
    x
}

/// The divergence pair's thread `t` (either twin: half the threads of every block take each
/// path, chosen by lane parity in one and warp parity in the other): `t`'s result under the
/// twin that picks by `pick` = `t % BLOCK` (lanes) or `t % BLOCK / 32` (warps).
pub fn two_paths(seed: u32, steps: u32, pick: u64) -> u32 {
    if pick.is_multiple_of(2) {
        path_a(seed, steps)
    } else {
        path_b(seed, steps)
    }
}

/// The spill pair's thread `t` of `threads`: 32 words from `t ^ j`, element `e` of 64
/// (input index `e · threads + t`) folded into word `(e + shift) % 32`.
pub fn words_array(input: &[u32], threads: u64, shift: u32, t: u64) -> u32 {
    let mut w: Vec<u32> = (0..SPILL_WORDS).map(|j| t as u32 ^ j).collect();
    for e in 0..SPILL_PASSES * SPILL_WORDS {
        let x = input[(e as u64 * threads + t) as usize];
        let j = ((e + shift) % SPILL_WORDS) as usize;
        w[j] = mix(w[j], x);
    }
    w.iter().fold(0, |h, &v| mix(h, v))
}

/// The async pair's block `b` (grid `grid`), its threads' results: tiles `b, b + grid, …` of
/// `input` (4096 words each), thread `t` folding words `t, t + 1024, t + 2048, t + 3072` of
/// each, `acc = acc · 33 + v` from `acc = t`.
pub fn staged_block(input: &[u32], grid: u32, b: u32) -> Vec<u32> {
    let threads = ASYNC_THREADS as usize;
    let words = 4 * threads;
    let tiles = input.len() / words;
    let mut acc: Vec<u32> = (0..threads as u32).collect();
    for tile in (b as usize..tiles).step_by(grid as usize) {
        for w in 0..4 {
            let part = &input[tile * words + w * threads..][..threads];
            for (a, &v) in acc.iter_mut().zip(part) {
                *a = a.wrapping_mul(33).wrapping_add(v);
            }
        }
    }
    acc
}

/// The SFU pair: `Σ_{k=1..SFU_TERMS} sin(k θ)`, θ = x · π / SFU_TERMS, in f64 (by
/// `sin(Kθ/2) · sin((K+1)θ/2) / sin(θ/2)`, a sum in closed form; 0 at θ = 0).
pub fn sines(x: f32) -> f64 {
    let k = SFU_TERMS as f64;
    let theta = (x * (std::f32::consts::PI / SFU_TERMS as f32)) as f64;
    if theta == 0.0 {
        return 0.0;
    }
    (k * theta / 2.0).sin() * ((k + 1.0) * theta / 2.0).sin() / (theta / 2.0).sin()
}

/// The L2 pair's results, one per thread of `threads`: the wrapping sum of the words of
/// groups `r & mask` for the loads `r = t, t + threads, …` below `reads`; `group_sums`
/// holds each group's wrapping sum of its four words.
pub fn reread(group_sums: &[u32], mask: u64, reads: u64, threads: u64) -> Vec<u32> {
    let mut acc = vec![0u32; threads as usize];
    for r in 0..reads {
        let a = &mut acc[(r % threads) as usize];
        *a = a.wrapping_add(group_sums[(r & mask) as usize]);
    }
    acc
}

/// The wrapping sums of each 16-byte group (four words) of `words`.
pub fn group_sums(words: &[u32]) -> Vec<u32> {
    let (groups, _) = words.as_chunks::<4>();
    groups
        .iter()
        .map(|g| g.iter().fold(0u32, |s, &w| s.wrapping_add(w)))
        .collect()
}

/// The barrier pair: each [`SEGMENT`] consecutive elements' wrapping sum.
pub fn segment_sums(x: &[i32]) -> Vec<i32> {
    x.chunks(SEGMENT as usize)
        .map(|s| s.iter().fold(0i32, |a, &v| a.wrapping_add(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_spans_the_output_and_ends_at_its_last_element() {
        let s: Vec<usize> = sample(10, 3).collect();
        assert_eq!(s, [0, 4, 8, 9]);
        assert_eq!(sample(5, 100).count(), 5);
        assert_eq!(sample(0, 4).count(), 0);
        assert_eq!(sample(9, 3).collect::<Vec<_>>(), [0, 3, 6, 8]);
    }

    #[test]
    fn bf16_keeps_eight_significant_bits() {
        for k in -64..=64 {
            let x = k as f32 / 64.0;
            assert_eq!(f32::from_bits((bf16_bits(x) as u32) << 16), x);
        }
        // 1 + 2^-8 rounds to even (1), 1 + 3·2^-8 up.
        assert_eq!(bf16_bits(1.0 + 1.0 / 256.0), bf16_bits(1.0));
        assert_eq!(
            f32::from_bits((bf16_bits(1.0 + 3.0 / 256.0) as u32) << 16),
            1.0 + 4.0 / 256.0
        );
    }

    /// The closed form of the column reads equals the loop it stands for.
    #[test]
    fn column_reads_match_the_kernels_loop() {
        let input: Vec<u32> = (0..2048u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        for t in [0u64, 5, 31, 32, 63] {
            let (lane, warp) = ((t % 32) as usize, (t / 32) as usize);
            let row = &input[warp * 1024 + lane * 32..][..32];
            let mut acc = lane as u32;
            for _ in 0..3 {
                for &v in row {
                    acc = acc.wrapping_mul(31).wrapping_add(v);
                }
            }
            assert_eq!(column_reads(&input, 3, t), acc, "thread {t}");
        }
    }

    /// The closed form of the sines equals the plain sum.
    #[test]
    fn sines_match_the_plain_sum() {
        for x in [-1.0f32, -0.3, 1e-3, 0.5, 1.0] {
            let theta = (x * (std::f32::consts::PI / SFU_TERMS as f32)) as f64;
            let plain: f64 = (1..=SFU_TERMS).map(|k| (k as f64 * theta).sin()).sum();
            assert!(
                (sines(x) - plain).abs() < 1e-12,
                "{x}: {} vs {plain}",
                sines(x)
            );
        }
        assert_eq!(sines(0.0), 0.0);
    }
}
