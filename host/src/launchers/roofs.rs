//! The roof kernels (`gpu-kernels/src/roofs.rs`): same-address and spread atomics, shared
//! memory, empty blocks, scattered stores, the 32×32 tile order, the reductions' trees and
//! their load phase (both held to a chosen occupancy when asked). Their catalogue entries are
//! looked up by name: each is the one kernel of its role.

use super::{Elem, LaunchConfig, kernel};
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use catalog::kernels::Tree;
use catalog::launch::roofs::{LINE_WORDS, SPREAD_REDS_PER_WARP};
use catalog::launch::transpose::TILE;
use catalog::{Backend, Dtype, Kernel, roofs as roof};
use cust::launch;
use cust::memory::DeviceSlice;
use cust::stream::Stream;

/// Same-address atomics: every block adds 1 to one word (f32 or i32).
pub fn atomic_same() -> &'static Kernel {
    kernel(roof::ATOMIC_SAME)
}

/// Spread atomics: lane 0 of each warp adds 1.0 to word after word, each in another line.
pub fn atomic_spread() -> &'static Kernel {
    kernel(roof::ATOMIC_SPREAD)
}

/// Conflict-free shared-memory loads and stores.
pub fn shared_rw() -> &'static Kernel {
    kernel(roof::SHARED_RW)
}

/// Blocks that only mark that they ran.
pub fn empty_blocks() -> &'static Kernel {
    kernel(roof::EMPTY_BLOCKS)
}

/// The naive transpose's stores alone.
pub fn scatter_store() -> &'static Kernel {
    kernel(roof::SCATTER_STORE)
}

/// The 32×32 transposes' DRAM order without the transposition.
pub fn tile_copy() -> &'static Kernel {
    kernel(roof::TILE_COPY)
}

/// A reduction's block tree alone.
pub fn tree(t: Tree) -> &'static Kernel {
    kernel(t.roof())
}

/// The reductions' load phase alone.
pub fn load_wait() -> &'static Kernel {
    kernel(roof::LOAD_WAIT)
}

/// Every roof kernel, in catalogue order.
pub fn all() -> [&'static Kernel; 11] {
    [
        atomic_same(),
        atomic_spread(),
        shared_rw(),
        empty_blocks(),
        scatter_store(),
        tree(Tree::V1),
        tree(Tree::V2),
        tree(Tree::V3),
        tree(Tree::V5),
        load_wait(),
        tile_copy(),
    ]
}

/// `red`s one `atomic_spread_f32` block sends (the catalogue's elements per block): one per
/// warp per trip.
pub fn spread_reds_per_block() -> u64 {
    super::elements_per_block(atomic_spread())
}

/// Refuses a roof of no work (the catalogue's shapes would round it up to one block, but no
/// work has no rate).
fn check_work(what: &'static str, n: u64) -> Result<()> {
    if n == 0 {
        return Err(HostError::Invalid {
            what,
            detail: "at least one block is needed".into(),
        });
    }
    Ok(())
}

impl Lab {
    /// How `atomic_same_<T>` is launched for `blocks` blocks (the catalogue's shape: one
    /// block per `red`, the reductions' shape).
    pub fn atomic_same_config<T: Elem>(
        &self,
        backend: Backend,
        blocks: u64,
    ) -> Result<LaunchConfig> {
        check_work("atomic_same blocks", blocks)?;
        let k = atomic_same();
        self.linear_config(backend, k, &k.entry(T::DTYPE), blocks, 4)
    }

    /// Queues `blocks` blocks of `reds_per_block` trips (a barrier, then thread 0 adds 1 to
    /// `out[0]` with a `red` of `T`).
    pub fn launch_atomic_same<T: Elem>(
        &self,
        backend: Backend,
        out: &DeviceSlice<T>,
        blocks: u64,
        reds_per_block: u32,
        stream: &Stream,
    ) -> Result<()> {
        if out.is_empty() {
            return Err(HostError::Invalid {
                what: "atomic_same buffers",
                detail: "out must be non-empty".into(),
            });
        }
        let cfg = self.atomic_same_config::<T>(backend, blocks)?;
        let entry = atomic_same().entry(T::DTYPE);
        let f = self.function(backend, &entry)?;
        let o = out.as_device_ptr();
        let (grid, block) = super::dims(&cfg);
        // SAFETY: the kernel writes only out[0] (atomically), a live allocation of at least
        // one element; it uses no shared memory.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(o, reds_per_block)) }
            .ctx(|| format!("launching {entry} [{backend}] {blocks} blocks"))
    }

    /// How `atomic_spread_f32` is launched to send at least `reds` `red`s: the catalogue's
    /// whole blocks of [`spread_reds_per_block`] each.
    pub fn atomic_spread_config(&self, backend: Backend, reds: u64) -> Result<LaunchConfig> {
        check_work("atomic_spread reds", reds)?;
        let k = atomic_spread();
        let cfg = self.linear_config(backend, k, &k.entry(Dtype::F32), reds, 4)?;
        // The kernel numbers its reds `warp + trip · warps` in a u32.
        let warps = cfg.grid.0 as u64 * (cfg.block.0 / 32) as u64;
        if warps * SPREAD_REDS_PER_WARP as u64 > u32::MAX as u64 {
            return Err(HostError::TooLarge {
                what: "atomic_spread reds",
                value: reds,
                limit: u32::MAX as u64,
                why: "the kernel's u32 numbering of its reds",
            });
        }
        Ok(cfg)
    }

    /// Queues `atomic_spread_f32` with `cfg` (from [`Lab::atomic_spread_config`]) over `lines`
    /// 128-byte lines of `out`.
    pub fn launch_atomic_spread(
        &self,
        backend: Backend,
        cfg: &LaunchConfig,
        out: &DeviceSlice<f32>,
        lines: u32,
        stream: &Stream,
    ) -> Result<()> {
        if !lines.is_power_of_two() {
            return Err(HostError::Invalid {
                what: "atomic_spread lines",
                detail: format!("{lines} is not a power of two"),
            });
        }
        let words = lines as usize * LINE_WORDS as usize;
        if out.len() < words {
            return Err(HostError::Invalid {
                what: "atomic_spread buffers",
                detail: format!("out has {} words, {lines} lines need {words}", out.len()),
            });
        }
        let entry = atomic_spread().entry(Dtype::F32);
        let f = self.function(backend, &entry)?;
        let o = out.as_device_ptr();
        let (grid, block) = super::dims(cfg);
        // SAFETY: the kernel adds only into the first word of each of `lines` 128-byte lines,
        // out[0..lines · LINE_WORDS), checked above (lines a power of two, so the kernel's
        // mask keeps every index in range); it uses no shared memory.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(o, lines)) }
            .ctx(|| format!("launching {entry} [{backend}] {} blocks", cfg.grid.0))
    }

    /// How `shared_rw` is launched: the catalogue's full waves, its shared memory.
    pub fn shared_rw_config(&self, backend: Backend) -> Result<LaunchConfig> {
        let k = shared_rw();
        self.linear_config(backend, k, k.name, 0, 4)
    }

    /// Queues `shared_rw` with `trips` trips per thread; `out` gets one checksum per thread.
    pub fn launch_shared_rw(
        &self,
        backend: Backend,
        trips: u32,
        out: &DeviceSlice<u32>,
        stream: &Stream,
    ) -> Result<()> {
        let cfg = self.shared_rw_config(backend)?;
        let threads = cfg.grid.0 as usize * cfg.block.0 as usize;
        if out.len() < threads {
            return Err(HostError::Invalid {
                what: "shared_rw buffers",
                detail: format!(
                    "out has {} words, the grid has {threads} threads",
                    out.len()
                ),
            });
        }
        let f = self.function(backend, shared_rw().name)?;
        let o = out.as_device_ptr();
        let (grid, block) = super::dims(&cfg);
        // SAFETY: each thread writes out[its global index] (the buffer covers the grid,
        // checked) and uses only the launch's shared memory, the size its catalogue entry
        // gives.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(trips, o)) }
            .ctx(|| format!("launching shared_rw [{backend}] trips={trips}"))
    }

    /// How `empty_blocks` is launched over `blocks` blocks (the catalogue's shape: one block
    /// per mark).
    pub fn empty_blocks_config(&self, backend: Backend, blocks: u64) -> Result<LaunchConfig> {
        check_work("empty_blocks blocks", blocks)?;
        let k = empty_blocks();
        self.linear_config(backend, k, k.name, blocks, 4)
    }

    /// Queues one `empty_blocks` block per word of `marks`.
    pub fn launch_empty_blocks(
        &self,
        backend: Backend,
        marks: &DeviceSlice<u32>,
        stream: &Stream,
    ) -> Result<()> {
        let cfg = self.empty_blocks_config(backend, marks.len() as u64)?;
        let f = self.function(backend, empty_blocks().name)?;
        let m = marks.as_device_ptr();
        let (grid, block) = super::dims(&cfg);
        // SAFETY: block b writes marks[b], and there is one block per word of `marks`.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(m)) }
            .ctx(|| format!("launching empty_blocks [{backend}] {} blocks", marks.len()))
    }

    /// How `scatter_store` is launched for a `rows × cols` input: the naive transpose's tiles.
    pub fn scatter_store_config(&self, rows: u32, cols: u32) -> Result<LaunchConfig> {
        self.transpose_config(scatter_store(), rows, cols)
    }

    /// Queues the naive transpose's stores for a `rows × cols` input into `output`
    /// (`cols × rows`).
    pub fn launch_scatter_store(
        &self,
        backend: Backend,
        output: &DeviceSlice<u32>,
        rows: u32,
        cols: u32,
        stream: &Stream,
    ) -> Result<()> {
        let elems = rows as usize * cols as usize;
        if output.len() < elems {
            return Err(HostError::Invalid {
                what: "scatter_store output",
                detail: format!(
                    "{} elements, but {rows}×{cols} = {elems} needed",
                    output.len()
                ),
            });
        }
        if elems == 0 {
            return Ok(());
        }
        let cfg = self.scatter_store_config(rows, cols)?;
        let f = self.function(backend, scatter_store().name)?;
        let o = output.as_device_ptr();
        let (grid, block) = super::dims(&cfg);
        // SAFETY: the kernel writes output[0..rows·cols) (checked above); edge tiles are
        // guarded in the kernel; it uses no shared memory.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(o, rows, cols)) }
            .ctx(|| format!("launching scatter_store [{backend}] {rows}×{cols}"))
    }

    /// How a tree roof is launched over `blocks` blocks (one tree each, the reductions' block
    /// and shared memory), held to `resident` blocks per SM when asked (more shared memory,
    /// unused).
    pub fn tree_config<T: Elem>(
        &self,
        backend: Backend,
        t: Tree,
        blocks: u64,
        resident: Option<u32>,
    ) -> Result<LaunchConfig> {
        check_work("tree blocks", blocks)?;
        let k = tree(t);
        let entry = k.entry(T::DTYPE);
        let cfg = self.linear_config(backend, k, &entry, blocks, T::DTYPE.size() as u32)?;
        self.held_to(backend, k, &entry, cfg, resident)
    }

    /// `cfg` with its shared memory raised to hold `entry` to `resident` blocks per SM when
    /// asked.
    fn held_to(
        &self,
        backend: Backend,
        k: &Kernel,
        entry: &str,
        mut cfg: LaunchConfig,
        resident: Option<u32>,
    ) -> Result<LaunchConfig> {
        if let Some(r) = resident {
            cfg.shared_bytes = self.shared_for_resident(backend, k, entry, cfg.shared_bytes, r)?;
        }
        Ok(cfg)
    }

    /// Queues one block per word of `out`, each running tree `t` alone and storing its sum
    /// there, `resident` blocks per SM when asked.
    pub fn launch_tree<T: Elem>(
        &self,
        backend: Backend,
        t: Tree,
        out: &DeviceSlice<T>,
        resident: Option<u32>,
        stream: &Stream,
    ) -> Result<()> {
        let cfg = self.tree_config::<T>(backend, t, out.len() as u64, resident)?;
        let entry = tree(t).entry(T::DTYPE);
        let f = self.function(backend, &entry)?;
        let o = out.as_device_ptr();
        let (grid, block) = super::dims(&cfg);
        // SAFETY: block b writes out[b] (thread 0), and there is one block per element of
        // `out`; the shared memory is the launch's, at least the size its catalogue entry
        // gives.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(o)) }
            .ctx(|| format!("launching {entry} [{backend}] {} blocks", out.len()))
    }

    /// How `load_wait` is launched over `n` elements: the reductions' blocks and shared
    /// memory, held to `resident` blocks per SM.
    pub fn load_wait_config(
        &self,
        backend: Backend,
        n: u64,
        resident: u32,
    ) -> Result<LaunchConfig> {
        check_work("load_wait elements", n)?;
        let k = load_wait();
        let entry = k.entry(Dtype::I32);
        let cfg = self.linear_config(backend, k, &entry, n, 4)?;
        self.held_to(backend, k, &entry, cfg, Some(resident))
    }

    /// Queues the reductions' load phase over `input`, `resident` blocks per SM: each block
    /// loads its elements into shared memory (none when `with_load` is false: the same
    /// blocks, nothing read) and waits at a barrier; the thread whose neighbour's element is
    /// `key` stores that element's index to `found`.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_load_wait(
        &self,
        backend: Backend,
        input: &DeviceSlice<i32>,
        with_load: bool,
        key: i32,
        found: &DeviceSlice<u64>,
        resident: u32,
        stream: &Stream,
    ) -> Result<()> {
        if found.is_empty() || key == 0 {
            return Err(HostError::Invalid {
                what: "load_wait arguments",
                detail: "found must be non-empty and the key not 0 (what an unloaded word holds)"
                    .into(),
            });
        }
        let n = input.len() as u64;
        let cfg = self.load_wait_config(backend, n, resident)?;
        let entry = load_wait().entry(Dtype::I32);
        let f = self.function(backend, &entry)?;
        let (i, o) = (input.as_device_ptr(), found.as_device_ptr());
        let loaded = if with_load { n } else { 0 };
        let (grid, block) = super::dims(&cfg);
        // SAFETY: the grid covers `n` elements, one per thread; a thread reads input[i] only
        // for i < the `loaded` ≤ n it is passed (input holds n); thread writes go to found[0]
        // (non-empty) and to the block's shared memory, at least the catalogue's size.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(i, loaded, key, o)) }
            .ctx(|| format!("launching {entry} [{backend}] over {n} elements"))
    }

    /// How `tile_copy` is launched for a `rows × cols` input: the chapter's transposes' tiles.
    /// Refuses a side that is not a multiple of the tile: an edge tile has no row-for-row
    /// place in the output.
    pub fn tile_copy_config(&self, rows: u32, cols: u32) -> Result<LaunchConfig> {
        if rows == 0 || cols == 0 || !rows.is_multiple_of(TILE) || !cols.is_multiple_of(TILE) {
            return Err(HostError::Invalid {
                what: "tile_copy shape",
                detail: format!("{rows}×{cols}: both sides a positive multiple of {TILE}"),
            });
        }
        self.transpose_config(tile_copy(), rows, cols)
    }

    /// Queues the tile-order copy of a `rows × cols` `input` into `output` (`cols × rows`).
    pub fn launch_tile_copy(
        &self,
        backend: Backend,
        input: &DeviceSlice<u32>,
        output: &DeviceSlice<u32>,
        rows: u32,
        cols: u32,
        stream: &Stream,
    ) -> Result<()> {
        let cfg = self.tile_copy_config(rows, cols)?;
        let elems = rows as usize * cols as usize;
        if input.len() < elems || output.len() < elems {
            return Err(HostError::Invalid {
                what: "tile_copy buffers",
                detail: format!(
                    "input {} and output {} elements, but {rows}×{cols} = {elems} needed",
                    input.len(),
                    output.len()
                ),
            });
        }
        let f = self.function(backend, tile_copy().name)?;
        let (i, o) = (input.as_device_ptr(), output.as_device_ptr());
        let (grid, block) = super::dims(&cfg);
        // SAFETY: with both sides multiples of the tile (checked by the config), the kernel
        // reads input[0..rows·cols) and writes output[0..rows·cols), both that long (checked
        // above); it uses no shared memory.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(i, o, rows, cols)) }
            .ctx(|| format!("launching tile_copy [{backend}] {rows}×{cols}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_roof_is_a_catalogued_ceiling() {
        for k in all() {
            assert_eq!(k.family, catalog::Family::Ceiling, "{}", k.name);
            assert!(!k.carried_by(Backend::Nvcc), "{} has no C++ twin", k.name);
        }
        assert_eq!(spread_reds_per_block(), 8 * SPREAD_REDS_PER_WARP as u64);
        assert_eq!(shared_rw().shared_bytes(4), 3 * 256 * 4);
        assert!(check_work("b", 0).is_err() && check_work("b", 1).is_ok());
        // One block per red and per mark, as the kernels assume.
        assert_eq!(super::super::elements_per_block(atomic_same()), 1);
        assert_eq!(super::super::elements_per_block(empty_blocks()), 1);
    }
}
