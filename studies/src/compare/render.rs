//! The report as text (default), and as CSV: one line per compared quantity
//! (`section,pair,metric,a,b,change_pct,verdict,predicted_change_pct,text`; a hot line's a and b
//! are its shares of the samples, in percent). JSON is the report serialized.

use super::claims::fmt_change;
use super::{Report, Source};
use anyhow::Result;
use comfy_table::{CellAlignment, Table, presets::ASCII_MARKDOWN};
use std::fmt::Write as _;

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN).set_header(header.to_vec());
    t
}

/// Right-aligns every column but the first.
fn numeric(t: &mut Table) {
    for i in 1..t.column_count() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

fn num(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(x) => format!("{x:.digits$}"),
        None => "-".into(),
    }
}

/// The header lines: what was compared, how, by which rule.
fn header(r: &Report) -> String {
    let mut s = format!("# compare: {} (A) vs {} (B)\n", r.a, r.b);
    match &r.source {
        Source::Live {
            rounds,
            seconds,
            max_seconds,
            stopped,
            folder,
            commit,
            device,
        } => {
            let _ = writeln!(
                s,
                "# live: {rounds} round(s) of lab bench in {seconds:.0} s ({}; limit {max_seconds:.0} s), \
                 A and B each a fresh process, their order alternating; runs in {folder}",
                if stopped == "settled" {
                    "every verdict held twice in a row"
                } else {
                    "stopped at the time limit"
                }
            );
            let _ = writeln!(s, "# commit {commit}, {device}");
        }
        Source::Files { a, b } => {
            let sides = if a.path == b.path {
                vec![("A, B", a)]
            } else {
                vec![("A", a), ("B", b)]
            };
            for (side, f) in sides {
                let _ = writeln!(
                    s,
                    "# {side}: {} (commit {}, {}, {})",
                    f.path,
                    f.commit.chars().take(10).collect::<String>(),
                    f.date,
                    f.device
                );
            }
        }
    }
    let _ = writeln!(s, "# date {}", r.date);
    let _ = writeln!(s, "# rule: {}", r.rule);
    s
}

/// The report as text.
pub fn text(r: &Report) -> String {
    let mut s = header(r);
    let predicted = r.time.iter().any(|t| t.predicted_delta_pct.is_some());
    let mut cols = vec![
        "pair",
        "A median µs",
        "A range",
        "B median µs",
        "B range",
        "change",
        "verdict",
        "rounds",
    ];
    if predicted {
        cols.insert(6, "predicted");
    }
    let mut t = table(&cols);
    for x in &r.time {
        let rounds: Vec<&str> = x.rounds.iter().map(|j| j.verdict.name()).collect();
        let mut row = vec![
            x.label.clone(),
            format!("{:.2}", x.a.median_us),
            format!("{:.2}%", x.a.spread_pct()),
            format!("{:.2}", x.b.median_us),
            format!("{:.2}%", x.b.spread_pct()),
            format!("{} ({:.3}x)", fmt_change(x.delta_pct), x.speedup),
            x.verdict.name().to_uppercase(),
            rounds.join(", "),
        ];
        if predicted {
            row.insert(6, x.predicted_delta_pct.map_or("-".into(), fmt_change));
        }
        t.add_row(row);
    }
    numeric(&mut t);
    let _ = writeln!(
        s,
        "\n## Time (all rounds' samples; range = (max - min) / median; change = B against A, (A/B speed))\n\n{t}"
    );

    if !r.counters.is_empty() {
        let _ = writeln!(
            s,
            "\n## Counters ({})",
            r.counters_how.as_deref().unwrap_or("ncu")
        );
        for p in &r.counters {
            let predicted = p.rows.iter().any(|x| x.predicted_change_pct.is_some());
            let mut cols = vec!["metric", "A", "B", "change"];
            if predicted {
                cols.push("predicted");
            }
            let mut t = table(&cols);
            for x in &p.rows {
                let mut row = vec![
                    x.header.clone(),
                    num(x.a, x.digits),
                    num(x.b, x.digits),
                    x.change_pct.map_or("-".into(), fmt_change),
                ];
                if predicted {
                    row.push(x.predicted_change_pct.map_or("-".into(), fmt_change));
                }
                t.add_row(row);
            }
            numeric(&mut t);
            let _ = writeln!(s, "\n### {}\n\n{t}", p.label);
        }
    }

    if !r.predictions.is_empty() {
        let _ = writeln!(s, "\n## Predictions\n");
        for p in &r.predictions {
            let _ = writeln!(
                s,
                "- {} — \"{}\" ({}): {}",
                p.pair, p.prediction, p.source, p.summary
            );
        }
    }

    if !r.code.is_empty() {
        let _ = writeln!(s, "\n## Code (SASS for sm_90: the statistics that differ)");
        for d in &r.code {
            if d.differing.is_empty() {
                let _ = writeln!(
                    s,
                    "\n### {} → {}\n\nevery statistic equal ({})",
                    d.a, d.b, d.equal
                );
                continue;
            }
            let mut t = table(&["statistic", "A", "B"]);
            for (k, a, b) in &d.differing {
                t.add_row(vec![k, a, b]);
            }
            numeric(&mut t);
            let _ = writeln!(
                s,
                "\n### {} → {}\n\n{t}\n({} statistics equal)",
                d.a, d.b, d.equal
            );
        }
    }

    for h in &r.hot_lines {
        let mut t = table(&["line", "A samples", "A %", "B samples", "B %", "text"]);
        for l in &h.lines {
            t.add_row(vec![
                l.location.clone(),
                format!("{:.0}", l.a_samples),
                format!("{:.1}", l.a_pct),
                format!("{:.0}", l.b_samples),
                format!("{:.1}", l.b_pct),
                shorten(&l.text, HOT_TEXT),
            ]);
        }
        numeric(&mut t);
        if let Some(c) = t.column_mut(5) {
            c.set_cell_alignment(CellAlignment::Left);
        }
        let _ = writeln!(
            s,
            "\n## Hot lines: {} (share of each side's warp samples)\n\n{t}",
            h.pair
        );
    }

    if !r.notes.is_empty() {
        let _ = writeln!(s, "\n## Notes\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// Characters of a line's text the hot-line table shows.
const HOT_TEXT: usize = 60;

/// `text` cut to `max` characters, an ellipsis marking the cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    text.chars().take(max - 1).chain(['…']).collect()
}

/// One CSV line.
#[derive(serde::Serialize)]
struct Line<'a> {
    section: &'a str,
    pair: &'a str,
    metric: &'a str,
    /// A number, or a SASS statistic as `asm` writes it (`8×32b`).
    a: String,
    b: String,
    change_pct: Option<f64>,
    /// The time verdict, a prediction's outcome, or empty.
    verdict: &'a str,
    predicted_change_pct: Option<f64>,
    /// A hot line's source text, else empty.
    text: &'a str,
}

/// The report as CSV: time (median, spread, samples), counters, predictions, SASS statistics.
pub fn csv(r: &Report) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let finite = |x: f64| x.is_finite().then_some(x);
    let n = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    for t in &r.time {
        let lines = [
            (
                "median_us",
                t.a.median_us,
                t.b.median_us,
                Some(t.delta_pct),
                t.verdict.name(),
                t.predicted_delta_pct,
            ),
            (
                "spread_pct",
                t.a.spread_pct(),
                t.b.spread_pct(),
                None,
                "",
                None,
            ),
            ("samples", t.a.n as f64, t.b.n as f64, None, "", None),
        ];
        for (metric, a, b, change, verdict, predicted) in lines {
            w.serialize(Line {
                section: "time",
                pair: &t.label,
                metric,
                a: a.to_string(),
                b: b.to_string(),
                change_pct: change,
                verdict,
                predicted_change_pct: predicted,
                text: "",
            })?;
        }
    }
    for p in &r.counters {
        for x in &p.rows {
            w.serialize(Line {
                section: "counter",
                pair: &p.label,
                metric: &x.key,
                a: n(x.a),
                b: n(x.b),
                change_pct: x.change_pct.and_then(finite),
                verdict: "",
                predicted_change_pct: x.predicted_change_pct,
                text: "",
            })?;
        }
    }
    for p in &r.predictions {
        for c in &p.checks {
            let outcome = match c.outcome {
                super::claims::Outcome::Held => "held",
                super::claims::Outcome::Missed => "missed",
                super::claims::Outcome::Unmeasured => "unmeasured",
            };
            w.serialize(Line {
                section: "prediction",
                pair: &p.pair,
                metric: &c.clause,
                a: n(c.a),
                b: n(c.b),
                change_pct: c.change_pct.and_then(finite),
                verdict: outcome,
                predicted_change_pct: None,
                text: "",
            })?;
        }
    }
    for d in &r.code {
        let pair = format!("{} → {}", d.a, d.b);
        for (k, a, b) in &d.differing {
            w.serialize(Line {
                section: "sass",
                pair: &pair,
                metric: k,
                a: a.clone(),
                b: b.clone(),
                change_pct: None,
                verdict: "",
                predicted_change_pct: None,
                text: "",
            })?;
        }
    }
    for h in &r.hot_lines {
        for l in &h.lines {
            w.serialize(Line {
                section: "hot_line",
                pair: &h.pair,
                metric: &l.location,
                a: l.a_pct.to_string(),
                b: l.b_pct.to_string(),
                change_pct: None,
                verdict: "",
                predicted_change_pct: None,
                text: &l.text,
            })?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
