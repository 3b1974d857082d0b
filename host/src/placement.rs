//! Where the reductions' result word lives, chosen on purpose.
//!
//! Every reduction ends each block with one `red.global.add` to the same word, so at 2^28
//! elements v1–v3 send 1,048,576 atomics to one address and v4–v5 131,072: one L2 slice
//! serialises them, and the kernel's time is (atomics × ns per atomic) whenever that exceeds
//! the time to read the input. How many ns depends on *where* the word is: on the H200 the
//! addresses fall into two groups, about 5 % apart in v1's time (the word's L2 slice is either
//! in the same L2 partition as the SMs that reach it, or across the partition fabric:
//! `lts__t_requests_srcunit_ltcfabric` tells). A result word allocated by luck would make
//! every v1–v5 row move by that much from run to run.
//!
//! So the bench allocates [`SLOTS`] candidate words [`STRIDE_BYTES`] apart, times
//! [`CALIBRATION`]'s kernel with the word at each, and puts every reduction's result in the
//! fastest slot; the report states the slot and both groups' times. `lab placement` times
//! chosen versions at every slot, for the full picture.

use crate::error::{Ctx, Result};
use crate::lab::Lab;
use crate::launchers::Elem;
use crate::timing::time_launches;
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

/// Two slots are in different groups when their sorted times are separated by a gap larger
/// than this share of the fastest (the H200's groups are ~5 % apart; event jitter at 120 µs
/// is well under 0.5 %).
pub const GROUP_GAP: f64 = 0.015;

/// Slots whose times lie together.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Group {
    pub slots: Vec<usize>,
    pub min_us: f64,
    pub max_us: f64,
}

/// Per-slot median times of one kernel, split into groups.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SlotTimes {
    /// `reduce_v1 [llvm] f32 2^24`.
    pub label: String,
    /// Median µs with the result word in slot k.
    pub us: Vec<f64>,
    /// The fastest group, then the slower one if the times split.
    pub fast: Group,
    pub slow: Option<Group>,
}

impl SlotTimes {
    pub fn new(label: String, us: Vec<f64>) -> SlotTimes {
        let (fast, slow) = split_groups(&us);
        SlotTimes {
            label,
            us,
            fast,
            slow,
        }
    }

    /// Slow group's median over the fast group's, 1 when the times do not split.
    pub fn slow_over_fast(&self) -> f64 {
        let med = |g: &Group| median(g.slots.iter().map(|&k| self.us[k]).collect());
        self.slow.as_ref().map_or(1.0, |s| med(s) / med(&self.fast))
    }

    /// `fast 33 slots 121.2–121.9 µs, slow 31 slots 127.0–128.8 µs (1.048×)`.
    pub fn summary(&self) -> String {
        let g = |name: &str, g: &Group| {
            format!(
                "{name} {} slots {:.1}–{:.1} µs",
                g.slots.len(),
                g.min_us,
                g.max_us
            )
        };
        match &self.slow {
            Some(s) => format!(
                "{}, {} ({:.3}×)",
                g("fast", &self.fast),
                g("slow", s),
                self.slow_over_fast()
            ),
            None => format!("{} (one group)", g("all", &self.fast)),
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Splits per-slot times at the largest gap between consecutive sorted values when it exceeds
/// [`GROUP_GAP`] of the fastest time; otherwise all slots form one group.
pub fn split_groups(us: &[f64]) -> (Group, Option<Group>) {
    let mut order: Vec<usize> = (0..us.len()).collect();
    order.sort_by(|&a, &b| us[a].total_cmp(&us[b]));
    let group = |slots: &[usize]| {
        let mut slots = slots.to_vec();
        slots.sort_unstable();
        Group {
            min_us: slots.iter().map(|&k| us[k]).fold(f64::INFINITY, f64::min),
            max_us: slots
                .iter()
                .map(|&k| us[k])
                .fold(f64::NEG_INFINITY, f64::max),
            slots,
        }
    };
    let cut = order
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i + 1, us[w[1]] - us[w[0]]))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|&(_, gap)| gap > GROUP_GAP * us[order[0]]);
    match cut {
        Some((i, _)) => (group(&order[..i]), Some(group(&order[i..]))),
        None => (group(&order), None),
    }
}

/// Which slot a run adds into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SlotChoice {
    /// Slot 0, no calibration (what a plain allocation gets: either group, by luck).
    First,
    /// The fastest slot by [`CALIBRATION`].
    Fast,
    /// The slowest slot by [`CALIBRATION`] (to profile the other group).
    Slow,
}

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
            crate::bench::size::label(n as u64)
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

/// What the bench and `lab placement` record about the result word.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Placement {
    pub slot: usize,
    pub offset_bytes: usize,
    pub stride_bytes: usize,
    pub slots: usize,
    pub calibration: Option<SlotTimes>,
}

impl Placement {
    /// One line for report headers: which slot, and why.
    pub fn describe(&self) -> String {
        let at = format!(
            "slot {} of {} ({} B into a pool of words {} B apart)",
            self.slot, self.slots, self.offset_bytes, self.stride_bytes
        );
        match &self.calibration {
            Some(t) => format!(
                "result word: {at}, {:.1} µs, {} for same-address atomics by {}: {}",
                t.us[self.slot],
                if t.fast.slots.contains(&self.slot) {
                    "in the fast group"
                } else {
                    "in the slow group"
                },
                t.label,
                t.summary()
            ),
            None => format!("result word: {at}, not calibrated"),
        }
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
pub struct Request {
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
pub fn run_cli(req: &Request) -> Result<()> {
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
        crate::bench::size::label(req.n),
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
            detail: format!("could not write '{}': {e}", path.display()),
        })?;
        crate::files::report_written(path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_groups_split_at_the_gap() {
        // Half the slots near 1917 µs, half near 2012 µs (v1 at 2^28 on the H200).
        let us: Vec<f64> = (0..64)
            .map(|k| {
                if k % 3 == 0 {
                    2012.0 + k as f64 * 0.5
                } else {
                    1917.0 + k as f64 * 0.1
                }
            })
            .collect();
        let (fast, slow) = split_groups(&us);
        let slow = slow.expect("two groups");
        assert!(fast.slots.iter().all(|k| k % 3 != 0));
        assert!(slow.slots.iter().all(|k| k % 3 == 0));
        assert_eq!(fast.slots.len() + slow.slots.len(), 64);
        assert!(fast.max_us < slow.min_us);
        let t = SlotTimes::new("t".into(), us);
        assert!(
            (t.slow_over_fast() - 1.05).abs() < 0.01,
            "{}",
            t.slow_over_fast()
        );
        assert!(t.summary().contains("fast 42 slots"), "{}", t.summary());
    }

    #[test]
    fn jitter_alone_is_one_group() {
        let us: Vec<f64> = (0..64).map(|k| 120.0 + (k % 7) as f64 * 0.05).collect();
        let (all, slow) = split_groups(&us);
        assert!(slow.is_none());
        assert_eq!(all.slots.len(), 64);
        let t = SlotTimes::new("t".into(), us);
        assert_eq!(t.slow_over_fast(), 1.0);
        assert!(t.summary().contains("one group"), "{}", t.summary());
    }

    #[test]
    fn slot_offsets_step_by_the_stride() {
        assert_eq!(ResultSlots::offset(2), 2 * STRIDE_BYTES);
    }
}
