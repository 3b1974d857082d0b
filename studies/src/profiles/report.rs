//! What the ncu subcommands print: one result struct per table, and one printer per format
//! (fixed-width text, JSON, CSV), plus `profile`'s per-kernel summary.

use super::expected::{self, Check, Expect, Expectation, Status};
use super::metrics::{Column, Profiled};
use super::ncu_csv::Value;
use profiler::diagnose::{self, Diagnosis};
use profiler::fmt;
use profiler::ncu::Counters;
use std::collections::BTreeMap;

/// A column as the report keeps it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ColumnInfo {
    pub key: &'static str,
    pub header: &'static str,
    pub digits: usize,
}

/// One row of a table report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TableRow {
    pub label: String,
    pub kernel: String,
    pub backend: String,
    /// `lab run` checked the result (None: not known, e.g. read back with `--from`).
    pub verified: Option<bool>,
    pub values: BTreeMap<&'static str, Option<f64>>,
    pub top_stall: Option<String>,
    pub regime: Option<String>,
    /// The headline, the ranked findings, the negligible and the silent rules.
    pub diagnosis: Diagnosis,
    /// Every metric ncu reported for this launch.
    pub metrics: BTreeMap<String, Value>,
}

/// A whole table: `ncu-table` or `ncu-transpose`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TableReport {
    pub kind: String,
    pub title: String,
    pub notes: Vec<String>,
    pub columns: Vec<ColumnInfo>,
    pub rows: Vec<TableRow>,
    pub checks: Vec<Check>,
}

impl TableReport {
    pub fn build(
        kind: &str,
        title: String,
        notes: Vec<String>,
        rows: &[Profiled],
        columns: &[Column],
        preds: &[Expectation],
    ) -> TableReport {
        let checks = expected::evaluate(rows, columns, preds);
        TableReport {
            kind: kind.to_string(),
            title,
            notes,
            columns: columns
                .iter()
                .map(|c| ColumnInfo {
                    key: c.key,
                    header: c.header,
                    digits: c.digits,
                })
                .collect(),
            rows: rows
                .iter()
                .map(|r| TableRow {
                    label: r.label.clone(),
                    kernel: r.kernel.clone(),
                    backend: r.backend.clone(),
                    verified: r.verified,
                    values: columns.iter().map(|c| (c.key, (c.get)(r))).collect(),
                    top_stall: r.dominant_stall().map(|(s, _, _)| s.to_string()),
                    regime: diagnose::regime_of(r),
                    diagnosis: diagnose::diagnose(r),
                    metrics: r.profiled.metrics.clone(),
                })
                .collect(),
            checks,
        }
    }

    fn check(&self, label: &str, key: &str) -> Option<&Check> {
        self.checks
            .iter()
            .find(|c| c.label == label && c.column == key)
    }

    /// The text table, the expectations checked, and a one-line diagnosis per kernel.
    pub fn text(&self, preds: &[Expectation]) -> String {
        let mut out = format!("{}\n", self.title);
        for n in &self.notes {
            out += &format!("{n}\n");
        }
        out += "\n";
        let mut headers = vec!["kernel".to_string()];
        headers.extend(self.columns.iter().map(|c| c.header.to_string()));
        headers.extend(["top stall".to_string(), "regime".to_string()]);
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                let mut cells = vec![match r.verified {
                    Some(false) => format!("{} FAILED", r.label),
                    _ => r.label.clone(),
                }];
                for c in &self.columns {
                    let v = r.values.get(c.key).copied().flatten();
                    let mut cell = v.map_or("n/a".to_string(), |x| fmt_digits(x, c.digits));
                    if let Some(ch) = self.check(&r.label, c.key) {
                        if let Some(p) = expected_value(preds, &r.kernel, c.key) {
                            cell += &format!(" ({})", fmt::value(p));
                        }
                        if ch.status == Status::Off {
                            cell += "!";
                        }
                    }
                    cells.push(cell);
                }
                let mut stall = r.top_stall.clone().unwrap_or_else(|| "n/a".into());
                if self
                    .check(&r.label, "top_stall")
                    .is_some_and(|c| c.status == Status::Off)
                {
                    stall += "!";
                }
                cells.push(stall);
                cells.push(r.regime.clone().unwrap_or_else(|| "n/a".into()));
                cells
            })
            .collect();
        out += &profiler::table::render(&headers, &rows);
        out += &checks_text(&self.checks);
        out += "\nDiagnosis (what binds each kernel and the first fix; `cargo xtask profile --kernel K` explains one):\n";
        for r in &self.rows {
            out += &format!("  {}: {}\n", r.label, r.diagnosis.headline);
        }
        out
    }

    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("reports serialize")
    }

    /// Long format: one line per (kernel, column), with its expected value where there is one.
    pub fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let header = [
            "table", "label", "kernel", "backend", "column", "value", "expected", "status",
            "source", "reason",
        ];
        w.write_record(header).expect("writing to memory");
        let mut record = |r: &TableRow, key: &str, value: String| {
            let ch = self.check(&r.label, key);
            w.write_record([
                self.kind.as_str(),
                &r.label,
                &r.kernel,
                &r.backend,
                key,
                &value,
                ch.map_or("", |c| &c.expected),
                ch.map_or("", |c| status_word(c.status)),
                ch.map_or("", |c| &c.source),
                ch.and_then(|c| c.reason.as_deref()).unwrap_or(""),
            ])
            .expect("writing to memory");
        };
        for r in &self.rows {
            for c in &self.columns {
                let v = r.values.get(c.key).copied().flatten();
                record(r, c.key, v.map_or(String::new(), |x| x.to_string()));
            }
            record(r, "top_stall", r.top_stall.clone().unwrap_or_default());
            record(r, "regime", r.regime.clone().unwrap_or_default());
        }
        drop(record);
        String::from_utf8(w.into_inner().expect("in memory")).expect("utf-8")
    }
}

/// The number a `Near` expectation asks for, for the cell annotation.
fn expected_value(preds: &[Expectation], kernel: &str, key: &str) -> Option<f64> {
    preds
        .iter()
        .find(|p| p.kernel == kernel && p.column == key)
        .and_then(|p| match p.expect {
            Expect::Near(v, _) => Some(v),
            _ => None,
        })
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Held => "held",
        Status::Off => "OFF",
        Status::Missing => "n/a",
    }
}

/// `94.0` with `digits` decimals; integers grouped by thousands.
pub fn fmt_digits(x: f64, digits: usize) -> String {
    if digits == 0 {
        fmt::thousands(x.round() as i64)
    } else {
        format!("{x:.digits$}")
    }
}

/// Every check, one per line, deviations with their known reason.
pub fn checks_text(checks: &[Check]) -> String {
    if checks.is_empty() {
        return String::new();
    }
    let (held, off, missing) = expected::tally(checks);
    let mut out = format!(
        "\nPredictions vs measured: {held} held, {off} off, {missing} not measured \
         (value (prediction) in the table; ! = outside the stated tolerance)\n"
    );
    // Deviations first: they are the findings.
    let mut sorted: Vec<&Check> = checks.iter().collect();
    sorted.sort_by_key(|c| match c.status {
        Status::Off => 0,
        Status::Missing => 1,
        Status::Held => 2,
    });
    let rows: Vec<Vec<String>> = sorted
        .iter()
        .map(|c| {
            vec![
                format!("  {}", status_word(c.status)),
                c.label.clone(),
                c.header.clone(),
                c.measured_text.clone(),
                format!("expected {}", c.expected),
                match &c.reason {
                    Some(r) => format!("{} — {r}", c.source),
                    None => c.source.clone(),
                },
            ]
        })
        .collect();
    // Left-aligned throughout: this is a list, not a numeric table.
    let widths: Vec<usize> = (0..6)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for r in rows {
        let mut line = String::new();
        for (i, cell) in r.iter().enumerate() {
            line += cell;
            if i < 5 {
                line += &" ".repeat(widths[i] - cell.chars().count() + 2);
            }
        }
        out += line.trim_end();
        out += "\n";
    }
    out
}

/// `profile`'s summary of one lab kernel: the verdict first, then the numbers and the ranked
/// findings (see [`profiler::report::kernel_text`]), marked when its result was wrong.
pub fn profile_text(row: &Profiled, d: &Diagnosis) -> String {
    let title = match row.verified {
        Some(false) => format!("{} — result FAILED verification", row.label),
        _ => row.label.clone(),
    };
    let launch = format!(
        "{}: grid {}, block {}, {} registers/thread",
        row.profiled.kernel,
        row.profiled.grid,
        row.profiled.block,
        row.m(profiler::ncu::metrics::REGISTERS)
            .map_or("n/a".into(), fmt::value)
    );
    profiler::report::kernel_text(&title, &launch, row, d)
}
