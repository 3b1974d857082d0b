//! The roofs of a block's own work: shared-memory wavefronts, empty blocks, the reductions'
//! trees alone and their load phase alone.

use super::{compare, download};
use crate::cases::verify::Verdict;
use crate::cases::{Case, POISON_BITS, fill};
use crate::error::{Ctx, Result};
use crate::lab::Lab;
use crate::launchers::{Elem, LaunchConfig};
use catalog::Backend;
use catalog::kernels::Tree;
use catalog::launch::roofs::{BLOCK, SHARED_STEPS};
use cust::memory::{CopyDestination, DeviceBuffer};

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

/// The sum a tree roof's block `block` stores: its threads' values
/// `(tid ^ (block & 255)) + block % 7` over 256 threads (the xor permutes 0..256).
pub fn tree_sum(block: u64) -> u64 {
    (0..BLOCK as u64).sum::<u64>() + BLOCK as u64 * (block % 7)
}

/// A reduction tree alone (`tree_v1_<T>` …): `blocks` blocks, each storing its sum, as many
/// resident per SM as fit or the number asked for.
pub struct TreeAlone<'a, T: Elem> {
    lab: &'a Lab,
    backend: Backend,
    tree: Tree,
    config: LaunchConfig,
    held: Option<u32>,
    /// One sum per block; poisoned before each launch (no block's sum has the poison's bits).
    out: DeviceBuffer<T>,
}

impl<'a, T: Elem> TreeAlone<'a, T> {
    pub fn new(
        lab: &'a Lab,
        backend: Backend,
        tree: Tree,
        blocks: u64,
        held: Option<u32>,
    ) -> Result<Self> {
        let config = lab.tree_config::<T>(backend, tree, blocks, held)?;
        Ok(TreeAlone {
            lab,
            backend,
            tree,
            config,
            held,
            out: DeviceBuffer::zeroed(blocks as usize)
                .ctx(|| format!("allocating {blocks} tree sums"))?,
        })
    }

    pub fn blocks(&self) -> u64 {
        self.out.len() as u64
    }

    /// Blocks resident per SM during the launch (the occupancy API, for its shared memory).
    pub fn resident(&self) -> Result<u32> {
        let k = crate::launchers::roofs::tree(self.tree);
        let entry = k.entry(T::DTYPE);
        let bytes = self.config.shared_bytes;
        self.lab.resident_per_sm(self.backend, k, &entry, bytes)
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
        lab.launch_tree(self.backend, self.tree, &self.out, self.held, &lab.stream)
    }
}

// ---------------------------------------------------------------------------------------------

/// The value every element of the load roof's input holds but one (never the key, never 0).
const LOAD_FILL: u32 = 0x5151_5151;
/// The value of that one element, which the blocks look for.
const LOAD_KEY: i32 = 0x2d2d_2d2d;
/// What `found` holds when no thread found the key (the reset's bits in both words).
const NOT_FOUND: u64 = u64::MAX;

/// `load_wait`: the reductions' load phase over `n` elements, `resident` blocks per SM, with
/// its load or without it (the same blocks, nothing read). The input holds [`LOAD_FILL`] but
/// for [`LOAD_KEY`] at one index, which the blocks must find when they load.
pub struct LoadWait<'a> {
    lab: &'a Lab,
    backend: Backend,
    config: LaunchConfig,
    resident: u32,
    with_load: bool,
    key_at: u64,
    input: DeviceBuffer<i32>,
    /// The index the key was found at; reset to [`NOT_FOUND`] before each launch.
    found: DeviceBuffer<u64>,
}

impl<'a> LoadWait<'a> {
    pub fn new(
        lab: &'a Lab,
        backend: Backend,
        n: u64,
        resident: u32,
        with_load: bool,
    ) -> Result<Self> {
        let config = lab.load_wait_config(backend, n, resident)?;
        let input = DeviceBuffer::<i32>::zeroed(n as usize)
            .ctx(|| format!("allocating {n} load_wait elements"))?;
        fill(lab, &*input, LOAD_FILL, "the load_wait input")?;
        // Past the middle, not on a block edge: a thread of some block, not the first.
        let key_at = n / 2 + n / 7 % 255 + 1;
        let key_at = key_at.min(n - 1);
        lab.stream
            .synchronize()
            .ctx(|| "filling the load_wait input".into())?;
        input
            .index(key_at as usize..key_at as usize + 1)
            .copy_from(&[LOAD_KEY][..])
            .ctx(|| "planting the load_wait key".into())?;
        Ok(LoadWait {
            lab,
            backend,
            config,
            resident,
            with_load,
            key_at,
            input,
            found: DeviceBuffer::zeroed(1).ctx(|| "allocating the load_wait index".into())?,
        })
    }

    /// The key's index when the blocks load, nothing found when they do not. The stream must
    /// be idle.
    pub fn verify(&self) -> Result<Verdict> {
        let got = download(&self.found, "the load_wait index")?[0];
        let want = if self.with_load {
            self.key_at
        } else {
            NOT_FOUND
        };
        let what = |i: u64| match i {
            NOT_FOUND => "nothing".to_string(),
            i => format!("index {i}"),
        };
        Ok(if got == want {
            Ok(format!(
                "found {} of {} elements",
                what(got),
                self.input.len()
            ))
        } else {
            Err(format!("load_wait found {}, not {}", what(got), what(want)))
        })
    }
}

impl Case for LoadWait<'_> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        fill(self.lab, &*self.found, POISON_BITS, "the load_wait index")
    }

    fn launch(&self) -> Result<()> {
        let lab = self.lab;
        lab.launch_load_wait(
            self.backend,
            &self.input,
            self.with_load,
            LOAD_KEY,
            &self.found,
            self.resident,
            &lab.stream,
        )
    }
}
