//! What the chapter expects of the transposes under ncu (its section 7).

use super::{Expect, Expectation, Tol};

/// The chapter's expected values for the transposes, its section 7, for a `rows × cols` input
/// (per warp-wide request; totals scale with the matrix).
pub fn transposes(rows: u64, cols: u64) -> Vec<Expectation> {
    use Expect::*;
    // Each element is read out of the tile once, 32 per warp-wide request.
    let requests = (rows * cols) as f64 / 32.0;
    let mut v = Vec::new();
    let mut p = |kernel, column, expect, source, if_off| {
        v.push(Expectation {
            kernel,
            column,
            expect,
            source,
            if_off,
        })
    };
    let coalesced = Near(4.0, Tol::Abs(0.5));
    p(
        "transpose_naive",
        "gld_sectors_per_req",
        coalesced,
        "chapter §7: rows are read coalesced, 4 sectors per request",
        None,
    );
    p(
        "transpose_naive",
        "gst_sectors_per_req",
        Near(32.0, Tol::Abs(1.0)),
        "chapter §7: each lane stores to another row, 32 sectors per request",
        None,
    );
    p(
        "transpose_naive",
        "sh_ld_req",
        Near(0.0, Tol::Abs(0.5)),
        "chapter §7: no shared memory",
        None,
    );
    for (kernel, wavefronts, conflicts, what) in [
        (
            "transpose_tiled",
            32.0,
            31.0 * requests,
            "chapter §7: 32 lanes on one bank, 32 passes, 31 counted as conflicts",
        ),
        (
            "transpose_padded",
            1.0,
            0.0,
            "chapter §7: the padding puts each row one bank later, one pass",
        ),
    ] {
        p(
            kernel,
            "sh_ld_req",
            Near(requests, Tol::Rel(0.01)),
            "chapter §7: rows × cols / 32 shared-load requests (524,288 at 4096²)",
            None,
        );
        p(
            kernel,
            "sh_ld_wavefronts_per_req",
            Near(
                wavefronts,
                Tol::Abs(if wavefronts > 1.0 { 1.0 } else { 0.1 }),
            ),
            what,
            None,
        );
        let tol = if conflicts > 0.0 {
            Tol::Rel(0.05)
        } else {
            Tol::Abs(0.01 * requests)
        };
        p(kernel, "sh_ld_conflicts", Near(conflicts, tol), what, None);
        p(
            kernel,
            "gld_sectors_per_req",
            coalesced,
            "chapter §7: the tile is read along rows",
            None,
        );
        p(
            kernel,
            "gst_sectors_per_req",
            coalesced,
            "chapter §7: the tile is written back along rows",
            None,
        );
        p(
            kernel,
            "sh_st_wavefronts_per_req",
            Near(1.0, Tol::Abs(0.1)),
            "derived: the tile is stored along its rows, consecutive banks",
            None,
        );
    }
    p(
        "transpose_padded",
        "duration_us",
        Lowest,
        "chapter §7: neither uncoalesced stores nor conflicts in the padded one",
        None,
    );
    v
}
