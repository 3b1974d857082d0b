//! The fault catalogue (`gpu-kernels/src/faults.rs`): one launcher per pair, which launches
//! either kernel of the pair (the catalogue's [`Fault`] record says which it is) after
//! checking what both assume: buffer lengths, divisibility, alignment, and that the kernel is
//! of the pair. Shapes, blocks and shared memory come from the kernels' catalogue entries.
//! Here: the pairs' lookups, the checks and the launch shape they share; the launchers in
//! `memory` (how data moves), `execution` (how the SMs run) and `gemm`.

use super::{Elem, LaunchConfig};
use crate::error::{HostError, Result};
use crate::lab::Lab;
use catalog::kernels::{Fault, Pair};
use catalog::launch::faults::BLOCK;
use catalog::{Backend, Family, Kernel};
use cust::memory::{DeviceCopy, DeviceSlice};

mod execution;
mod gemm;
mod memory;

pub use gemm::GemmInput;

/// The pairs whose blocks the launch holds to one per SM (by the shared memory it reserves):
/// the async copies, one block's ring per SM, and the tail, whose blocks each fill an SM's FMA
/// pipe alone, so that a wave is one block per SM and a block's time the same wherever it runs.
const ONE_BLOCK_PER_SM: [Pair; 2] = [Pair::AsyncStages, Pair::Tail];

/// The fault catalogue's kernels, in catalogue order (each fault, then its fixed twin).
pub fn faults() -> impl Iterator<Item = &'static Kernel> {
    catalog::KERNELS
        .iter()
        .filter(|k| k.family == Family::Faults)
}

/// The pair's two kernels: the one with the fault, then the fixed twin.
pub fn pair(p: Pair) -> (&'static Kernel, &'static Kernel) {
    let of = |fixed: bool| {
        faults()
            .find(|k| k.fault.is_some_and(|f| f.pair == p && f.fixed == fixed))
            .expect("the catalogue has both kernels of every pair")
    };
    (of(false), of(true))
}

/// `kernel`'s fault record, when it is a kernel of pair `p`.
pub fn fault_of(kernel: &Kernel, p: Pair) -> Result<Fault> {
    match kernel.fault {
        Some(f) if f.pair == p => Ok(f),
        _ => Err(HostError::Invalid {
            what: "fault kernel",
            detail: format!("{} is not a kernel of the {p:?} pair", kernel.name),
        }),
    }
}

/// Refuses a buffer whose length is not `want` (`what` names it in the error).
fn check_len(what: &'static str, len: usize, want: u64) -> Result<()> {
    if len as u64 == want {
        return Ok(());
    }
    Err(HostError::Invalid {
        what,
        detail: format!("{len} elements, but the launch needs {want}"),
    })
}

/// Refuses a buffer not 16-byte aligned.
fn check_aligned<T: DeviceCopy>(what: &'static str, buf: &DeviceSlice<T>) -> Result<()> {
    if buf.as_device_ptr().as_raw().is_multiple_of(16) {
        return Ok(());
    }
    Err(HostError::Invalid {
        what,
        detail: "must be 16-byte aligned".into(),
    })
}

/// Refuses `what` = `value` unless `ok`, saying what it must be.
fn require(ok: bool, what: &'static str, value: u64, must: &str) -> Result<()> {
    if ok {
        return Ok(());
    }
    Err(HostError::Invalid {
        what,
        detail: format!("{value}: {must}"),
    })
}

impl Lab {
    /// How fault kernel `k` is launched over `n` of its elements (its doc's unit: elements,
    /// threads, words), from the catalogue's shape; the [`ONE_BLOCK_PER_SM`] pairs held to one
    /// block per SM (the same for both twins, so the one change is what differs). Not the GEMMs
    /// ([`Lab::gemm_config`]).
    pub fn fault_config(&self, backend: Backend, k: &Kernel, n: u64) -> Result<LaunchConfig> {
        if k.fault.is_some_and(|f| ONE_BLOCK_PER_SM.contains(&f.pair)) {
            // The shared memory that holds the blocks to one per SM, and the waves at it.
            let needed = k.shared_bytes(4);
            let shared_bytes = self.shared_for_resident(backend, k, k.name, needed, 1)?;
            return self.linear_config_with(backend, k, k.name, n, shared_bytes);
        }
        self.linear_config(backend, k, k.name, n, 4)
    }
}

/// Refuses a thread count `n` (`what` names it) that is not a positive multiple of the
/// pairs' [`BLOCK`].
fn whole_blocks(what: &'static str, n: u64) -> Result<()> {
    require(
        n > 0 && n.is_multiple_of(BLOCK as u64),
        what,
        n,
        &format!("a multiple of {BLOCK}"),
    )
}

/// The 16-byte groups of an elementwise launch: `input` and `out` the same length, a
/// multiple of 4, 16-byte aligned.
fn groups_of<T: Elem>(input: &DeviceSlice<T>, out: &DeviceSlice<T>) -> Result<u64> {
    let n = input.len() as u64;
    require(
        n > 0 && n.is_multiple_of(4),
        "elements",
        n,
        "a positive multiple of 4",
    )?;
    check_len("out", out.len(), n)?;
    check_aligned("input", input)?;
    check_aligned("out", out)?;
    Ok(n / 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_has_its_two_kernels() {
        for p in Pair::ALL {
            let (fault, fixed) = pair(p);
            assert!(
                !fault.fault.unwrap().fixed && fixed.fault.unwrap().fixed,
                "{p:?}"
            );
            assert_eq!(fault_of(fault, p).unwrap().twin, fixed.name);
            assert!(fault_of(fault, Pair::ALL[(p as usize + 1) % 13]).is_err());
        }
        assert_eq!(faults().count(), 2 * Pair::ALL.len());
    }
}
