//! The roofs of a block's own work: shared-memory wavefronts, empty blocks, the reductions'
//! trees alone.

use super::{compare, download};
use crate::cases::verify::Verdict;
use crate::cases::{Case, POISON_BITS, fill};
use crate::error::{Ctx, Result};
use crate::lab::Lab;
use crate::launchers::{Elem, LaunchConfig};
use catalog::Backend;
use catalog::kernels::Tree;
use catalog::launch::roofs::{BLOCK, SHARED_STEPS};
use cust::memory::DeviceBuffer;

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
