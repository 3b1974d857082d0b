//! How right the diagnosis is, measured: each profiled kernel's headline against the verdict
//! the catalogue says it must get (a planted fault's, a fixed twin's "none", the chapter's own
//! kernels'), as a list, a tally and a confusion table (expected verdict × the headline's).

use super::metrics::Profiled;
use catalog::kernels::verdict;
use profiler::diagnose::{self, Kind};
use profiler::table;
use std::collections::BTreeMap;

/// One kernel's verdicts.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Judged {
    /// `coalescing_fault [llvm]`.
    pub label: String,
    /// What the catalogue says (a rule id, `none`, or `memory-bound`: healthy at the DRAM roof).
    pub expected: &'static str,
    /// What the headline names (`none` when it names no fault or note).
    pub got: String,
    pub headline: String,
    pub right: bool,
}

/// The kernels of `rows` the catalogue states a verdict for, judged: each label once (a
/// two-pass kernel's second launch is the same kernel again).
pub fn judge(rows: &[Profiled]) -> Vec<Judged> {
    let mut seen = std::collections::HashSet::new();
    rows.iter()
        .filter(|r| seen.insert(r.label.as_str()))
        .filter_map(|r| {
            let expected = catalog::kernels::expected_verdict(catalogue_kernel(&r.kernel)?)?;
            let d = diagnose::diagnose(r);
            let got = d.verdict.unwrap_or(verdict::NONE).to_string();
            let bound = d
                .findings
                .iter()
                .find(|f| f.kind == Kind::Bound)
                .map_or("", |f| f.verdict.as_str());
            let right = match expected {
                verdict::MEMORY_BOUND => d.verdict.is_none() && bound.starts_with("memory-bound"),
                e => got == e,
            };
            Some(Judged {
                label: r.label.clone(),
                expected,
                got,
                headline: d.headline,
                right,
            })
        })
        .collect()
}

/// The catalogue's kernel a row's name refers to (`reduce_v3_i32` → `reduce_v3`).
fn catalogue_kernel(name: &str) -> Option<&'static catalog::Kernel> {
    catalog::kernels::find(name).or_else(|| {
        catalog::Dtype::ALL
            .iter()
            .find_map(|d| name.strip_suffix(&format!("_{}", d.name())))
            .and_then(catalog::kernels::find)
    })
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

pub fn tally(judged: &[Judged]) -> Tally {
    let mut t = Tally::default();
    for j in judged {
        let healthy = matches!(j.expected, verdict::NONE | verdict::MEMORY_BOUND);
        if healthy {
            t.healthy += 1;
            t.healthy_clean += usize::from(j.right);
        } else {
            t.faults += 1;
            t.faults_named += usize::from(j.right);
        }
        if !j.right && j.got != verdict::NONE {
            t.false_alarms += 1;
        }
    }
    t
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
                j.expected.to_string(),
                j.got.clone(),
                if j.right { "ok" } else { "MISS" }.to_string(),
                j.headline.clone(),
            ]
        })
        .collect();
    out += &table::render_aligned(&headers, &rows, &[1, 2, 3, 4]);
    let t = tally(judged);
    out += &format!(
        "\nFaults named by their headline: {} of {}; healthy kernels left clean: {} of {}; false \
         alarms: {}\n",
        t.faults_named, t.faults, t.healthy_clean, t.healthy, t.false_alarms
    );
    out += &confusion(judged);
    out
}

/// Rows: the expected verdict; columns: the headline's; each cell a count.
pub fn confusion(judged: &[Judged]) -> String {
    let mut cells: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut expected: Vec<&str> = Vec::new();
    let mut got: Vec<&str> = Vec::new();
    for j in judged {
        *cells.entry((j.expected, j.got.as_str())).or_default() += 1;
        if !expected.contains(&j.expected) {
            expected.push(j.expected);
        }
        if !got.contains(&j.got.as_str()) {
            got.push(j.got.as_str());
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
