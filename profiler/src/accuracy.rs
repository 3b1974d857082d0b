//! How right the diagnosis is, measured: each kernel's headline against the verdict a truth
//! states for it (a planted fault's rule, `none` for a healthy kernel, `memory-bound` for one
//! healthy at the DRAM roof), as a list, a tally and a confusion table.
//!
//! A truth file is CSV with a header: `kernel,expected,twin,mechanism`. `kernel` is a
//! substring of the profiled kernel's name that matches exactly one launch; `expected` is a
//! rule id, `none` or `memory-bound`; `twin` names the kernel it is paired with (one change
//! apart), if any; `mechanism` says why, in one sentence: the quantity, its minimum and what
//! binds. Truths come from the mechanism and from timing the twin, never from the rules'
//! output.

use crate::diagnose::{self, Diagnosis, Kind};
use crate::document::{ReadDiagnosis, ReadKernel};
use crate::program::Kernel;
use crate::table;
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;

/// The verdict of a healthy kernel: no fault worth [`diagnose::MIN_COST`].
pub const NONE: &str = "none";
/// Healthy at the DRAM roof: no fault, and the regime says memory-bound.
pub const MEMORY_BOUND: &str = "memory-bound";

/// One kernel's stated truth.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct Truth {
    pub kernel: String,
    pub expected: String,
    #[serde(default)]
    pub twin: String,
    #[serde(default)]
    pub mechanism: String,
}

/// Reads a truth file, checking every expected verdict names a rule, `none` or
/// `memory-bound`.
pub fn read_truths(text: &str) -> Result<Vec<Truth>> {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    for (i, row) in reader.deserialize::<Truth>().enumerate() {
        let t = row.with_context(|| format!("truth row {}", i + 2))?;
        if t.expected != NONE && t.expected != MEMORY_BOUND && diagnose::rule(&t.expected).is_none()
        {
            bail!(
                "truth row {} ({}): '{}' is no rule id, `none` or `memory-bound` (see \
                 `cargo xtask profile --rules`)",
                i + 2,
                t.kernel,
                t.expected
            );
        }
        out.push(t);
    }
    Ok(out)
}

/// One kernel's verdicts.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Judged {
    /// The kernel, as the report lists it.
    pub label: String,
    /// What the truth says (a rule id, `none`, or `memory-bound`).
    pub expected: String,
    /// What the headline names (`none` when it names no fault or note).
    pub got: String,
    pub headline: String,
    pub right: bool,
}

/// What a grader reads of a diagnosis: the rule the headline names and the regime.
#[derive(Clone, Debug)]
pub struct Verdicts {
    pub verdict: Option<String>,
    pub bound: Option<String>,
    pub headline: String,
}

impl From<&Diagnosis> for Verdicts {
    fn from(d: &Diagnosis) -> Verdicts {
        Verdicts {
            verdict: d.verdict.map(str::to_string),
            bound: d
                .findings
                .iter()
                .find(|f| f.kind == Kind::Bound)
                .map(|f| f.verdict.clone()),
            headline: d.headline.clone(),
        }
    }
}

impl From<&ReadDiagnosis> for Verdicts {
    fn from(d: &ReadDiagnosis) -> Verdicts {
        Verdicts {
            verdict: d.verdict.clone(),
            bound: d
                .findings
                .iter()
                .find(|f| f.kind == "bound")
                .map(|f| f.verdict.clone()),
            headline: d.headline.clone(),
        }
    }
}

/// Whether `v` gets `expected` right.
pub fn right(expected: &str, v: &Verdicts) -> bool {
    match expected {
        MEMORY_BOUND => {
            v.verdict.is_none()
                && v.bound
                    .as_deref()
                    .is_some_and(|b| b.starts_with("memory-bound"))
        }
        e => v.verdict.as_deref().unwrap_or(NONE) == e,
    }
}

/// `v` judged against `expected`, under `label`.
pub fn judged(label: &str, expected: &str, v: &Verdicts) -> Judged {
    Judged {
        label: label.to_string(),
        expected: expected.to_string(),
        got: v.verdict.clone().unwrap_or_else(|| NONE.to_string()),
        headline: v.headline.clone(),
        right: right(expected, v),
    }
}

/// Every truth judged against the one kernel its name matches (`kernels`: name and
/// verdicts); an error names a truth that matches none or several (the capture and the
/// truths disagree).
pub fn judge_named(kernels: &[(String, Verdicts)], truths: &[Truth]) -> Result<Vec<Judged>> {
    truths
        .iter()
        .map(|t| {
            let matches: Vec<&(String, Verdicts)> = kernels
                .iter()
                .filter(|(name, _)| name.contains(&t.kernel))
                .collect();
            match matches.as_slice() {
                [(_, v)] => Ok(judged(&t.kernel, &t.expected, v)),
                [] => bail!(
                    "truth '{}': no profiled kernel's name contains it",
                    t.kernel
                ),
                many => bail!(
                    "truth '{}': {} profiled kernels' names contain it (make it longer)",
                    t.kernel,
                    many.len()
                ),
            }
        })
        .collect()
}

/// The truths judged against diagnosed launches.
pub fn judge(kernels: &[Kernel], truths: &[Truth]) -> Result<Vec<Judged>> {
    let named: Vec<(String, Verdicts)> = kernels
        .iter()
        .map(|k| (k.name.clone(), Verdicts::from(&k.diagnosis)))
        .collect();
    judge_named(&named, truths)
}

/// The truths judged against a `profile --format json` document's kernels.
pub fn judge_document(kernels: &[ReadKernel], truths: &[Truth]) -> Result<Vec<Judged>> {
    let named: Vec<(String, Verdicts)> = kernels
        .iter()
        .map(|k| (k.name.clone(), Verdicts::from(&k.diagnosis)))
        .collect();
    judge_named(&named, truths)
}

/// The tally: faults named by their headline, healthy kernels left clean, and false alarms
/// (a healthy kernel given a fault, or a fault given the wrong one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    pub faults: usize,
    pub faults_named: usize,
    pub healthy: usize,
    pub healthy_clean: usize,
    pub false_alarms: usize,
}

impl Tally {
    /// Every kernel right.
    pub fn all_right(&self) -> bool {
        self.faults_named == self.faults && self.healthy_clean == self.healthy
    }
}

pub fn tally(judged: &[Judged]) -> Tally {
    let mut t = Tally::default();
    for j in judged {
        let healthy = j.expected == NONE || j.expected == MEMORY_BOUND;
        if healthy {
            t.healthy += 1;
            t.healthy_clean += usize::from(j.right);
        } else {
            t.faults += 1;
            t.faults_named += usize::from(j.right);
        }
        if !j.right && j.got != NONE {
            t.false_alarms += 1;
        }
    }
    t
}

/// The tally as one line.
pub fn tally_line(t: &Tally) -> String {
    format!(
        "Faults named by their headline: {} of {}; healthy kernels left clean: {} of {}; false \
         alarms: {}",
        t.faults_named, t.faults, t.healthy_clean, t.healthy, t.false_alarms
    )
}

/// The list, the tally, and the confusion table.
pub fn text(judged: &[Judged], how: &str) -> String {
    let mut out = format!("accuracy: {how}\n\n");
    let headers: Vec<String> = ["kernel", "expected", "headline's verdict", "", "headline"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = judged
        .iter()
        .map(|j| {
            vec![
                j.label.clone(),
                j.expected.clone(),
                j.got.clone(),
                if j.right { "ok" } else { "MISS" }.to_string(),
                j.headline.clone(),
            ]
        })
        .collect();
    out += &table::render_aligned(&headers, &rows, &[1, 2, 3, 4]);
    out += &format!("\n{}\n", tally_line(&tally(judged)));
    out += &confusion(judged);
    out
}

/// Rows: the expected verdict; columns: the headline's; each cell a count.
pub fn confusion(judged: &[Judged]) -> String {
    let mut cells: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut expected: Vec<&str> = Vec::new();
    let mut got: Vec<&str> = Vec::new();
    for j in judged {
        *cells
            .entry((j.expected.as_str(), j.got.as_str()))
            .or_default() += 1;
        if !expected.contains(&j.expected.as_str()) {
            expected.push(&j.expected);
        }
        if !got.contains(&j.got.as_str()) {
            got.push(&j.got);
        }
    }
    let mut headers = vec!["expected \\ headline".to_string()];
    headers.extend(got.iter().map(|g| g.to_string()));
    let rows: Vec<Vec<String>> = expected
        .iter()
        .map(|e| {
            let mut r = vec![e.to_string()];
            r.extend(got.iter().map(|g| {
                cells
                    .get(&(*e, *g))
                    .map_or(".".to_string(), |n| n.to_string())
            }));
            r
        })
        .collect();
    format!(
        "\nConfusion (rows: expected; columns: the headline's verdict):\n{}",
        table::render(&headers, &rows)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truths_name_rules_and_a_wrong_one_is_refused() {
        let ok = "kernel,expected,twin,mechanism\n# a comment\nsgemm,tensor-cores,hgemm,FFMA\n\
                  copy, memory-bound ,,DRAM\n";
        let t = read_truths(ok).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].expected, "memory-bound");
        let err = read_truths("kernel,expected\nk,slow\n").unwrap_err();
        assert!(
            format!("{err:#}").contains("'slow' is no rule id"),
            "{err:#}"
        );
    }

    #[test]
    fn the_tally_counts_misses_and_false_alarms() {
        let j = |expected: &str, got: &str, right: bool| Judged {
            label: "k".into(),
            expected: expected.into(),
            got: got.into(),
            headline: String::new(),
            right,
        };
        let t = tally(&[
            j("coalescing", "coalescing", true),
            j("atomics", "latency", false),
            j("none", "none", true),
            j("memory-bound", "spills", false),
        ]);
        assert_eq!(
            t,
            Tally {
                faults: 2,
                faults_named: 1,
                healthy: 2,
                healthy_clean: 1,
                false_alarms: 2
            }
        );
        assert!(!t.all_right());
    }
}
