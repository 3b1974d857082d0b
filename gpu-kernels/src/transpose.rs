//! Matrix transposes, f32, row-major: `output[c][r] = input[r][c]` for a `rows × cols` input.
//!
//! All three use the same launch, so only their memory pattern differs:
//!
//! # Launch
//! Block `(TILE, ROWS_PER_PASS)` = (32, 8); grid `(ceil(cols / 32), ceil(rows / 32))`; each
//! block moves one 32×32 tile, each thread 4 elements. Edge tiles are guarded, so any
//! `rows × cols` works. Dynamic shared memory: none (naive), `32 × 32 × 4` bytes (tiled),
//! `32 × 33 × 4` bytes (padded).
//!
//! Parameters: `input` device pointer `[rows][cols]`, `output` device pointer `[cols][rows]`.

use crate::device::*;

/// Tile edge, in elements.
pub const TILE: u32 = 32;
/// Tile rows a block moves per pass (block height).
pub const ROWS_PER_PASS: u32 = 8;
/// Shared-memory row length of the tiled (unpadded) transpose, in f32.
pub const PITCH_TILED: u32 = TILE;
/// Shared-memory row length of the padded transpose: one extra word shifts each row one bank.
pub const PITCH_PADDED: u32 = TILE + 1;

#[inline(always)]
fn at(row: u32, col: u32, width: u32) -> usize {
    (row as u64 * width as u64 + col as u64) as usize
}

/// Naive: reads along a row (coalesced), writes down a column (each lane to another row of
/// the output: 32 sectors per warp-wide store).
#[inline(always)]
pub unsafe fn transpose_naive(input: *const f32, output: *mut f32, rows: u32, cols: u32) {
    let x = block_idx_x() * TILE + thread_idx_x();
    let y0 = block_idx_y() * TILE + thread_idx_y();
    let mut j = 0;
    while j < TILE {
        let y = y0 + j;
        if x < cols && y < rows {
            *output.add(at(x, y, rows)) = *input.add(at(y, x, cols));
        }
        j += ROWS_PER_PASS;
    }
}

/// Tiled through shared memory with rows of `PITCH` floats: read a tile along its rows,
/// write it back along the transposed rows, so both global accesses are coalesced.
/// With `PITCH` = 32 the column read `tile[tx][ty + j]` hits one bank 32 times (32-way
/// conflict); with 33 each row starts one bank later and the conflict is gone.
#[inline(always)]
pub unsafe fn transpose_tile<const PITCH: u32>(
    input: *const f32,
    output: *mut f32,
    rows: u32,
    cols: u32,
) {
    let tile = Shared::<f32>::dynamic();
    let (tx, ty) = (thread_idx_x(), thread_idx_y());

    let x = block_idx_x() * TILE + tx;
    let y0 = block_idx_y() * TILE + ty;
    let mut j = 0;
    while j < TILE {
        if x < cols && y0 + j < rows {
            tile.set((ty + j) * PITCH + tx, *input.add(at(y0 + j, x, cols)));
        }
        j += ROWS_PER_PASS;
    }
    sync_threads();

    let x = block_idx_y() * TILE + tx; // output column = input row
    let y0 = block_idx_x() * TILE + ty; // output row = input column
    let mut j = 0;
    while j < TILE {
        if x < rows && y0 + j < cols {
            *output.add(at(y0 + j, x, rows)) = tile.get(tx * PITCH + ty + j);
        }
        j += ROWS_PER_PASS;
    }
}

kernel! {
    fn transpose_naive_f32(input: *const f32, output: *mut f32, rows: u32, cols: u32) {
        transpose_naive(input, output, rows, cols)
    }
}
kernel! {
    fn transpose_tiled_f32(input: *const f32, output: *mut f32, rows: u32, cols: u32) {
        transpose_tile::<PITCH_TILED>(input, output, rows, cols)
    }
}
kernel! {
    fn transpose_padded_f32(input: *const f32, output: *mut f32, rows: u32, cols: u32) {
        transpose_tile::<PITCH_PADDED>(input, output, rows, cols)
    }
}
