//! The atomic roofs: `red`s to one word (either type) and spread over many lines.

use super::{EXACT_COUNT_MAX, compare, download};
use crate::cases::verify::Verdict;
use crate::cases::{Case, fill};
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use crate::launchers::{Elem, LaunchConfig};
use catalog::Backend;
use catalog::launch::roofs::{LINE_WORDS, SPREAD_REDS_PER_WARP};
use cust::memory::{DeviceBuffer, DeviceSlice};

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
                T::DTYPE,
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
