//! The tiled transposes: `output[c][r] = input[r][c]`, one block per tile.

use super::{LaunchConfig, MAX_GRID_Y};
use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use catalog::{Backend, Dtype, Kernel, Shape};
use cust::launch;
use cust::memory::DeviceSlice;
use cust::stream::Stream;

/// Tile edge of a transpose (the elements each block covers in x and y), and whether its
/// blocks walk down the input's tile columns.
pub fn tile(kernel: &Kernel) -> Result<(u32, bool)> {
    match kernel.shape {
        Shape::Tiles { tile, down_columns } => Ok((tile, down_columns)),
        _ => Err(HostError::Invalid {
            what: "transpose",
            detail: format!("{} is not launched on tiles", kernel.name),
        }),
    }
}

/// The grid of a `rows × cols` transpose, one block per tile, in the catalogue's order; a
/// shape whose tiles along y pass the grid's y limit is refused. (Along x nothing can:
/// u32::MAX / 32 is far below the x limit.)
pub fn grid(kernel: &Kernel, rows: u32, cols: u32) -> Result<(u32, u32)> {
    let (tile, down_columns) = tile(kernel)?;
    let (along_x, (along_y, what)) = if down_columns {
        (rows, (cols, "cols"))
    } else {
        (cols, (rows, "rows"))
    };
    let gy = along_y.div_ceil(tile) as u64;
    if gy > MAX_GRID_Y {
        return Err(HostError::TooLarge {
            what,
            value: along_y as u64,
            limit: MAX_GRID_Y * tile as u64,
            why: "grid y limit × elements per tile",
        });
    }
    Ok((along_x.div_ceil(tile), gy as u32))
}

/// Refuses a transpose's input or output buffer shorter than `rows × cols` elements.
pub fn check_matrix_lengths(rows: u32, cols: u32, input: usize, output: usize) -> Result<()> {
    let elems = rows as usize * cols as usize;
    for (what, len) in [("input", input), ("output", output)] {
        if len < elems {
            return Err(HostError::Invalid {
                what,
                detail: format!("{len} elements, but {rows}×{cols} = {elems} needed"),
            });
        }
    }
    Ok(())
}

impl Lab {
    /// How a `rows × cols` transpose is launched: the grid of tiles, the catalogue's block and
    /// shared tile.
    pub fn transpose_config(&self, kernel: &Kernel, rows: u32, cols: u32) -> Result<LaunchConfig> {
        Ok(LaunchConfig {
            grid: grid(kernel, rows, cols)?,
            block: kernel.block,
            shared_bytes: kernel.shared_bytes(4),
            cluster: 1,
        })
    }

    /// Queues `output[c][r] = input[r][c]` for a row-major `rows × cols` input.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_transpose(
        &self,
        backend: Backend,
        kernel: &Kernel,
        input: &DeviceSlice<f32>,
        output: &DeviceSlice<f32>,
        rows: u32,
        cols: u32,
        stream: &Stream,
    ) -> Result<()> {
        check_matrix_lengths(rows, cols, input.len(), output.len())?;
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let cfg = self.transpose_config(kernel, rows, cols)?;
        let entry = kernel.entry(Dtype::F32);
        let f = self.function(backend, &entry)?;
        let (i, o) = (input.as_device_ptr(), output.as_device_ptr());
        let (grid, block) = super::dims(&cfg);
        // SAFETY: the kernel reads input[0..rows·cols) and writes output[0..rows·cols), both
        // checked above; edge tiles are guarded in the kernel.
        unsafe { launch!(f<<<grid, block, cfg.shared_bytes, stream>>>(i, o, rows, cols)) }
            .ctx(|| format!("launching {entry} [{backend}] {rows}×{cols}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_cover_the_matrix_in_tiles_and_refuse_past_y() {
        for k in super::super::transposes() {
            let (t, down_columns) = tile(k).unwrap();
            let (rows_tiles, cols_tiles) = (3, 1);
            let want = if down_columns {
                (rows_tiles, cols_tiles)
            } else {
                (cols_tiles, rows_tiles)
            };
            assert_eq!(grid(k, 2 * t + 1, t).unwrap(), want, "{}", k.name);
            let (rows, cols) = if down_columns {
                (8, u32::MAX)
            } else {
                (u32::MAX, 8)
            };
            let e = grid(k, rows, cols).unwrap_err().to_string();
            assert!(e.contains("grid y limit"), "{e}");
        }
        assert!(tile(super::super::kernel("bump")).is_err());
    }
}
