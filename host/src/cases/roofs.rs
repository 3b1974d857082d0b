//! The roofs (`gpu-kernels/src/roofs.rs`), each with an output that proves it did its work:
//! the same-address word ends at exactly its count of `red`s, every spread line at its own
//! count, every shared-memory thread at its checksum, every block's mark at its index, every
//! scattered element at the input index the naive transpose would have put there, every
//! tile-copied element at its source's index, the load phase at the one index its input holds
//! the key (or nothing, without its load). The outputs are reset before every launch, so
//! each check sees one launch.

mod atomics;
mod blocks;
mod matrices;

pub use atomics::{AtomicSame, AtomicSpread, spread_counts};
pub use blocks::{
    EmptyBlocks, LoadWait, SharedRw, TreeAlone, shared_rw_sums, shared_rw_value, tree_sum,
};
pub use matrices::{ScatterStore, TileCopy, scatter_value, tile_copy_source};

use super::verify::Verdict;
use crate::error::{Ctx, Result};
use cust::memory::{CopyDestination, DeviceSlice};
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

#[cfg(test)]
mod tests;
