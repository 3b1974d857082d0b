//! The rows loaded again for each pass over them, none of them held: the streamed block's
//! (16-byte loads, `L` vectors a thread at a time) and, in every schedule, the
//! element-by-element path for a misaligned pointer or a row not of whole vectors.

use super::*;

/// One row read in passes, none of it held ([`Streamed`]): each pass over the thread's
/// vectors (`t`, `t + threads`, …) loads them again, `L` at once, each load a coalesced run of
/// the block's threads. The statistic's passes load under `evict_last`, so the L2 keeps the
/// row for the next pass (the first reads it from DRAM, the others from the L2 while the rows
/// in flight fit there), the output pass under `evict_first`, its weights under `evict_last`:
/// torch.compile's looped reduction for RMSNorm f32 at 4096 x 32768 reads its rows so. Any
/// row length; softmax and LayerNorm pass over the row twice before their output, RMSNorm
/// once.
///
/// # Safety
/// As [`super::row_in_registers`].
#[inline(always)]
pub(super) unsafe fn row_streamed<E: Elem, O: Op, G: Group, const L: usize>(
    seat: Seat,
    x: *const E,
    (w, b): (*const E, *const E),
    y: *mut E,
    cols: u32,
    eps: f32,
) {
    let start = seat.row as u64 * cols as u64;
    let x = x.add(start as usize) as *const Vec4<u32>;
    let y = y.add(start as usize) as *mut Vec4<u32>;
    let (w, b) = (w as *const Vec4<u32>, b as *const Vec4<u32>);
    let vectors = cols / E::PER_VEC;
    let step = seat.threads * L as u32;
    let keep = l2_evict_last();
    let pass = |f: &mut dyn FnMut(f32)| {
        let mut first = seat.t;
        while first < vectors {
            let mut v = [[0u32; 4]; L];
            upto16!(L, j, {
                let i = first + j as u32 * seat.threads;
                if i < vectors {
                    v[j] = load4_ro_with(x.add(i as usize), keep).0;
                }
            });
            upto16!(L, j, {
                if first + j as u32 * seat.threads < vectors {
                    upto16!(E::PER_VEC as usize, k, {
                        f(E::get(&v[j], k as u32));
                    });
                }
            });
            first += step;
        }
    };
    let r = O::row_of::<G, _>(seat, pass, cols, eps);
    let last_read = l2_evict_first();
    let mut first = seat.t;
    while first < vectors {
        let (mut v, mut wv, mut bv) = ([[0u32; 4]; L], [[0u32; 4]; L], [[0u32; 4]; L]);
        upto16!(L, j, {
            let i = (first + j as u32 * seat.threads) as usize;
            if i < vectors as usize {
                v[j] = load4_ro_with(x.add(i), last_read).0;
                if O::WEIGHTS >= 1 {
                    wv[j] = load4_ro_with(w.add(i), keep).0;
                }
                if O::WEIGHTS >= 2 {
                    bv[j] = load4_ro_with(b.add(i), keep).0;
                }
            }
        });
        upto16!(L, j, {
            let i = (first + j as u32 * seat.threads) as usize;
            if i < vectors as usize {
                let mut out = [0.0f32; 8];
                upto16!(E::PER_VEC as usize, k, {
                    let k32 = k as u32;
                    out[k] = O::out(
                        r,
                        E::get(&v[j], k32),
                        E::get(&wv[j], k32),
                        E::get(&bv[j], k32),
                    );
                });
                store4(y.add(i), Vec4(E::pack(&out)));
            }
        });
        first += step;
    }
}

/// One row element by element, for a misaligned pointer or `cols` not a multiple of
/// `E::PER_VEC`: the same threads and statistic, but each pass loads the thread's elements
/// again (nothing held: this path adds no registers to the kernel's fast path).
///
/// # Safety
/// As [`super::row_kernel`]'s.
#[inline(always)]
pub(super) unsafe fn row_by_element<E: Elem, O: Op, G: Group, const L: usize>(
    seat: Seat,
    x: *const E,
    (w, b): (*const E, *const E),
    y: *mut E,
    cols: u32,
    eps: f32,
) {
    let start = seat.row as u64 * cols as u64;
    let (x, y) = (x.add(start as usize), y.add(start as usize));
    let per_vec = E::PER_VEC as u64;
    // The thread's vectors, `first`, `first + threads`, … below `end` (a run-time bound, so
    // the loops stay loops and their loads are not hoisted into registers), each element
    // inside the row.
    let chunk = seat.rank * seat.threads * L as u32;
    let vectors = cols / E::PER_VEC + (cols % E::PER_VEC != 0) as u32;
    let end = if G::HOLDS_ROW {
        (chunk + seat.threads * L as u32).min(vectors)
    } else {
        vectors
    };
    let each_element = |f: &mut dyn FnMut(u64)| {
        let mut v = chunk + seat.t;
        while v < end {
            for k in 0..per_vec {
                let e = v as u64 * per_vec + k;
                if e < cols as u64 {
                    f(e);
                }
            }
            v += seat.threads;
        }
    };
    let value = |p: *const E, e: u64| {
        let mut one = [0u32; 4];
        E::place(&mut one, 0, E::load_one(p, e));
        E::get(&one, 0)
    };
    let r = O::row_of::<G, _>(
        seat,
        |f: &mut dyn FnMut(f32)| each_element(&mut |e| f(value(x, e))),
        cols,
        eps,
    );
    each_element(&mut |e| {
        let wv = if O::WEIGHTS >= 1 { value(w, e) } else { 0.0 };
        let bv = if O::WEIGHTS >= 2 { value(b, e) } else { 0.0 };
        E::store_one(y, e, O::out(r, value(x, e), wv, bv));
    });
}
