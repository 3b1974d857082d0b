//! Where the reductions' result word lives, chosen on purpose.
//!
//! Every reduction ends each block with one `red.global.add` to the same word, so at 2^28
//! elements v1–v3 send 1,048,576 atomics to one address and v4–v5 131,072: one L2 slice
//! serialises them, and the kernel's time is (atomics × ns per atomic) whenever that exceeds
//! the time to read the input. How many ns depends on *where* the word is: on the H200 the
//! addresses fall into two groups, about 6 % apart in v1's time (ncu: 3.1 against 3.3 L2
//! cycles per `red` at the word's slice; which slices are slow, and why, is open:
//! docs/result-word.md). A result word allocated by luck would make every v1–v5 row move by
//! that much from run to run.
//!
//! So the bench allocates [`SLOTS`] candidate words [`STRIDE_BYTES`] apart, times
//! [`CALIBRATION`]'s kernel with the word at each, and puts every reduction's result in the
//! fastest slot; the report states the slot and both groups' times. `lab placement` times
//! chosen versions at every slot, for the full picture.

use crate::error::{Ctx, Result};
use crate::lab::Lab;
use crate::launchers::Elem;
use crate::timing::time_launches;
pub use catalog::records::{Placement, SlotTimes};
use catalog::{Backend, Kernel};
use cust::memory::{DeviceBuffer, DeviceCopy, DevicePointer, DeviceSlice};

/// Candidate addresses for the result word.
pub const SLOTS: usize = 64;
/// Bytes between candidates: 1 MiB + 128 B, so consecutive slots differ in the address bits
/// that pick the L2 slice as well as in the page.
pub const STRIDE_BYTES: usize = (1 << 20) + 128;
const _: () = assert!(STRIDE_BYTES > 1 << 20 && STRIDE_BYTES.is_multiple_of(128));

/// The kernel, backend and size the slots are ranked with: v4 at 2^28 f32 sends 131,072
/// same-address atomics while it streams 1 GiB from DRAM, and its time moves by ~5 % with the
/// word's slot (320 vs 338 µs on the H200). At sizes that fit in L2 the split disappears (v1
/// at 2^24: all 64 slots within 2 %), so the ranking needs a DRAM-sized input of its own.
pub struct CalibrationKernel {
    /// The reduction's catalogue name.
    pub kernel: &'static str,
    pub backend: Backend,
    pub n: u64,
    pub reps: usize,
}

pub const CALIBRATION: CalibrationKernel = CalibrationKernel {
    kernel: "reduce_v4",
    backend: Backend::Llvm,
    n: 1 << 28,
    reps: 5,
};

pub use catalog::SlotChoice;

/// The candidate result words and the one in use.
pub struct ResultSlots {
    pool: DeviceBuffer<u32>,
    /// The slot every reduction adds into.
    pub chosen: usize,
    /// How `chosen` was picked (None: slot 0, not calibrated).
    pub calibration: Option<SlotTimes>,
}

impl ResultSlots {
    /// [`SLOTS`] zeroed candidates; slot 0 in use until [`ResultSlots::calibrate`].
    pub fn new() -> Result<ResultSlots> {
        let words = (SLOTS - 1) * STRIDE_BYTES / 4 + 1;
        let pool = DeviceBuffer::<u32>::zeroed(words)
            .ctx(|| format!("allocating {SLOTS} result-word candidates"))?;
        Ok(ResultSlots {
            pool,
            chosen: 0,
            calibration: None,
        })
    }

    /// Slot `k` as a one-element slice of `T` (every element type here is 4 bytes).
    pub fn slot<T: DeviceCopy>(&self, k: usize) -> DeviceSlice<T> {
        assert!(k < SLOTS && std::mem::size_of::<T>() == 4);
        let addr = self.pool.as_device_ptr().as_raw() + (k * STRIDE_BYTES) as u64;
        // SAFETY: `addr` is a 4-byte-aligned word inside `pool` (k < SLOTS, STRIDE_BYTES is a
        // multiple of 4), which lives as long as `self`; T is 4 bytes, so the slice covers
        // exactly that word.
        unsafe { DeviceSlice::from_raw_parts(DevicePointer::from_raw(addr), 1) }
    }

    /// The slot in use.
    pub fn result<T: Elem>(&self) -> DeviceSlice<T> {
        self.slot(self.chosen)
    }

    /// Byte offset of slot `k` from the pool's start.
    pub fn offset(k: usize) -> usize {
        k * STRIDE_BYTES
    }

    /// Times the reduction `kernel` on `backend` over `input` with the result in every slot (median of
    /// `reps` event-timed launches each, after one warm-up).
    pub fn time_slots<T: Elem>(
        &self,
        lab: &Lab,
        backend: Backend,
        kernel: &Kernel,
        input: &DeviceSlice<T>,
        reps: usize,
    ) -> Result<Vec<f64>> {
        (0..SLOTS)
            .map(|k| {
                let out = self.slot::<T>(k);
                let mut word = self.slot::<u32>(k);
                let s = time_launches(
                    &lab.stream,
                    1,
                    reps,
                    // SAFETY: a stream-ordered memset of a word inside the live pool.
                    || unsafe { word.set_32_async(0, &lab.stream) }.ctx(|| "zeroing a slot".into()),
                    || lab.launch_reduce(backend, kernel, input, &out, &lab.stream),
                )?;
                Ok(s.median() * 1e3)
            })
            .collect()
    }

    /// Ranks the slots with [`CALIBRATION`] and uses the fastest. The input is
    /// `CALIBRATION.n` ones written on the device (the values do not change the time; only
    /// the ranking is kept), freed before this returns.
    pub fn calibrate(&mut self, lab: &Lab) -> Result<&SlotTimes> {
        let c = &CALIBRATION;
        let n = c.n as usize;
        lab.check_fits(c.n * 4)?;
        let input =
            DeviceBuffer::<u32>::zeroed(n).ctx(|| "allocating the calibration input".into())?;
        // SAFETY: a stream-ordered memset of a live buffer, waited for below.
        unsafe { input.index(..).set_32_async(1.0f32.to_bits(), &lab.stream) }
            .ctx(|| "filling the calibration input".into())?;
        lab.sync()?;
        let addr = input.as_device_ptr().as_raw();
        // SAFETY: the buffer holds n 4-byte words; f32 has the same size and alignment.
        let ones = unsafe { DeviceSlice::<f32>::from_raw_parts(DevicePointer::from_raw(addr), n) };
        let us = self.time_slots(
            lab,
            c.backend,
            crate::launchers::kernel(c.kernel),
            &ones,
            c.reps,
        )?;
        let label = format!(
            "{} [{}] f32 {}",
            c.kernel,
            c.backend,
            catalog::cli::size::label(n as u64)
        );
        let times = SlotTimes::new(label, us);
        self.chosen = times
            .fast
            .slots
            .iter()
            .copied()
            .min_by(|&a, &b| times.us[a].total_cmp(&times.us[b]))
            .unwrap_or(0);
        Ok(self.calibration.insert(times))
    }

    /// Calibrates (unless `First`) and uses the slot `choice` names.
    pub fn choose(&mut self, lab: &Lab, choice: SlotChoice) -> Result<()> {
        if choice == SlotChoice::First {
            return Ok(());
        }
        let t = self.calibrate(lab)?;
        if choice == SlotChoice::Slow {
            let us = &t.us;
            self.chosen = (0..us.len())
                .max_by(|&a, &b| us[a].total_cmp(&us[b]))
                .unwrap_or(0);
        }
        Ok(())
    }
}

impl From<&ResultSlots> for Placement {
    fn from(r: &ResultSlots) -> Placement {
        Placement {
            slot: r.chosen,
            offset_bytes: ResultSlots::offset(r.chosen),
            stride_bytes: STRIDE_BYTES,
            slots: SLOTS,
            calibration: r.calibration.clone(),
        }
    }
}

/// `lab placement --kernel`: the catalogue's reductions `spec` selects (the catalogue's rule),
/// or, for an empty spec, every reduction launched one block per fixed share of the input
/// (their per-block atomics are what the slot decides). Anything else is refused.
pub fn reductions(spec: &str) -> Result<Vec<&'static Kernel>> {
    if spec.trim().is_empty() {
        return Ok(crate::launchers::reductions()
            .filter(|k| matches!(k.shape, catalog::Shape::Blocks { .. }))
            .collect());
    }
    let picked = catalog::select(spec).map_err(|detail| crate::HostError::Invalid {
        what: "--kernel",
        detail,
    })?;
    picked
        .into_iter()
        .map(|s| s.kernel)
        .map(
            |k| match crate::launchers::reductions().any(|r| r.name == k.name) {
                true => Ok(k),
                false => Err(crate::HostError::Invalid {
                    what: "--kernel",
                    detail: format!("'{}' is not one of the lab's reductions", k.name),
                }),
            },
        )
        .collect()
}

/// What `lab placement` was asked to do.
#[derive(Clone, Debug)]
pub struct PlacementRequest {
    pub kernels: Vec<&'static Kernel>,
    pub backends: Vec<Backend>,
    pub n: u64,
    pub reps: usize,
    pub seed: u64,
    /// `--out FILE`: every (kernel, slot) median as CSV.
    pub out: Option<std::path::PathBuf>,
}

/// `lab placement`: each version on each backend timed with the result word in every slot;
/// one summary line per kernel, then whether the kernels agree on which slots are fast.
pub fn run_cli(req: &PlacementRequest) -> Result<()> {
    let lab = Lab::new()?;
    let (free, total) = lab.memory()?;
    if req.n * 4 > free {
        return Err(crate::HostError::OutOfMemory {
            bytes: req.n * 4,
            free,
            total,
        });
    }
    let host = crate::cpu::random::f32s(req.n as usize, req.seed);
    let input = lab.upload(&host)?;
    let slots = ResultSlots::new()?;
    println!(
        "lab placement: {} ({} SMs), f32 {}, result word in each of {SLOTS} slots {STRIDE_BYTES} B apart, median of {} launches per slot",
        lab.info.name,
        lab.info.sm_count,
        catalog::cli::size::label(req.n),
        req.reps
    );
    let mut all = Vec::new();
    for &v in &req.kernels {
        for &b in req.backends.iter().filter(|&&b| v.carried_by(b)) {
            let us = slots.time_slots(&lab, b, v, &input, req.reps)?;
            let t = SlotTimes::new(format!("{} [{b}]", v.name), us);
            println!("  {:<18} {}", t.label, t.summary());
            all.push(t);
        }
    }
    if let Some(first) = all.first() {
        let agree = all
            .iter()
            .filter(|t| t.fast.slots == first.fast.slots)
            .count();
        println!(
            "fast slots identical to {}'s in {agree} of {} kernels: {:?}",
            first.label,
            all.len(),
            first.fast.slots
        );
    }
    if let Some(path) = &req.out {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(["kernel", "n", "slot", "offset_bytes", "median_us", "group"])
            .expect("writing CSV to memory");
        for t in &all {
            for (k, us) in t.us.iter().enumerate() {
                let group = if t.fast.slots.contains(&k) {
                    "fast"
                } else {
                    "slow"
                };
                w.write_record([
                    t.label.clone(),
                    req.n.to_string(),
                    k.to_string(),
                    ResultSlots::offset(k).to_string(),
                    format!("{us:.2}"),
                    group.into(),
                ])
                .expect("writing CSV to memory");
            }
        }
        let bytes = w.into_inner().expect("flushing CSV to memory");
        crate::files::write_atomic(path, &bytes).map_err(|e| crate::HostError::Invalid {
            what: "--out",
            detail: e.to_string(),
        })?;
        crate::files::report_written(path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_offsets_step_by_the_stride() {
        assert_eq!(ResultSlots::offset(2), 2 * STRIDE_BYTES);
    }
}
