//! Each row's prediction from the run's measured roofs (`catalog::model`): the binding roof,
//! the predicted median, and the measured median as a percentage of it; and the headline's
//! one line per kernel family on how many rows the model predicted within 10 %.

use super::{Cache, Report, Row, Status};
use catalog::Family;
use catalog::model::check::{WITHIN, problem_of};
use catalog::model::{holds, predict_in_run};

/// Fills `bound`, `predicted_us` and `pct_of_bound` of every row the model covers (a
/// catalogue kernel with counts, in a run that measured its roofs), with the read and copy
/// roofs at the row's own size where the run measured the stream there. A hot row whose data fits
/// in the L2 gets none: it reads from the L2, and the DRAM roofs do not bound it.
pub fn fill_predictions(r: &mut Report) {
    let Some(roofs) = r.roofs.clone() else {
        return;
    };
    let (sm_count, l2_bytes) = (r.device.sm_count, r.device.l2_bytes);
    let measured = r.rows.clone();
    for row in &mut r.rows {
        let Some((kernel, problem)) = problem_of(row, sm_count) else {
            continue;
        };
        let Some(p) = predict_in_run(kernel, &problem, &roofs, &measured, row.cache) else {
            continue;
        };
        if row.cache == Cache::Hot && p.counts.footprint() <= l2_bytes {
            continue;
        }
        row.bound = Some(p.bound.name().to_string());
        row.predicted_us = Some(p.us());
        row.pct_of_bound = row
            .median_us
            .filter(|_| row.status == Status::Ok)
            .map(|m| p.pct_of(m));
    }
}

/// Whether a predicted, measured row is within 10 % of its prediction (None: no prediction).
pub fn held(r: &Row) -> Option<bool> {
    let (p, m) = (
        r.predicted_us?,
        r.median_us.filter(|_| r.status == Status::Ok)?,
    );
    Some(holds(p, m, WITHIN))
}

/// `76.1!`: the `% of bound` cell, with `!` when the model misses by more than 10 %.
pub fn pct_cell(r: &Row) -> String {
    match (r.pct_of_bound, held(r)) {
        (Some(p), Some(false)) => format!("{p:.1}!"),
        (Some(p), _) => format!("{p:.1}"),
        _ => "-".into(),
    }
}

/// The headline's model lines, one per kernel family with predicted rows: how many held, the
/// bounds, and the misses (at most [`MISSES_SHOWN`] named).
pub fn headline_lines(rows: &[Row], cache: Cache) -> Vec<String> {
    let mut out = Vec::new();
    for family in [Family::Reduce, Family::Transpose] {
        let predicted: Vec<&Row> = rows
            .iter()
            .filter(|r| r.section == family && r.cache == cache)
            .filter(|r| held(r).is_some())
            .collect();
        if predicted.is_empty() {
            continue;
        }
        let held_n = predicted.iter().filter(|r| held(r) == Some(true)).count();
        let mut bounds: Vec<(String, Vec<String>)> = Vec::new();
        for r in &predicted {
            let b = r.bound.clone().unwrap_or_default();
            let k = short(&r.kernel);
            match bounds.iter_mut().find(|(x, _)| *x == b) {
                Some((_, ks)) if !ks.contains(&k) => ks.push(k),
                Some(_) => {}
                None => bounds.push((b, vec![k])),
            }
        }
        let bounds: Vec<String> = bounds
            .iter()
            .map(|(b, ks)| format!("{b} ({})", ks.join(", ")))
            .collect();
        let misses: Vec<String> = predicted
            .iter()
            .filter(|r| held(r) == Some(false))
            .map(|r| {
                format!(
                    "{} [{}] {} {} {:.0}%",
                    r.kernel,
                    r.backend,
                    r.dtype,
                    r.size,
                    r.pct_of_bound.unwrap_or(0.0)
                )
            })
            .collect();
        let mut line = format!(
            "model, {} ({}): {held_n} of {} rows within 10% of the predicted time; bound: {}",
            family.name(),
            cache.label(),
            predicted.len(),
            bounds.join(", ")
        );
        if !misses.is_empty() {
            let shown = misses.len().min(MISSES_SHOWN);
            line += &format!("; misses (% of bound): {}", misses[..shown].join(", "));
            if misses.len() > shown {
                line += &format!(" and {} more", misses.len() - shown);
            }
        }
        out.push(line);
    }
    out
}

/// Misses a headline line names before it counts the rest.
pub const MISSES_SHOWN: usize = 6;

/// `v3` for `reduce_v3`, `padded` for `transpose_padded`: the bound lists stay short.
fn short(kernel: &str) -> String {
    ["reduce_", "transpose_"]
        .iter()
        .find_map(|p| kernel.strip_prefix(p))
        .unwrap_or(kernel)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::super::{Config, Device, Passed, SCHEMA_VERSION, finish, json, table};
    use super::*;
    use crate::timing::Samples;
    use catalog::records::Clocks;
    use catalog::{Backend, Dtype, Roofs};

    fn reduce(kernel: &str, dtype: Dtype, n: u64, us: f64) -> Row {
        let size = catalog::model::Size::Vector(n).label();
        Row::new(Family::Reduce, kernel, Backend::Llvm, dtype, n, size, n * 4)
            .passed(&Samples::new(vec![us * 1e-3]), "exact")
    }

    /// Round roofs: 4 TB/s read, 2 ns per red, 5 µs per launch.
    fn roofs() -> Roofs {
        Roofs {
            read_bytes_per_s: 4e12,
            copy_bytes_per_s: 4e12,
            fma_flop_per_s: 6e13,
            atomic_same_ns: Some(2.0),
            launch_s: Some(5e-6),
            ..Roofs::default()
        }
    }

    fn report(rows: Vec<Row>, roofs: Option<Roofs>) -> Report {
        let mut r = Report {
            schema_version: SCHEMA_VERSION,
            tool: "lab bench".into(),
            date: "2026-11-30T12:00:00Z".into(),
            command_line: "lab bench".into(),
            commit: "0123456789abcdef".into(),
            device: Device {
                name: "NVIDIA H200".into(),
                sm_count: 132,
                l2_bytes: 60 << 20,
                ..Device::default()
            },
            clocks_before: Clocks::default(),
            clocks_after: Clocks::default(),
            config: Config::default(),
            rows,
            headline: Vec::new(),
            failed: 0,
            roofs,
        };
        finish(&mut r);
        r
    }

    #[test]
    fn rows_get_their_bound_prediction_and_percentage() {
        let n = 1u64 << 28;
        // v3: 2^20 reds × 2 ns + 5 µs = 2102.152 µs; measured 2000 µs: 105.1 %, within.
        // v4: read 268.4 µs + 131,072 × 2 / 3.10 ns + 5 µs = 358.0 µs; measured 400: a miss.
        let r = report(
            vec![
                reduce("reduce_v3", Dtype::F32, n, 2000.0),
                reduce("reduce_v4", Dtype::F32, n, 400.0),
                // Fits in the L2, hot: read from there, not predicted.
                reduce("reduce_v6", Dtype::F32, 1 << 20, 7.0),
            ],
            Some(roofs()),
        );
        let v3 = &r.rows[0];
        assert_eq!(v3.bound.as_deref(), Some("atomic"));
        let want = (1u64 << 20) as f64 * 2e-3 + 5.0;
        assert!((v3.predicted_us.unwrap() - want).abs() < 1e-6);
        assert!((v3.pct_of_bound.unwrap() - want / 2000.0 * 100.0).abs() < 1e-9);
        assert_eq!(held(v3), Some(true));
        let v4 = &r.rows[1];
        assert_eq!(v4.bound.as_deref(), Some("read+red"));
        assert_eq!(held(v4), Some(false));
        assert!(pct_cell(v4).ends_with('!'), "{}", pct_cell(v4));
        assert_eq!(
            (r.rows[2].bound.clone(), r.rows[2].predicted_us),
            (None, None)
        );

        let t = table(&r, super::super::RoofRows::All);
        assert!(t.contains(" bound |") && t.contains("% of bound |"), "{t}");
        assert!(t.contains("89.5!"), "{t}");
        assert!(
            t.contains("model: predicted = launches x launch time"),
            "{t}"
        );
        let line = r
            .headline
            .iter()
            .find(|h| h.starts_with("model, reduce (hot L2)"))
            .unwrap();
        assert!(line.contains("1 of 2 rows within 10%"), "{line}");
        assert!(
            line.contains("atomic (v3)") && line.contains("read+red (v4)"),
            "{line}"
        );
        assert!(
            line.contains("misses (% of bound): reduce_v4 [llvm] f32 2^28 89%"),
            "{line}"
        );
        let j: serde_json::Value = serde_json::from_str(&json(&r)).unwrap();
        assert_eq!(j["rows"][0]["bound"], "atomic");
    }

    #[test]
    fn a_row_at_a_size_the_read_stream_measured_is_predicted_from_that_stream() {
        let stream = |n: u64, us: f64| {
            let size = catalog::model::Size::Vector(n).label();
            Row::new(
                Family::Ceiling,
                "read_stream",
                Backend::Llvm,
                Dtype::F32,
                n,
                size,
                n * 4,
            )
            .passed(&Samples::new(vec![us * 1e-3]), "exact")
        };
        let (small, large) = (1u64 << 24, 1u64 << 28);
        // One-wave v6: 1056 reds, under the slice's share: the prediction is launch + read.
        let r = report(
            vec![
                stream(small, 22.0),
                reduce("reduce_v6", Dtype::F32, small, 22.5),
                reduce("reduce_v6", Dtype::F32, large, 280.0),
            ],
            Some(roofs()),
        );
        // 2^24: the stream's own 22 µs (5 µs launch + 17 µs at its own rate).
        assert_eq!(r.rows[1].bound.as_deref(), Some("read"));
        assert!((r.rows[1].predicted_us.unwrap() - 22.0).abs() < 1e-6);
        // 2^28: no stream row there, the run's roof: 2^30 bytes at 4 TB/s + 5 µs.
        let want = (large * 4) as f64 / 4e12 * 1e6 + 5.0;
        assert!((r.rows[2].predicted_us.unwrap() - want).abs() < 1e-6);
    }

    #[test]
    fn a_run_without_roofs_predicts_nothing_and_says_nothing() {
        let r = report(vec![reduce("reduce_v3", Dtype::F32, 1 << 28, 2000.0)], None);
        assert_eq!(r.rows[0].predicted_us, None);
        assert!(!table(&r, super::super::RoofRows::All).contains("model:"));
        assert!(!r.headline.iter().any(|h| h.starts_with("model")));
    }
}
