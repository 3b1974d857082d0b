//! The roofs (`gpu-kernels/src/roofs.rs`) on each Rust backend, once per run (they do not
//! depend on the problem size): same-address atomics into the reductions' result word (in
//! the reductions' shape, f32 and i32, then looped over one wave of blocks), spread atomics,
//! shared-memory wavefronts, empty blocks (and one empty block alone: a timed launch's cost),
//! the naive transpose's scattered stores, each reduction's block tree alone (both types, at
//! the occupancy it gets and held to fewer blocks per SM) and the reductions' load phase alone
//! (one block per SM, with and without its load); and at each transpose edge of the run, the
//! 32×32 tile order's copy (a DRAM rate that depends on the size, as the copy's does). Each is
//! timed like the ceilings and checked exactly afterwards; each row's `n` is its count of
//! operations (the tile copy's and the load phase's: elements, with their bytes), so its rate
//! is `n` over the median ([`catalog::roofs`]).

use super::Bench;
use crate::bench::report::Row;
use crate::bench::size;
use crate::cases::Case;
use crate::cases::roofs::{
    AtomicSame, AtomicSpread, EmptyBlocks, LoadWait, ScatterStore, SharedRw, TileCopy, TreeAlone,
};
use crate::cases::verify::Verdict;
use crate::error::Result;
use crate::launchers::{Elem, roofs as kernels};
use crate::placement::{Placement, ResultSlots};
use catalog::kernels::Tree;
use catalog::launch::roofs::{SHARED_STEPS, SPREAD_REDS_PER_WARP};
use catalog::launch::transpose::TILE;
use catalog::records::{Cache, Clocks};
use catalog::roofs::{self as roof, Roofs};
use catalog::{Backend, Dtype, Family};

/// Blocks of the same-address roof, one `red` each: as many as v1–v3 launch at 2^28
/// elements, ~1.9 ms on the H200 (launch overhead well under 1 %).
pub const ATOMIC_SAME_BLOCKS: u64 = 1 << 20;
/// `red`s of the spread roof: 2^26, 2^10 into each of [`SPREAD_LINES`] lines.
pub const SPREAD_REDS: u64 = 1 << 26;
/// 128-byte lines the spread `red`s cover: 8 MiB, every L2 slice many times over.
pub const SPREAD_LINES: u32 = 1 << 16;
/// Trips per thread of the shared-memory roof (32 load–store steps each).
pub const SHARED_TRIPS: u32 = 512;
/// Blocks of the block roof: 4× the blocks of v1–v3 at 2^28.
pub const EMPTY_BLOCK_COUNT: u64 = 1 << 22;
/// Matrix edge of the scattered-store roof: the naive transpose's 8192² stores.
pub const SCATTER_EDGE: u32 = 8192;
/// Blocks of each tree roof: as many as v1–v3 launch at 2^28 elements (~1 ms each).
pub const TREE_BLOCKS: u64 = 1 << 20;
/// Resident blocks per SM each tree is also held to (besides the 8 it gets): where the slots
/// model's occupancies fall (E18: 4–6 for the reductions' 8-block SMs).
pub const TREE_HELD: [u32; 3] = [6, 4, 2];
/// Elements of the load roof: 2^26 i32 (256 MiB, four times the H200's L2), 2^18 blocks.
pub const LOAD_WAIT_N: u64 = 1 << 26;
/// Resident blocks per SM of the load roof: few enough that each block's latency, not the
/// block scheduler, sets its pace (E18: the same resident time at 1, 2 and 4).
pub const LOAD_WAIT_RESIDENT: u32 = 1;

// Every count stays exact in an f32 and within the grid.
const _: () = {
    use crate::cases::roofs::EXACT_COUNT_MAX;
    assert!(ATOMIC_SAME_BLOCKS <= EXACT_COUNT_MAX);
    assert!(SPREAD_REDS / SPREAD_LINES as u64 <= EXACT_COUNT_MAX);
    assert!(SPREAD_LINES.is_power_of_two());
    assert!(EMPTY_BLOCK_COUNT <= crate::launchers::MAX_GRID_X);
    assert!(SCATTER_EDGE as u64 * SCATTER_EDGE as u64 <= u32::MAX as u64);
};

/// Where the atomic word lies, for the report: `the reductions' result word, slot 17 of 64,
/// fast group by reduce_v4 [llvm] f32 2^28`.
pub fn slot_label(p: &Placement) -> String {
    let how = match &p.calibration {
        Some(t) if t.fast.slots.contains(&p.slot) => format!("fast group by {}", t.label),
        Some(t) => format!("slow group by {}", t.label),
        None => "not calibrated".into(),
    };
    format!(
        "the reductions' result word, slot {} of {}, {how}",
        p.slot, p.slots
    )
}

/// The clock the per-cycle roofs are stated at: the SM clock NVML read right after the run
/// (the GPU had just been busy), else the device's maximum.
pub fn sm_clock_hz(after: &Clocks, max_mhz: u32) -> Option<f64> {
    after
        .sm_mhz
        .or((max_mhz > 0).then_some(max_mhz))
        .map(|mhz| mhz as f64 * 1e6)
}

/// The run's roofs from its rows: those of the first cache it measured (hot, when it measured
/// hot), with the same-address word's place.
pub fn measured(
    rows: &[Row],
    caches: &[Cache],
    sm_clock_hz: Option<f64>,
    atomic_slot: Option<String>,
) -> Option<Roofs> {
    let cache = caches.first().copied().unwrap_or_default();
    let r = Roofs::from_rows(rows, cache, sm_clock_hz)?;
    Some(Roofs {
        atomic_same_slot: r.atomic_same_ns.and(atomic_slot),
        ..r
    })
}

impl Bench<'_> {
    /// Whether the roofs run: whenever a reduction or a transpose does (they are what the
    /// rows are predicted from), or a roof kernel is named.
    pub(super) fn wants_roofs(&self) -> bool {
        self.wants_reduce()
            || self.wants_rows()
            || crate::launchers::transposes().any(|t| self.plan.wants(t.name))
            || kernels::all().iter().any(|k| self.plan.wants(k.name))
    }

    /// Every roof on every Rust backend of the plan. The same-address `red`s go to the
    /// reductions' result word when the reductions chose one, else to an uncalibrated slot 0.
    pub fn roofs(&mut self) -> Result<()> {
        if !self.wants_roofs() {
            return Ok(());
        }
        let slots = match self.slots.take() {
            Some(s) => s,
            None => ResultSlots::new()?,
        };
        let at = slot_label(&Placement::from(&slots));
        self.atomic_slot = Some(at.clone());
        let backends: Vec<Backend> = self
            .plan
            .backends
            .iter()
            .copied()
            .filter(|&b| kernels::atomic_same().carried_by(b))
            .collect();
        let tiles = crate::launchers::transposes().any(|t| self.plan.wants(t.name))
            || self.plan.wants(kernels::tile_copy().name);
        for b in backends {
            self.atomic_same(b, &slots, &at);
            self.atomic_same_once::<i32>(b, &slots, &at);
            self.atomic_spread(b);
            self.shared_rw(b);
            self.empty_blocks(b);
            self.scatter_store(b);
            for t in Tree::ALL {
                for held in [None].into_iter().chain(TREE_HELD.map(Some)) {
                    self.tree::<f32>(b, t, held);
                    self.tree::<i32>(b, t, held);
                }
            }
            self.load_wait(b, true);
            self.load_wait(b, false);
            if tiles {
                let plan = self.plan;
                // The order exists for whole tiles only: other edges go without the roof.
                for &edge in plan.transpose.iter().filter(|&&e| e % TILE as u64 == 0) {
                    self.tile_copy(b, edge as u32);
                }
            }
        }
        self.slots = Some(slots);
        Ok(())
    }

    /// A roof row: `n` operations, `bytes` that must move, on `backend`.
    fn roof_row(name: &str, backend: Backend, n: u64, bytes: u64, dtype: Dtype) -> Row {
        Row::new(
            Family::Ceiling,
            name,
            backend,
            dtype,
            n,
            size::label(n),
            bytes,
        )
    }

    /// Measures the case `made` as `row`, its note `about` it, checked by `verify`; a case
    /// that could not be made fails the row.
    fn roof<C: Case>(
        &mut self,
        row: Row,
        made: Result<C>,
        about: impl FnOnce(&C) -> String,
        verify: impl Fn(&C) -> Result<Verdict>,
    ) {
        match made {
            Ok(case) => {
                let row = row.with_note(&about(&case));
                self.measure_case(row, &case, || verify(&case));
            }
            Err(e) => self.record_each(row.failed(e.to_string())),
        }
    }

    /// One `red` of `T` per block into the result word: the reductions' `T` rows' chain.
    fn atomic_same_once<T: Elem>(&mut self, b: Backend, slots: &ResultSlots, at: &str) {
        let row = Self::roof_row(roof::ATOMIC_SAME, b, ATOMIC_SAME_BLOCKS, 0, T::DTYPE);
        let made = AtomicSame::new(self.lab, b, slots.result::<T>(), ATOMIC_SAME_BLOCKS, 1);
        let red = match T::DTYPE {
            Dtype::F32 => "red.global.add.f32",
            Dtype::I32 => "red.global.add.s32",
            Dtype::U32 => "red.global.add.u32",
            Dtype::Bf16 => unreachable!("the reductions' element types are f32 and i32"),
        };
        self.roof(
            row,
            made,
            |_| format!("one {red} per block, thread 0 after bar.sync, into {at}"),
            AtomicSame::verify,
        );
    }

    fn atomic_same(&mut self, b: Backend, slots: &ResultSlots, at: &str) {
        let lab = self.lab;
        let word = slots.result::<f32>();
        self.atomic_same_once::<f32>(b, slots, at);

        // The same reds over one wave of blocks that each loop: no block retires between them.
        let k = kernels::atomic_same();
        let looped = lab.wave(b, k, &k.entry(Dtype::F32), 0).and_then(|wave| {
            let per_block = ATOMIC_SAME_BLOCKS.div_ceil(wave) as u32;
            AtomicSame::new(lab, b, word, wave, per_block)
        });
        let n = looped.as_ref().map_or(ATOMIC_SAME_BLOCKS, AtomicSame::reds);
        let row = Self::roof_row(roof::ATOMIC_SAME_LOOPED, b, n, 0, Dtype::F32);
        self.roof(
            row,
            looped,
            |c| {
                let blocks = c.config().map_or(0, |cfg| cfg.grid.0);
                format!(
                    "one wave of {blocks} blocks, each {} x (bar.sync, thread 0 red), same word",
                    c.reds() / blocks.max(1) as u64
                )
            },
            AtomicSame::verify,
        );
    }

    fn atomic_spread(&mut self, b: Backend) {
        let made = AtomicSpread::new(self.lab, b, SPREAD_REDS, SPREAD_LINES);
        let n = made.as_ref().map_or(SPREAD_REDS, AtomicSpread::reds);
        let row = Self::roof_row(roof::ATOMIC_SPREAD, b, n, 0, Dtype::F32);
        self.roof(
            row,
            made,
            |c| {
                format!(
                    "lane 0 of each warp: {SPREAD_REDS_PER_WARP} red.global.add.f32, each to another of {} 128-B lines",
                    c.lines()
                )
            },
            AtomicSpread::verify,
        );
    }

    fn shared_rw(&mut self, b: Backend) {
        let made = SharedRw::new(self.lab, b, SHARED_TRIPS);
        let n = made.as_ref().map_or(0, SharedRw::wavefronts);
        let row = Self::roof_row(roof::SHARED_RW, b, n, 0, Dtype::U32);
        self.roof(
            row,
            made,
            |c| {
                let blocks = c.config().map_or(0, |cfg| cfg.grid.0);
                format!(
                    "{blocks} blocks, {SHARED_TRIPS} x {SHARED_STEPS} conflict-free LDS + STS per thread (wavefronts)"
                )
            },
            SharedRw::verify,
        );
    }

    fn empty_blocks(&mut self, b: Backend) {
        let made = EmptyBlocks::new(self.lab, b, EMPTY_BLOCK_COUNT);
        let row = Self::roof_row(roof::EMPTY_BLOCKS, b, EMPTY_BLOCK_COUNT, 0, Dtype::U32);
        self.roof(
            row,
            made,
            |c| {
                let threads = c.config().map_or(0, |cfg| cfg.block.0);
                format!("blocks of {threads} threads; thread 0 stores its block's index")
            },
            EmptyBlocks::verify,
        );

        // One block: the launch alone, timed by its own pair of events as every row's sample
        // is, which a timed row pays per launch on top of its work.
        let made = EmptyBlocks::new(self.lab, b, 1);
        let row = Self::roof_row(roof::EMPTY_LAUNCH, b, 1, 0, Dtype::U32);
        self.roof(
            row,
            made,
            |_| "one launch of one empty block, timed alone by its pair of events".into(),
            EmptyBlocks::verify,
        );
    }

    fn scatter_store(&mut self, b: Backend) {
        let e = SCATTER_EDGE;
        let n = e as u64 * e as u64;
        let made = self
            .check_memory(n * 4)
            .and_then(|_| ScatterStore::new(self.lab, b, e, e));
        let row = Self::roof_row(roof::SCATTER_STORE, b, n, n * 4, Dtype::U32);
        self.roof(
            row,
            made,
            |_| format!("the naive transpose's {e}x{e} stores alone: 4 B into each 32-B sector"),
            ScatterStore::verify,
        );
    }

    /// Reduction tree `t` alone in `T`, [`TREE_BLOCKS`] blocks, as many per SM as fit or
    /// `held` to that many: what the tree costs a block when nothing else runs. The row states
    /// its blocks per SM (the occupancy API's).
    fn tree<T: Elem>(&mut self, b: Backend, t: Tree, held: Option<u32>) {
        let made = TreeAlone::<T>::new(self.lab, b, t, TREE_BLOCKS, held);
        let resident = made.as_ref().ok().and_then(|c| c.resident().ok());
        let mut row = Self::roof_row(t.roof(), b, TREE_BLOCKS, 0, T::DTYPE);
        if let Some(r) = resident {
            row.size = format!("{} at {r}/SM", row.size);
            row.resident = Some(r);
        }
        self.roof(
            row,
            made,
            |_| "the reduction's tree alone: values made in registers, no load, no red".into(),
            TreeAlone::verify,
        );
    }

    /// The reductions' load phase alone over [`LOAD_WAIT_N`] elements at
    /// [`LOAD_WAIT_RESIDENT`] blocks per SM, `with_load` or without it (row `load_wait_base`).
    fn load_wait(&mut self, b: Backend, with_load: bool) {
        let n = LOAD_WAIT_N;
        let made = self
            .check_memory(n * 4)
            .and_then(|_| LoadWait::new(self.lab, b, n, LOAD_WAIT_RESIDENT, with_load));
        let (name, bytes) = match with_load {
            true => (roof::LOAD_WAIT, n * 4),
            false => (roof::LOAD_WAIT_BASE, 0),
        };
        let mut row = Self::roof_row(name, b, n, bytes, Dtype::I32);
        row.size = format!("{} at {LOAD_WAIT_RESIDENT}/SM", row.size);
        row.resident = Some(LOAD_WAIT_RESIDENT);
        self.roof(
            row,
            made,
            |_| match with_load {
                true => {
                    "v1-v3's load phase alone: one element per thread to shared memory, a barrier"
                        .into()
                }
                false => {
                    "the same blocks without the load (each thread stores 0), a barrier".into()
                }
            },
            LoadWait::verify,
        );
    }

    /// The 32×32 tile order's copy of an `edge`² matrix: a row of that size, as the
    /// transposes' and the D2D copy's rows are.
    fn tile_copy(&mut self, b: Backend, edge: u32) {
        let n = edge as u64 * edge as u64;
        let made = self
            .check_memory(2 * n * 4)
            .and_then(|_| TileCopy::new(self.lab, b, edge, edge));
        let row = Row::new(
            Family::Ceiling,
            roof::TILE_COPY,
            b,
            Dtype::U32,
            n,
            size::shape_label(edge as u64, edge as u64),
            8 * n,
        );
        self.roof(
            row,
            made,
            |_| "each 32x32 tile copied row for row to the transposed tile's place".into(),
            TileCopy::verify,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::records::SlotTimes;

    #[test]
    fn the_slot_label_says_which_group() {
        let mut p = Placement {
            slot: 2,
            offset_bytes: 0,
            stride_bytes: 128,
            slots: 64,
            calibration: None,
        };
        assert_eq!(
            slot_label(&p),
            "the reductions' result word, slot 2 of 64, not calibrated"
        );
        let us: Vec<f64> = (0..64)
            .map(|k| if k < 32 { 100.0 } else { 110.0 })
            .collect();
        p.calibration = Some(SlotTimes::new("reduce_v4 [llvm] f32 2^28".into(), us));
        assert!(slot_label(&p).ends_with("slot 2 of 64, fast group by reduce_v4 [llvm] f32 2^28"));
        p.slot = 40;
        assert!(slot_label(&p).contains("slow group"));
    }
}
