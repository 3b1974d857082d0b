//! Matrix transposes, f32, row-major: `output[c][r] = input[r][c]` for a `rows × cols` input.
//!
//! The chapter's three (naive, tiled, padded) use the same launch, so only their memory pattern
//! differs; v4, beyond the chapter, has its own (see its entry point).
//!
//! # Launch
//! Block `(TILE, ROWS_PER_PASS)` = (32, 8); grid `(ceil(cols / 32), ceil(rows / 32))`; each
//! block moves one 32×32 tile, each thread 4 elements. Edge tiles are guarded, so any
//! `rows × cols` works. Dynamic shared memory: none (naive), `32 × 32 × 4` bytes (tiled),
//! `32 × 33 × 4` bytes (padded).
//!
//! Parameters: `input` device pointer `[rows][cols]`, `output` device pointer `[cols][rows]`.

use crate::device::*;
pub use crate::launch::transpose::*;

/// Shared-memory row length of the tiled (unpadded) transpose, in f32.
pub const PITCH_TILED: u32 = TILE;
/// Shared-memory row length of the padded transpose: one extra word shifts each row one bank.
pub const PITCH_PADDED: u32 = TILE + 1;

/// Index of (`row`, `col`) in a row-major matrix `width` elements wide, in 64 bits.
#[inline(always)]
pub(crate) fn at(row: u32, col: u32, width: u32) -> usize {
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

// ---- Beyond the chapter: v4, aimed at the device-to-device copy. ----

/// Where tile element (row `r`, column `c`) lives in v4's shared memory: unpadded rows of 64
/// floats, the column XOR-ed with `r & 28` (bits 2..4 of the row). The XOR moves whole 4-float
/// groups, so a group stays 16 contiguous, 16-byte-aligned bytes (`st.shared.v4` works), and:
/// - writes (a quarter-warp stores 8 groups of one row) hit 8 distinct groups: all 32 banks;
/// - reads (lane `8q + k` reads rows `4k + j`, column `c + q`, for k < 8, q < 4) hit bank
///   `(c + q) ^ 4k` mod 32: 32 distinct banks. No padding, no conflicts (chapter 3's 33-float
///   pitch would break the 16-byte alignment of every other row).
#[inline(always)]
fn v4_slot(r: u32, c: u32) -> u32 {
    r * V4_TILE + (c ^ (r & 28))
}

/// v4: a 64×64 tile per block of 256 threads, 16-byte global loads and stores, XOR-swizzled
/// shared memory.
///
/// - Load: thread t reads group `t % 16` (columns 4g..4g+3) of tile rows `t / 16 + 16p`,
///   p = 0..3: four independent 16-byte loads in flight per thread (16 KiB per block), each
///   warp-wide load two 256-byte row segments. Then four `st.shared.v4`.
/// - Store: warp w, lane `8q + k` writes output row `4·((w >> 1) + 4p) + q` (an input column),
///   output columns `32·(w & 1) + 4k ..+3` (four input rows, read from shared memory as four
///   scalars): one `st.global.v4` per p, each warp-wide store four 128-byte row segments.
///
/// `VEC = false` is the same mapping with 4-byte global accesses, for shapes where 16-byte
/// groups are not aligned (`rows` or `cols` not a multiple of 4, or a base pointer not 16-byte
/// aligned). Tiles on the matrix's edges guard every access, so any `rows × cols` works.
#[inline(always)]
pub unsafe fn transpose_v4<const VEC: bool>(
    input: *const f32,
    output: *mut f32,
    rows: u32,
    cols: u32,
) {
    // Tile origin in the input. blockIdx.x walks down a column of tiles, so the blocks resident
    // at one time write a narrow band of output rows (E13: faster than raster order).
    let row0 = block_idx_x() * V4_TILE;
    let col0 = block_idx_y() * V4_TILE;
    // A tile inside the matrix needs no guards. Guarded, the four loads are four branches that
    // ptxas schedules two at a time (the third reuses the first one's registers, E15).
    if VEC && row0 + V4_TILE <= rows && col0 + V4_TILE <= cols {
        v4_tile::<true, false>(input, output, rows, cols, row0, col0)
    } else {
        v4_tile::<VEC, true>(input, output, rows, cols, row0, col0)
    }
}

/// v4's tile at (`row0`, `col0`); `GUARD`: check every access against the matrix's edges.
#[inline(always)]
unsafe fn v4_tile<const VEC: bool, const GUARD: bool>(
    input: *const f32,
    output: *mut f32,
    rows: u32,
    cols: u32,
    row0: u32,
    col0: u32,
) {
    let tile = Shared::<f32>::dynamic();
    let tile4 = Shared::<Vec4<f32>>::dynamic();
    let t = thread_idx_x();

    // Global → registers: all four groups first, so the loads overlap. (Four named values,
    // not an array: libnvvm keeps a loop-indexed array in local memory.)
    let g = (t % 16) * 4; // first tile column of this thread's group
    let r = t / 16; // first tile row
    let c = col0 + g;
    let v0 = v4_load::<VEC, GUARD>(input, row0 + r, c, rows, cols);
    let v1 = v4_load::<VEC, GUARD>(input, row0 + r + 16, c, rows, cols);
    let v2 = v4_load::<VEC, GUARD>(input, row0 + r + 32, c, rows, cols);
    let v3 = v4_load::<VEC, GUARD>(input, row0 + r + 48, c, rows, cols);
    // Registers → shared (out-of-range elements store zeros that are never read back).
    tile4.set(v4_slot(r, g) / 4, v0);
    tile4.set(v4_slot(r + 16, g) / 4, v1);
    tile4.set(v4_slot(r + 32, g) / 4, v2);
    tile4.set(v4_slot(r + 48, g) / 4, v3);
    sync_threads();

    // Shared → global: output row = input column, output column = input row.
    let (w, lane) = (t / 32, t % 32);
    let (k, q) = (lane % 8, lane / 8);
    let r = 32 * (w & 1) + 4 * k; // first tile row of the group this lane writes
    let mut p = 0;
    while p < 4 {
        let cl = 4 * ((w >> 1) + 4 * p) + q; // tile column
        let (orow, ocol) = (col0 + cl, row0 + r);
        if !GUARD || orow < cols {
            let x = Vec4([
                tile.get(v4_slot(r, cl)),
                tile.get(v4_slot(r + 1, cl)),
                tile.get(v4_slot(r + 2, cl)),
                tile.get(v4_slot(r + 3, cl)),
            ]);
            let dst = output.add(at(orow, ocol, rows));
            if VEC {
                if !GUARD || ocol < rows {
                    store4(dst as *mut Vec4<f32>, x);
                }
            } else {
                let Vec4([x0, x1, x2, x3]) = x;
                v4_store_scalar(dst, 0, x0, ocol, rows);
                v4_store_scalar(dst, 1, x1, ocol, rows);
                v4_store_scalar(dst, 2, x2, ocol, rows);
                v4_store_scalar(dst, 3, x3, ocol, rows);
            }
        }
        p += 1;
    }
}

/// v4's load of the group at input row `r`, columns `c..c+3`: one 16-byte load (`VEC`), or
/// up to four guarded 4-byte loads. Elements outside the matrix are zero. `load4_ro`, not
/// `load4_nc`: not allocating in L1 reads a transpose's tile rows 3 % slower (E15).
#[inline(always)]
unsafe fn v4_load<const VEC: bool, const GUARD: bool>(
    input: *const f32,
    r: u32,
    c: u32,
    rows: u32,
    cols: u32,
) -> Vec4<f32> {
    if GUARD && r >= rows {
        return Vec4([0.0; 4]);
    }
    if VEC {
        if !GUARD || c < cols {
            load4_ro(input.add(at(r, c, cols)) as *const Vec4<f32>)
        } else {
            Vec4([0.0; 4])
        }
    } else {
        let one = |i: u32| {
            if c + i < cols {
                *input.add(at(r, c + i, cols))
            } else {
                0.0
            }
        };
        Vec4([one(0), one(1), one(2), one(3)])
    }
}

/// `dst[j] = x` if output column `ocol + j` is inside the matrix (v4's 4-byte path).
#[inline(always)]
unsafe fn v4_store_scalar(dst: *mut f32, j: u32, x: f32, ocol: u32, rows: u32) {
    if ocol + j < rows {
        *dst.add(j as usize) = x;
    }
}

kernel! {
    /// v4 entry: the 16-byte path when every group is aligned (`rows % 4 == 0`,
    /// `cols % 4 == 0`, both pointers 16-byte aligned), else the 4-byte path. The test is the
    /// same for every block (a uniform branch).
    ///
    /// # Launch
    /// Block `(V4_THREADS, 1)` = (256, 1); grid `(ceil(rows / 64), ceil(cols / 64))` (x walks
    /// down the input's tile columns); dynamic
    /// shared memory `64 × 64 × 4` = 16384 bytes.
    fn transpose_v4_f32(input: *const f32, output: *mut f32, rows: u32, cols: u32) {
        let aligned = (input as u64 | output as u64) % 16 == 0;
        if aligned && rows % 4 == 0 && cols % 4 == 0 {
            transpose_v4::<true>(input, output, rows, cols)
        } else {
            transpose_v4::<false>(input, output, rows, cols)
        }
    }
}
