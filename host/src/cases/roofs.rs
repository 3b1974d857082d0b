//! The roofs (`gpu-kernels/src/roofs.rs`), each with an output that proves it did its work:
//! the same-address word ends at exactly its count of `red`s, every spread line at its own
//! count, every shared-memory thread at its checksum, every block's mark at its index, every
//! scattered element at the input index the naive transpose would have put there, every
//! tile-copied element at its source's index. The outputs are reset before every launch, so
//! each check sees one launch.

use super::verify::Verdict;
use super::{Case, POISON_BITS, fill};
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use crate::launchers::{Elem, LaunchConfig};
use catalog::Backend;
use catalog::kernels::Tree;
use catalog::launch::roofs::{BLOCK, LINE_WORDS, SHARED_STEPS, SPREAD_REDS_PER_WARP};
use catalog::launch::transpose::TILE;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};
use std::fmt::Display;

/// The most `red`s of 1.0 one f32 counts exactly: past 2^24, adding 1.0 no longer changes it.
pub const EXACT_COUNT_MAX: u64 = 1 << 24;

/// `exact (N words)`, or the first word that differs from `want(i)` and how many more do.
pub fn compare<T: Copy + PartialEq + Display>(
    got: &[T],
    want: impl Fn(usize) -> T,
    what: &str,
) -> Verdict {
    let mut bad = got
        .iter()
        .enumerate()
        .filter(|&(i, &g)| g != want(i))
        .map(|(i, &g)| (i, g));
    match bad.next() {
        None => Ok(format!("exact ({} words)", got.len())),
        Some((i, g)) => Err(format!(
            "{what}: word {i} is {g} but should be {} ({} more wrong)",
            want(i),
            bad.count()
        )),
    }
}

fn download<T: cust::memory::DeviceCopy + Default + Clone>(
    buf: &DeviceSlice<T>,
    what: &str,
) -> Result<Vec<T>> {
    let mut host = vec![T::default(); buf.len()];
    buf.copy_to(&mut host[..])
        .ctx(|| format!("reading {what}"))?;
    Ok(host)
}

// ---------------------------------------------------------------------------------------------

/// `atomic_same_<T>`: `blocks` blocks of `reds_per_block` trips into one word of `T`.
pub struct AtomicSame<'a, T: Elem> {
    lab: &'a Lab,
    backend: Backend,
    config: LaunchConfig,
    blocks: u64,
    reds_per_block: u32,
    /// The result word (a placement slot); zeroed before each launch.
    word: DeviceSlice<T>,
}

impl<'a, T: Elem> AtomicSame<'a, T> {
    /// Refuses more than [`EXACT_COUNT_MAX`] `red`s, for either type: past it an f32's sum
    /// would not be exact, and the two types' roofs count alike.
    pub fn new(
        lab: &'a Lab,
        backend: Backend,
        word: DeviceSlice<T>,
        blocks: u64,
        reds_per_block: u32,
    ) -> Result<Self> {
        let reds = blocks * reds_per_block as u64;
        if reds > EXACT_COUNT_MAX {
            return Err(HostError::TooLarge {
                what: "atomic_same reds",
                value: reds,
                limit: EXACT_COUNT_MAX,
                why: "the most 1.0s an f32 counts exactly",
            });
        }
        Ok(AtomicSame {
            lab,
            backend,
            config: lab.atomic_same_config::<T>(backend, blocks)?,
            blocks,
            reds_per_block,
            word,
        })
    }

    /// `red`s one launch sends.
    pub fn reds(&self) -> u64 {
        self.blocks * self.reds_per_block as u64
    }

    /// The word against the count of `red`s. The stream must be idle.
    pub fn verify(&self) -> Result<Verdict> {
        let got = download(&self.word, "the atomic word")?[0].to_f64();
        // Exact in either type: at most 2^24 reds.
        let want = self.reds() as f64;
        Ok(if got == want {
            Ok(format!("word = {want} exactly"))
        } else {
            Err(format!(
                "the {} word is {got} after {} reds of 1",
                T::NAME,
                self.reds()
            ))
        })
    }
}

impl<T: Elem> Case for AtomicSame<'_, T> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        fill(self.lab, &self.word, 0, "the atomic word")
    }

    fn launch(&self) -> Result<()> {
        let lab = self.lab;
        lab.launch_atomic_same(
            self.backend,
            &self.word,
            self.blocks,
            self.reds_per_block,
            &lab.stream,
        )
    }
}

// ---------------------------------------------------------------------------------------------

/// How many of `warps` × [`SPREAD_REDS_PER_WARP`] `red`s `atomic_spread_f32` sends to each of
/// `lines` lines: its `red`s are numbered `warp + trip · warps`, 0 to warps · trips − 1, and
/// go to line number mod `lines`.
pub fn spread_counts(warps: u64, lines: u32) -> Vec<u64> {
    let total = warps * SPREAD_REDS_PER_WARP as u64;
    let lines = lines as u64;
    (0..lines)
        .map(|l| total / lines + u64::from(l < total % lines))
        .collect()
}

/// `atomic_spread_f32`: at least `reds` `red`s over `lines` 128-byte lines.
pub struct AtomicSpread<'a> {
    lab: &'a Lab,
    backend: Backend,
    config: LaunchConfig,
    lines: u32,
    /// `lines` × `LINE_WORDS` words; zeroed before each launch.
    out: DeviceBuffer<f32>,
}

impl<'a> AtomicSpread<'a> {
    /// Refuses a line count that is not a power of two, and more `red`s per line than an f32
    /// counts exactly.
    pub fn new(lab: &'a Lab, backend: Backend, reds: u64, lines: u32) -> Result<Self> {
        let config = lab.atomic_spread_config(backend, reds)?;
        if !lines.is_power_of_two() {
            return Err(HostError::Invalid {
                what: "atomic_spread lines",
                detail: format!("{lines} is not a power of two"),
            });
        }
        let spread = AtomicSpread {
            lab,
            backend,
            config,
            lines,
            out: DeviceBuffer::zeroed(lines as usize * LINE_WORDS as usize)
                .ctx(|| format!("allocating {lines} lines for atomic_spread"))?,
        };
        if spread.reds().div_ceil(lines as u64) > EXACT_COUNT_MAX {
            return Err(HostError::TooLarge {
                what: "atomic_spread reds per line",
                value: spread.reds().div_ceil(lines as u64),
                limit: EXACT_COUNT_MAX,
                why: "the most 1.0s an f32 counts exactly",
            });
        }
        Ok(spread)
    }

    fn warps(&self) -> u64 {
        self.config.grid.0 as u64 * (self.config.block.0 / 32) as u64
    }

    /// `red`s one launch sends (whole blocks: at least what was asked for).
    pub fn reds(&self) -> u64 {
        self.warps() * SPREAD_REDS_PER_WARP as u64
    }

    pub fn lines(&self) -> u32 {
        self.lines
    }

    /// Every line's first word against its count, every other word against 0. The stream
    /// must be idle.
    pub fn verify(&self) -> Result<Verdict> {
        let got = download(&self.out, "the spread lines")?;
        let counts = spread_counts(self.warps(), self.lines);
        let lw = LINE_WORDS as usize;
        let want = |i: usize| {
            if i.is_multiple_of(lw) {
                counts[i / lw] as f32
            } else {
                0.0
            }
        };
        Ok(compare(&got, want, "spread atomics")
            .map(|_| format!("{} lines, each at its count", self.lines)))
    }
}

impl Case for AtomicSpread<'_> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        fill(self.lab, &*self.out, 0, "the spread lines")
    }

    fn launch(&self) -> Result<()> {
        let lab = self.lab;
        lab.launch_atomic_spread(
            self.backend,
            &self.config,
            &self.out,
            self.lines,
            &lab.stream,
        )
    }
}

// ---------------------------------------------------------------------------------------------

/// The word thread `thread` of block `block` writes (twice) before `shared_rw`'s loop.
pub fn shared_rw_value(block: u32, thread: u32) -> u32 {
    block
        .wrapping_mul(BLOCK)
        .wrapping_add(thread)
        .wrapping_mul(0x9E37_79B9)
}

/// Every thread's checksum after a `shared_rw` launch of `blocks` blocks and `trips` trips:
/// `trips` × the (wrapping) sum of its warp's 32 values.
pub fn shared_rw_sums(blocks: u32, trips: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(blocks as usize * BLOCK as usize);
    for b in 0..blocks {
        for t in 0..BLOCK {
            let row = t - t % 32;
            let warp_sum = (row..row + 32).fold(0u32, |s, k| s.wrapping_add(shared_rw_value(b, k)));
            out.push(warp_sum.wrapping_mul(trips));
        }
    }
    out
}

/// `shared_rw`: the catalogue's waves of blocks, `trips` trips per thread.
pub struct SharedRw<'a> {
    lab: &'a Lab,
    backend: Backend,
    config: LaunchConfig,
    trips: u32,
    /// One checksum per thread; poisoned before each launch.
    out: DeviceBuffer<u32>,
}

impl<'a> SharedRw<'a> {
    pub fn new(lab: &'a Lab, backend: Backend, trips: u32) -> Result<Self> {
        let config = lab.shared_rw_config(backend)?;
        let threads = config.grid.0 as usize * config.block.0 as usize;
        Ok(SharedRw {
            lab,
            backend,
            config,
            trips,
            out: DeviceBuffer::zeroed(threads).ctx(|| "allocating shared_rw sums".into())?,
        })
    }

    /// Shared-memory wavefronts one launch makes: per warp and step, one load and one store,
    /// each one wavefront (conflict-free).
    pub fn wavefronts(&self) -> u64 {
        let warps = self.config.grid.0 as u64 * (self.config.block.0 / 32) as u64;
        warps * self.trips as u64 * SHARED_STEPS as u64 * 2
    }

    /// Every thread's sum against [`shared_rw_sums`]. The stream must be idle.
    pub fn verify(&self) -> Result<Verdict> {
        let got = download(&self.out, "the shared_rw sums")?;
        let want = shared_rw_sums(self.config.grid.0, self.trips);
        Ok(compare(&got, |i| want[i], "shared_rw checksums")
            .map(|_| format!("{} thread checksums exact", got.len())))
    }
}

impl Case for SharedRw<'_> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        fill(self.lab, &*self.out, POISON_BITS, "the shared_rw sums")
    }

    fn launch(&self) -> Result<()> {
        let lab = self.lab;
        lab.launch_shared_rw(self.backend, self.trips, &self.out, &lab.stream)
    }
}

// ---------------------------------------------------------------------------------------------

/// `empty_blocks`: `blocks` blocks, each marking its index.
pub struct EmptyBlocks<'a> {
    lab: &'a Lab,
    backend: Backend,
    config: LaunchConfig,
    /// One word per block; poisoned (never a block index) before each launch.
    marks: DeviceBuffer<u32>,
}

impl<'a> EmptyBlocks<'a> {
    pub fn new(lab: &'a Lab, backend: Backend, blocks: u64) -> Result<Self> {
        let config = lab.empty_blocks_config(backend, blocks)?;
        Ok(EmptyBlocks {
            lab,
            backend,
            config,
            marks: DeviceBuffer::zeroed(blocks as usize)
                .ctx(|| format!("allocating {blocks} block marks"))?,
        })
    }

    pub fn blocks(&self) -> u64 {
        self.marks.len() as u64
    }

    /// Every block's mark against its index. The stream must be idle.
    pub fn verify(&self) -> Result<Verdict> {
        let got = download(&self.marks, "the block marks")?;
        Ok(compare(&got, |i| i as u32, "block marks")
            .map(|_| format!("all {} blocks ran", got.len())))
    }
}

impl Case for EmptyBlocks<'_> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        fill(self.lab, &*self.marks, POISON_BITS, "the block marks")
    }

    fn launch(&self) -> Result<()> {
        let lab = self.lab;
        lab.launch_empty_blocks(self.backend, &self.marks, &lab.stream)
    }
}

// ---------------------------------------------------------------------------------------------

/// What `scatter_store` leaves at output word `i` for a `rows × cols` input: the index of the
/// input element the naive transpose puts there (`output[x][y]` ← `input[y][x]`).
pub fn scatter_value(i: usize, rows: u32, cols: u32) -> u32 {
    let (x, y) = (i as u64 / rows as u64, i as u64 % rows as u64);
    (y * cols as u64 + x) as u32
}

/// `scatter_store` for a `rows × cols` input.
pub struct ScatterStore<'a> {
    lab: &'a Lab,
    backend: Backend,
    config: LaunchConfig,
    rows: u32,
    cols: u32,
    /// `rows × cols` words; poisoned before each launch (no input index equals the poison:
    /// at most u32::MAX elements, so every index is below it).
    output: DeviceBuffer<u32>,
}

impl<'a> ScatterStore<'a> {
    pub fn new(lab: &'a Lab, backend: Backend, rows: u32, cols: u32) -> Result<Self> {
        let elems = rows as u64 * cols as u64;
        if elems == 0 || elems > u32::MAX as u64 {
            return Err(HostError::Invalid {
                what: "scatter_store shape",
                detail: format!(
                    "{rows}×{cols}: between 1 and {} elements, so every input index fits in \
                     32 bits below the poison",
                    u32::MAX
                ),
            });
        }
        Ok(ScatterStore {
            lab,
            backend,
            config: lab.scatter_store_config(rows, cols)?,
            rows,
            cols,
            output: DeviceBuffer::zeroed(elems as usize)
                .ctx(|| format!("allocating the {rows}×{cols} scatter output"))?,
        })
    }

    /// 32-byte sectors written, one per element (each warp-wide store touches 32 rows).
    pub fn sectors(&self) -> u64 {
        self.rows as u64 * self.cols as u64
    }

    /// Every element against [`scatter_value`]. The stream must be idle.
    pub fn verify(&self) -> Result<Verdict> {
        let got = download(&self.output, "the scatter output")?;
        let (rows, cols) = (self.rows, self.cols);
        Ok(
            compare(&got, |i| scatter_value(i, rows, cols), "scattered stores")
                .map(|_| format!("all {} elements where the transpose puts them", got.len())),
        )
    }
}

impl Case for ScatterStore<'_> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        fill(self.lab, &*self.output, POISON_BITS, "the scatter output")
    }

    fn launch(&self) -> Result<()> {
        let lab = self.lab;
        lab.launch_scatter_store(
            self.backend,
            &self.output,
            self.rows,
            self.cols,
            &lab.stream,
        )
    }
}

// ---------------------------------------------------------------------------------------------

/// The sum a tree roof's block `block` stores: its threads' values
/// `(tid ^ (block & 255)) + block % 7` over 256 threads (the xor permutes 0..256).
pub fn tree_sum(block: u64) -> u64 {
    (0..BLOCK as u64).sum::<u64>() + BLOCK as u64 * (block % 7)
}

/// A reduction tree alone (`tree_v1_<T>` …): `blocks` blocks, each storing its sum.
pub struct TreeAlone<'a, T: Elem> {
    lab: &'a Lab,
    backend: Backend,
    tree: Tree,
    config: LaunchConfig,
    /// One sum per block; poisoned before each launch (no block's sum has the poison's bits).
    out: DeviceBuffer<T>,
}

impl<'a, T: Elem> TreeAlone<'a, T> {
    pub fn new(lab: &'a Lab, backend: Backend, tree: Tree, blocks: u64) -> Result<Self> {
        let config = lab.tree_config::<T>(backend, tree, blocks)?;
        Ok(TreeAlone {
            lab,
            backend,
            tree,
            config,
            out: DeviceBuffer::zeroed(blocks as usize)
                .ctx(|| format!("allocating {blocks} tree sums"))?,
        })
    }

    pub fn blocks(&self) -> u64 {
        self.out.len() as u64
    }

    /// Every block's sum against [`tree_sum`], exact in either type. The stream must be idle.
    pub fn verify(&self) -> Result<Verdict> {
        let got: Vec<f64> = download(&self.out, "the tree sums")?
            .into_iter()
            .map(Elem::to_f64)
            .collect();
        Ok(compare(&got, |i| tree_sum(i as u64) as f64, "tree sums")
            .map(|_| format!("{} block sums exact", got.len())))
    }
}

impl<T: Elem> Case for TreeAlone<'_, T> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        fill(self.lab, &*self.out, POISON_BITS, "the tree sums")
    }

    fn launch(&self) -> Result<()> {
        let lab = self.lab;
        lab.launch_tree(self.backend, self.tree, &self.out, &lab.stream)
    }
}

// ---------------------------------------------------------------------------------------------

/// The input index `tile_copy` leaves at output word `i` for a `rows × cols` input (both
/// multiples of the tile): output tile (tile row `a`, tile column `b`) holds input tile
/// (`b`, `a`) row for row, in an output `rows` words wide.
pub fn tile_copy_source(i: usize, rows: u32, cols: u32) -> u32 {
    let (t, rows, cols) = (TILE as u64, rows as u64, cols as u64);
    let (r, c) = (i as u64 / rows, i as u64 % rows);
    let (a, b) = (r / t, c / t);
    let (in_row, in_col) = (b * t + r % t, a * t + c % t);
    debug_assert!(in_row < rows && in_col < cols);
    (in_row * cols + in_col) as u32
}

/// `tile_copy` of a `rows × cols` matrix of u32 whose every word holds its own index.
pub struct TileCopy<'a> {
    lab: &'a Lab,
    backend: Backend,
    config: LaunchConfig,
    rows: u32,
    cols: u32,
    input: DeviceBuffer<u32>,
    /// `rows × cols` words; poisoned before each launch (no index equals the poison: at most
    /// u32::MAX elements).
    output: DeviceBuffer<u32>,
}

impl<'a> TileCopy<'a> {
    pub fn new(lab: &'a Lab, backend: Backend, rows: u32, cols: u32) -> Result<Self> {
        let config = lab.tile_copy_config(rows, cols)?;
        let elems = rows as u64 * cols as u64;
        if elems > u32::MAX as u64 {
            return Err(HostError::TooLarge {
                what: "tile_copy elements",
                value: elems,
                limit: u32::MAX as u64,
                why: "every index fits in 32 bits below the poison",
            });
        }
        let indices: Vec<u32> = (0..elems as u32).collect();
        Ok(TileCopy {
            lab,
            backend,
            config,
            rows,
            cols,
            input: lab.upload(&indices)?,
            output: DeviceBuffer::zeroed(elems as usize)
                .ctx(|| format!("allocating the {rows}×{cols} tile-copy output"))?,
        })
    }

    /// Bytes read plus written.
    pub fn moved_bytes(&self) -> u64 {
        8 * self.rows as u64 * self.cols as u64
    }

    /// Every element against [`tile_copy_source`]. The stream must be idle.
    pub fn verify(&self) -> Result<Verdict> {
        let got = download(&self.output, "the tile-copy output")?;
        let (rows, cols) = (self.rows, self.cols);
        Ok(
            compare(&got, |i| tile_copy_source(i, rows, cols), "tile copy")
                .map(|_| format!("all {} elements from their tiles' sources", got.len())),
        )
    }
}

impl Case for TileCopy<'_> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        fill(self.lab, &*self.output, POISON_BITS, "the tile-copy output")
    }

    fn launch(&self) -> Result<()> {
        let lab = self.lab;
        lab.launch_tile_copy(
            self.backend,
            &self.input,
            &self.output,
            self.rows,
            self.cols,
            &lab.stream,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_names_the_first_wrong_word_and_counts_the_rest() {
        assert_eq!(
            compare(&[0u32, 1, 2], |i| i as u32, "x"),
            Ok("exact (3 words)".into())
        );
        let e = compare(&[0u32, 9, 2, 7], |i| i as u32, "marks").unwrap_err();
        assert_eq!(e, "marks: word 1 is 9 but should be 1 (1 more wrong)");
    }

    /// The kernel's loop, run on the CPU: the doubled rows, the load at `2r + l + step`, the
    /// wrapping sum.
    fn shared_rw_on_cpu(blocks: u32, trips: u32) -> Vec<u32> {
        let mut out = Vec::new();
        for b in 0..blocks {
            let mut a = vec![0u32; 2 * BLOCK as usize];
            for t in 0..BLOCK {
                let (lane, row) = (t % 32, t - t % 32);
                a[(2 * row + lane) as usize] = shared_rw_value(b, t);
                a[(2 * row + 32 + lane) as usize] = shared_rw_value(b, t);
            }
            for t in 0..BLOCK {
                let (lane, row) = (t % 32, t - t % 32);
                let mut sum = 0u32;
                for _ in 0..trips {
                    for step in 0..SHARED_STEPS {
                        sum = sum.wrapping_add(a[(2 * row + lane + step) as usize]);
                    }
                }
                out.push(sum);
            }
        }
        out
    }

    #[test]
    fn shared_rw_sums_are_what_the_kernel_computes() {
        assert_eq!(shared_rw_sums(3, 5), shared_rw_on_cpu(3, 5));
        // A launch that skipped a trip would not pass.
        assert_ne!(shared_rw_sums(3, 5), shared_rw_on_cpu(3, 4));
        // Each thread of a warp reads the same 32 words, so the warp's sums agree.
        let s = shared_rw_sums(1, 7);
        assert!(s[..32].iter().all(|&x| x == s[0]) && s[0] != s[32]);
    }

    /// The kernel's numbering of its `red`s, counted one by one.
    #[test]
    fn spread_counts_are_the_kernels_numbering() {
        for (warps, lines) in [(8u64, 4u32), (16, 4096), (24, 64), (3, 1)] {
            let mut want = vec![0u64; lines as usize];
            for trip in 0..SPREAD_REDS_PER_WARP as u64 {
                for w in 0..warps {
                    want[((w + trip * warps) & (lines as u64 - 1)) as usize] += 1;
                }
            }
            assert_eq!(
                spread_counts(warps, lines),
                want,
                "{warps} warps, {lines} lines"
            );
            assert_eq!(
                want.iter().sum::<u64>(),
                warps * SPREAD_REDS_PER_WARP as u64
            );
        }
    }

    #[test]
    fn tree_sums_are_the_blocks_values_summed() {
        for block in [0u64, 1, 6, 7, 255, 256, 1 << 20] {
            let direct: u64 = (0..BLOCK as u64)
                .map(|t| (t ^ (block & 255)) + block % 7)
                .sum();
            assert_eq!(tree_sum(block), direct, "block {block}");
        }
        // Exact in an f32: well under 2^24.
        assert!(tree_sum(6) < 1 << 24);
    }

    #[test]
    fn tile_copy_sources_move_whole_tiles_to_the_transposed_place() {
        // A 64×96 input: 2×3 tiles; the output, 96 rows of 64, is 3×2 tiles.
        let (rows, cols) = (64u32, 96u32);
        let n = (rows * cols) as usize;
        let src: Vec<u32> = (0..n).map(|i| tile_copy_source(i, rows, cols)).collect();
        // A permutation of the input's indices.
        let mut sorted = src.clone();
        sorted.sort_unstable();
        assert!(sorted.iter().enumerate().all(|(i, &v)| v == i as u32));
        // Output row 32 + 5 (tile row 1), column 7 (tile column 0): input tile (0, 1), row 5,
        // column 7 of that tile: input (5, 32 + 7).
        let at = (32 + 5) * rows as usize + 7;
        assert_eq!(src[at], 5 * cols + 32 + 7);
        // The first output row is the first input row's first tile, then its second tile row's.
        assert_eq!(&src[..2], &[0, 1]);
        assert_eq!(src[32], 32 * cols);
    }

    #[test]
    fn scatter_values_are_the_transposes_sources() {
        // A 2×3 input: output (3×2) row x holds input column x.
        let got: Vec<u32> = (0..6).map(|i| scatter_value(i, 2, 3)).collect();
        assert_eq!(got, [0, 3, 1, 4, 2, 5]);
        let input: Vec<f32> = (0..6).map(|i| i as f32).collect();
        let t = crate::cpu::transpose(&input, 2, 3);
        assert_eq!(got, t.iter().map(|&v| v as u32).collect::<Vec<_>>());
    }
}
