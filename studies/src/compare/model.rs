//! The model's side of the time table: each pair's A and B predicted by `catalog::model`, and
//! the change it predicts set beside the measured one.
//!
//! Both sides are predicted against one set of roofs, B's results' (`roofs_of`: the run's
//! roofs record, else what its rows measure; A's when B's measured none), so the predicted
//! change is the one the kernels' counts make: two runs of one kernel are predicted the same,
//! whatever their runs' read streams did.

use super::pairs::Pair;
use super::time::TimeRow;
use catalog::Roofs;
use catalog::model::check::{problem_of, roofs_of};
use catalog::model::{Roof, counts, predict};
use catalog::records::{Report as Results, Row};
use std::collections::BTreeSet;

/// Predicted microseconds of `row` against `roofs`; None for a kernel without counts.
/// `Err`: the roofs its counts touch that `roofs` lacks (a prediction without them would be
/// another kernel's).
pub fn predicted_us(row: &Row, sm_count: u32, roofs: &Roofs) -> Option<Result<f64, Vec<Roof>>> {
    let (kernel, problem) = problem_of(row, sm_count)?;
    counts(kernel, &problem)?;
    Some(match predict(kernel, &problem, roofs) {
        Some(p) if p.missing.is_empty() => Ok(p.us()),
        Some(p) => Err(p.missing),
        // No roof its counts touch was measured.
        None => Err(Vec::new()),
    })
}

/// Fills each time row's predicted change, (predicted B − predicted A) / predicted A in
/// percent, from its pair in `pairs` and the results `a` and `b` the sides came from. Returns
/// a note for what could not be predicted: no roofs on either side, or roofs a pair's counts
/// touch that the results did not measure.
pub fn fill(times: &mut [TimeRow], pairs: &[Pair], a: &Results, b: &Results) -> Option<String> {
    let Some(set) = roofs_of(b).or_else(|| roofs_of(a)) else {
        return Some(
            "predicted change: neither side's results measured the roofs (read stream, copy)"
                .into(),
        );
    };
    let mut lacking = BTreeSet::new();
    let mut left_out = 0;
    for t in times.iter_mut() {
        let Some(p) = pairs.iter().find(|p| p.label == t.label) else {
            continue;
        };
        let pa = predicted_us(&p.a, a.device.sm_count, &set.roofs);
        let pb = predicted_us(&p.b, b.device.sm_count, &set.roofs);
        match (pa, pb) {
            (Some(Ok(pa)), Some(Ok(pb))) => t.predicted_delta_pct = Some((pb - pa) / pa * 100.0),
            (Some(x), Some(y)) => {
                left_out += 1;
                lacking.extend(x.err().into_iter().chain(y.err()).flatten());
            }
            // A kernel without counts: nothing to predict.
            _ => {}
        }
    }
    (left_out > 0).then(|| {
        let names: Vec<&str> = lacking.iter().map(|r| r.name()).collect();
        format!(
            "predicted change: left out for {left_out} pair(s): the results did not measure \
             the roofs their counts touch ({})",
            names.join(", ")
        )
    })
}
