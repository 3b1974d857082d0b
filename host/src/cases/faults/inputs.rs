//! One pair's inputs, made once for both twins and every backend: random, seeded, never zeros,
//! at the catalogue's size or the tests' (with edge cases where the kernel has them).

use crate::cpu::faults as reference;
use crate::error::Result;
use crate::lab::Lab;
use crate::launchers::faults::pair;
use catalog::kernels::Pair;
use catalog::launch::faults::{L2_EXCEEDS_LOG2, LINE_WORDS};
use cust::memory::DeviceBuffer;
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// How large a pair's problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// The catalogue's size (`Fault::size`): what `lab run` profiles and `lab bench` times.
    Profile,
    /// Small enough that every output element is checked, with edge cases (partial blocks,
    /// blocks without work) where the kernel has them: the GPU tests.
    Test,
}

/// One pair's problem: its host inputs (for the references) and their device copies.
pub struct Inputs {
    pub pair: Pair,
    pub scale: Scale,
    pub(super) data: Data,
}

/// Each pair's inputs and parameters.
pub(super) enum Data {
    Gemm {
        dims: (u32, u32, u32),
        a: Vec<f32>,
        b: Vec<f32>,
        a32: DeviceBuffer<f32>,
        b32: DeviceBuffer<f32>,
        a16: DeviceBuffer<u16>,
        b16: DeviceBuffer<u16>,
    },
    Strided {
        x: Vec<f32>,
        dev: DeviceBuffer<f32>,
        n: usize,
    },
    /// The occupancy pair's table of lines (and its mask), `threads`, `steps`.
    Lines {
        table: Vec<u32>,
        dev: DeviceBuffer<u32>,
        threads: usize,
        steps: u32,
    },
    Tiles {
        x: Vec<u32>,
        dev: DeviceBuffer<u32>,
        reps: u32,
    },
    /// The tail pair's chains: their start values' seed and the step's `b` (a small integer;
    /// `a` is [`UNIT_A`](super::UNIT_A)).
    Units {
        seed: u32,
        b: f32,
    },
    /// An f32 vector and the `a · x + b` steps (one for the undersized pair, two for the
    /// memory-bound control).
    Vector {
        x: Vec<f32>,
        dev: DeviceBuffer<f32>,
        steps: Vec<(f32, f32)>,
    },
    Seeds {
        seeds: Vec<u32>,
        dev: DeviceBuffer<u32>,
        steps: u32,
    },
    Words {
        x: Vec<u32>,
        dev: DeviceBuffer<u32>,
        shift: u32,
    },
    /// The async pair's tiles, and the L2 pair's working set (with its group sums).
    Stream {
        x: Vec<u32>,
        dev: DeviceBuffer<u32>,
        groups: Vec<u32>,
        reads: u64,
    },
    Ints {
        x: Vec<i32>,
        dev: DeviceBuffer<i32>,
    },
}

/// Floats uniform in [-1, 1] without 0.
fn nonzero_f32s(n: usize, seed: u64) -> Vec<f32> {
    let mut r = SmallRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let x = r.random_range(-1.0f32..=1.0);
            if x == 0.0 { 0.5 } else { x }
        })
        .collect()
}

/// Multiples of 1/64 in [-1, 1] without 0: exact in BF16, and every partial sum of
/// products of them is a multiple of 2^-12 well below 2^12 that f32 holds exactly.
fn sixty_fourths(n: usize, seed: u64) -> Vec<f32> {
    let mut r = SmallRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let k = r.random_range(1..=64) as f32 / 64.0;
            if r.random::<bool>() { k } else { -k }
        })
        .collect()
}

fn u32s(n: usize, seed: u64) -> Vec<u32> {
    let mut r = SmallRng::seed_from_u64(seed);
    (0..n).map(|_| r.random::<u32>() | 1).collect()
}

/// The occupancy pair's table: `lines` lines of [`LINE_WORDS`] random words, each word of line
/// `l` naming line `l + 1` (wrapping) in its low bits, so a warp's chase streams through
/// consecutive lines from wherever it starts.
fn line_table(lines: usize, seed: u64) -> Vec<u32> {
    let mut r = SmallRng::seed_from_u64(seed);
    let mask = lines as u32 - 1;
    let mut t = Vec::with_capacity(lines * LINE_WORDS as usize);
    for l in 0..lines as u32 {
        let next = l.wrapping_add(1) & mask;
        t.extend((0..LINE_WORDS).map(|_| next | (r.random::<u32>() & !mask)));
    }
    t
}

impl Inputs {
    /// `p`'s inputs at `scale`, from `seed`, uploaded.
    pub fn new(lab: &Lab, p: Pair, scale: Scale, seed: u64) -> Result<Inputs> {
        let full = scale == Scale::Profile;
        let size = pair(p).0.fault.map_or(0, |f| f.size);
        let pick = |profile: u64, test: u64| (if full { profile } else { test }) as usize;
        let seed = seed ^ (p as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let data = match p {
            Pair::TensorCores => {
                let e = size as u32;
                let dims = if full { (e, e, e) } else { (256, 384, 96) };
                let (m, n, k) = (dims.0 as usize, dims.1 as usize, dims.2 as usize);
                let a = sixty_fourths(m * k, seed);
                let b = sixty_fourths(n * k, seed ^ 1);
                let bf = |x: &[f32]| {
                    x.iter()
                        .map(|&v| reference::bf16_bits(v))
                        .collect::<Vec<_>>()
                };
                Data::Gemm {
                    dims,
                    a32: lab.upload(&a)?,
                    b32: lab.upload(&b)?,
                    a16: lab.upload(&bf(&a))?,
                    b16: lab.upload(&bf(&b))?,
                    a,
                    b,
                }
            }
            Pair::Coalescing => {
                let (len, n) = (pick(4 * size, 1 << 16), pick(size, 4096 + 96));
                let x = nonzero_f32s(len, seed);
                Data::Strided {
                    dev: lab.upload(&x)?,
                    x,
                    n,
                }
            }
            Pair::Occupancy => {
                let table = line_table(pick(1 << 18, 1 << 10), seed);
                Data::Lines {
                    dev: lab.upload(&table)?,
                    table,
                    threads: pick(size, 1 << 12),
                    steps: if full { 16 * 96 } else { 2 * 96 },
                }
            }
            Pair::BankConflicts => {
                let x = u32s(pick(size, 2 * 8192), seed);
                Data::Tiles {
                    dev: lab.upload(&x)?,
                    x,
                    reps: if full { 128 } else { 3 },
                }
            }
            Pair::Tail => {
                let mut r = SmallRng::seed_from_u64(seed);
                Data::Units {
                    seed: r.random(),
                    b: r.random_range(1..=8u8) as f32,
                }
            }
            Pair::UndersizedGrid | Pair::MemoryBound => {
                let x = nonzero_f32s(pick(size, 4 * 1000), seed);
                let mut r = SmallRng::seed_from_u64(seed ^ 2);
                let mut step = || (r.random_range(0.5f32..2.0), r.random_range(-1.0f32..1.0));
                let steps = if p == Pair::MemoryBound {
                    vec![step(), step()]
                } else {
                    vec![step()]
                };
                Data::Vector {
                    dev: lab.upload(&x)?,
                    x,
                    steps,
                }
            }
            Pair::Divergence => {
                let seeds = u32s(pick(size, 1 << 12), seed);
                Data::Seeds {
                    dev: lab.upload(&seeds)?,
                    seeds,
                    steps: if full { 8192 } else { 100 },
                }
            }
            Pair::Spills => {
                let x = u32s(pick(size, 1 << 18), seed);
                Data::Words {
                    dev: lab.upload(&x)?,
                    x,
                    shift: SmallRng::seed_from_u64(seed ^ 3).random_range(1..32),
                }
            }
            Pair::AsyncStages => {
                let x = u32s(pick(size, 16 * 4096), seed);
                Data::Stream {
                    dev: lab.upload(&x)?,
                    x,
                    groups: Vec::new(),
                    reads: 0,
                }
            }
            Pair::L2Resident => {
                // Both twins read the larger working set's buffer (the fault its first 16 MiB).
                let x = u32s(4 << L2_EXCEEDS_LOG2, seed);
                Data::Stream {
                    dev: lab.upload(&x)?,
                    groups: reference::group_sums(&x),
                    x,
                    reads: pick(size, 1 << 20) as u64,
                }
            }
            Pair::Sfu => {
                let x = nonzero_f32s(pick(size, 5000), seed);
                Data::Vector {
                    dev: lab.upload(&x)?,
                    x,
                    steps: Vec::new(),
                }
            }
            Pair::Barrier => {
                let mut r = SmallRng::seed_from_u64(seed);
                let n = pick(size, 3 * 256 * 200);
                let x: Vec<i32> = (0..n)
                    .map(|_| match r.random::<i32>() {
                        0 => 1,
                        v => v,
                    })
                    .collect();
                Data::Ints {
                    dev: lab.upload(&x)?,
                    x,
                }
            }
        };
        Ok(Inputs {
            pair: p,
            scale,
            data,
        })
    }

    /// Device bytes `p`'s inputs at [`Scale::Profile`] and the larger twin's outputs take
    /// (a few MiB of small outputs left out), for refusing a run before any work.
    pub fn bytes(p: Pair) -> u64 {
        let size = pair(p).0.fault.map_or(0, |f| f.size);
        match p {
            // A and B in f32 and BF16, C.
            Pair::TensorCores => (8 + 4 + 4) * size * size,
            // The input is 4 × the output.
            Pair::Coalescing => 16 * size + 4 * size,
            Pair::Occupancy => (4 * LINE_WORDS as u64) << 18,
            Pair::L2Resident => 16 << L2_EXCEEDS_LOG2,
            Pair::Tail => 4 << 20,
            // x, then t and y of the two passes.
            Pair::MemoryBound => 12 * size,
            Pair::UndersizedGrid | Pair::Sfu => 8 * size,
            _ => 4 * size + size / 8,
        }
    }

    /// The problem's size label for tables: `4096³`, `2^26`, …
    pub fn size_label(&self) -> String {
        let pow = |n: usize| catalog::cli::size::label(n as u64);
        match &self.data {
            Data::Gemm {
                dims: (m, n, k), ..
            } if m == n && n == k => format!("{m}³"),
            Data::Gemm {
                dims: (m, n, k), ..
            } => format!("{m}×{n}×{k}"),
            Data::Strided { n, .. } => pow(*n),
            Data::Lines { threads, .. } => format!("{} threads", pow(*threads)),
            Data::Tiles { x, .. } | Data::Words { x, .. } => pow(x.len()),
            Data::Units { .. } => "1.15 waves".into(),
            Data::Vector { x, .. } => pow(x.len()),
            Data::Seeds { seeds, .. } => format!("{} threads", pow(seeds.len())),
            Data::Stream { x, reads: 0, .. } => pow(x.len()),
            Data::Stream { reads, .. } => format!("{} loads", pow(*reads as usize)),
            Data::Ints { x, .. } => pow(x.len()),
        }
    }
}
