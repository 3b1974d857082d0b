//! The transposes' memory roofs: the naive transpose's scattered stores, the 32×32 tile order.

use super::{compare, download};
use crate::cases::verify::Verdict;
use crate::cases::{Case, POISON_BITS, fill};
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use crate::launchers::LaunchConfig;
use catalog::Backend;
use catalog::launch::transpose::TILE;
use cust::memory::DeviceBuffer;

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
