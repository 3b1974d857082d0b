//! The code side: the SASS statistics of A and B where they differ (through `asm`'s counts),
//! and the hot-line diff: two kernels' samples per source line, side by side.

use super::Source;
use super::pairs::{Axis, Pair};
use crate::asm::report::{KernelStats, kernel_stats};
use crate::asm::{self, Build};
use crate::profiles::attribution;
use crate::util;
use anyhow::{Result, bail};
use catalog::Backend;
use catalog::records::Row;
use profiler::source;
use serde::Serialize;
use std::path::Path;

/// The SASS statistics of one pair of kernels that differ.
#[derive(Clone, Debug, Serialize)]
pub struct CodeDiff {
    /// `reduce_v3_f32 [llvm]`.
    pub a: String,
    pub b: String,
    /// (statistic, A, B) for each statistic that differs.
    pub differing: Vec<(String, String, String)>,
    /// How many statistics are equal.
    pub equal: usize,
}

/// The statistics compared: `asm --stats`' SASS counts, then the resources ptxas reports.
pub fn statistics(k: &KernelStats) -> Vec<(String, String)> {
    let mut m: Vec<(String, String)> = k
        .sass
        .metrics()
        .into_iter()
        .map(|(name, v)| (format!("SASS {name}"), v))
        .collect();
    let r = &k.resources;
    m.push(("registers".into(), r.registers.to_string()));
    m.push(("stack".into(), r.stack.to_string()));
    m.push((
        "spill stores/loads".into(),
        format!("{}/{}", r.spill_stores, r.spill_loads),
    ));
    m.push(("unrolled".into(), k.unrolled.to_string()));
    m
}

/// A's and B's statistics, the differing ones listed.
pub fn diff(a: &KernelStats, b: &KernelStats) -> CodeDiff {
    let (sa, sb) = (statistics(a), statistics(b));
    let mut differing = Vec::new();
    let mut equal = 0;
    for (name, x) in &sa {
        match sb.iter().find(|(n, _)| n == name) {
            Some((_, y)) if y == x => equal += 1,
            Some((_, y)) => differing.push((name.clone(), x.clone(), y.clone())),
            None => differing.push((name.clone(), x.clone(), "-".into())),
        }
    }
    for (name, y) in sb.iter().filter(|(n, _)| !sa.iter().any(|(m, _)| m == n)) {
        differing.push((name.clone(), "-".into(), y.clone()));
    }
    CodeDiff {
        a: a.label(),
        b: b.label(),
        differing,
        equal,
    }
}

/// A PTX entry point from one compiler: (`reduce_v3_f32`, llvm).
pub type Entry = (String, Backend);

/// A kernel's samples per source line: (`file:line`, samples).
pub type LineSamples = Vec<(String, f64)>;

/// One kernel's lines off a capture's Source page: its samples per line, and each line's text
/// by location.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelLines {
    pub samples: LineSamples,
    pub text: Vec<(String, String)>,
}

/// `function`'s lines from the capture `stem` (`<stem>.source-sass.csv` and its siblings, read
/// as `profile --source` reads them), the line map saved beside them when `save` and missing.
pub fn kernel_lines(stem: &Path, backend: &str, function: &str, save: bool) -> Result<KernelLines> {
    let Some(k) = source::read(stem, backend, &attribution::lab(), save)?
        .into_iter()
        .find(|k| k.function == function)
    else {
        bail!(
            "{} has no kernel {function}",
            source::file(stem, source::SASS_PAGE).display()
        );
    };
    let mut out = KernelLines::default();
    for l in &k.lines {
        let at = l.at.short();
        out.samples.push((at.clone(), l.totals.samples as f64));
        out.text.push((at, l.at.text.clone()));
    }
    Ok(out)
}

/// The SASS diff of each (A entry, B entry), from this tree's PTX (`cargo xtask ptx`)
/// assembled for sm_90.
pub fn sass_diffs(pairs: &[(Entry, Entry)]) -> Result<Vec<CodeDiff>> {
    let mut backends: Vec<Backend> = Vec::new();
    for ((_, x), (_, y)) in pairs {
        for b in [*x, *y] {
            if !backends.contains(&b) {
                backends.push(b);
            }
        }
    }
    let mut builds: Vec<Build> = asm::load_builds(&[], Some(&backends), false)?;
    let mut stats = |entry: &str, backend: Backend| -> Result<KernelStats> {
        let Some(build) = builds.iter_mut().find(|b| b.backend == backend) else {
            bail!("no {backend} PTX loaded");
        };
        kernel_stats(build, entry)
    };
    let mut out = Vec::new();
    for ((ea, ba), (eb, bb)) in pairs {
        let a = stats(ea, *ba)?;
        let b = stats(eb, *bb)?;
        out.push(diff(&a, &b));
    }
    Ok(out)
}

/// One source line's samples on each side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HotLine {
    /// `file:line` (`reduce.rs:171`, `kernels.cu:88`).
    pub location: String,
    pub a_samples: f64,
    pub b_samples: f64,
    /// Share of the side's samples, in percent.
    pub a_pct: f64,
    pub b_pct: f64,
    /// The line's text, trimmed (empty where neither side's page has it).
    pub text: String,
}

/// The hot-line diff: two kernels' (`file:line`, samples) lists — what `profile --source`
/// reads off ncu's source page — merged by location, hottest first (by the larger share of the
/// two sides), at most `top` lines. A line one side lacks has 0 samples there.
pub fn hot_line_diff(a: &[(String, f64)], b: &[(String, f64)], top: usize) -> Vec<HotLine> {
    let total = |v: &[(String, f64)]| v.iter().map(|(_, s)| s).sum::<f64>();
    let (ta, tb) = (total(a), total(b));
    let pct = |s: f64, t: f64| if t > 0.0 { s / t * 100.0 } else { 0.0 };
    let mut lines: Vec<HotLine> = Vec::new();
    for (loc, s, is_a) in a
        .iter()
        .map(|(l, s)| (l, *s, true))
        .chain(b.iter().map(|(l, s)| (l, *s, false)))
    {
        let i = match lines.iter().position(|h| h.location == *loc) {
            Some(i) => i,
            None => {
                lines.push(HotLine {
                    location: loc.clone(),
                    a_samples: 0.0,
                    b_samples: 0.0,
                    a_pct: 0.0,
                    b_pct: 0.0,
                    text: String::new(),
                });
                lines.len() - 1
            }
        };
        if is_a {
            lines[i].a_samples += s;
        } else {
            lines[i].b_samples += s;
        }
    }
    for h in &mut lines {
        h.a_pct = pct(h.a_samples, ta);
        h.b_pct = pct(h.b_samples, tb);
    }
    lines.sort_by(|x, y| y.a_pct.max(y.b_pct).total_cmp(&x.a_pct.max(x.b_pct)));
    lines.truncate(top);
    lines
}

/// [`hot_line_diff`] of two kernels' lines, each line with its text.
pub fn hot_lines(a: &KernelLines, b: &KernelLines, top: usize) -> Vec<HotLine> {
    let mut lines = hot_line_diff(&a.samples, &b.samples, top);
    for h in &mut lines {
        if let Some((_, t)) = a.text.iter().chain(&b.text).find(|(l, _)| *l == h.location) {
            h.text = t.clone();
        }
    }
    lines
}

/// The SASS diffs of the pairs' kernels (none for two runs of the same kernels).
pub(super) fn code_diffs(
    axis: &Axis,
    pairs: &[Pair],
    source: &Source,
    notes: &mut Vec<String>,
) -> Vec<CodeDiff> {
    if *axis == Axis::Runs {
        notes.push("code: the same kernels on both sides; not compared".into());
        return Vec::new();
    }
    let side = |r: &Row| -> Option<(String, Backend)> {
        let k = catalog::kernels::find(&r.kernel)?;
        Some((k.entry(r.dtype.summed()?), r.backend.backend()?))
    };
    let mut wanted = Vec::new();
    for p in pairs {
        if let (Some(a), Some(b)) = (side(&p.a), side(&p.b))
            && !wanted.contains(&(a.clone(), b.clone()))
        {
            wanted.push((a, b));
        }
    }
    if wanted.is_empty() {
        return Vec::new();
    }
    match sass_diffs(&wanted) {
        Ok(d) => {
            let tree = util::git_commit(&util::root());
            let measured = match source {
                Source::Live { commit, .. } => commit.clone(),
                Source::Files { a, .. } => a.commit.clone(),
            };
            let short: String = measured.chars().take(7).collect();
            if !tree.starts_with(&short) || short.is_empty() {
                notes.push(format!(
                    "code: SASS of this tree's PTX (commit {tree}); the times are from commit {}",
                    if short.is_empty() { "unknown" } else { &short }
                ));
            }
            d
        }
        Err(e) => {
            notes.push(format!("code: not compared: {e:#}"));
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_lines_merge_by_location_hottest_first() {
        let a = vec![
            ("reduce.rs:171".to_string(), 60.0),
            ("reduce.rs:165".to_string(), 30.0),
            ("reduce.rs:180".to_string(), 10.0),
        ];
        let b = vec![
            ("reduce.rs:165".to_string(), 20.0),
            ("reduce.rs:200".to_string(), 80.0),
        ];
        let d = hot_line_diff(&a, &b, 3);
        let locs: Vec<&str> = d.iter().map(|h| h.location.as_str()).collect();
        assert_eq!(locs, ["reduce.rs:200", "reduce.rs:171", "reduce.rs:165"]);
        assert_eq!((d[0].a_samples, d[0].b_pct), (0.0, 80.0));
        assert_eq!((d[1].a_pct, d[1].b_samples), (60.0, 0.0));
        assert_eq!((d[2].a_pct, d[2].b_pct), (30.0, 20.0));
        assert!(hot_line_diff(&[], &[], 5).is_empty());
    }

    /// v3 against v5 in this tree's llvm SASS: v5 trades barriers and shared loads for
    /// shuffles. Needs the PTX (`cargo xtask ptx`) and the CUDA tools, as `asm` does.
    #[test]
    fn v3_and_v5_differ_in_barriers_and_shuffles() {
        let ptx = crate::util::root().join(catalog::ptx::path(Backend::Llvm));
        if !ptx.exists() || crate::util::cuda_tool("ptxas").is_err() {
            eprintln!("skipped: no llvm PTX or no ptxas (cargo xtask ptx, scripts/setup.sh)");
            return;
        }
        let d = sass_diffs(&[(
            ("reduce_v3_f32".into(), Backend::Llvm),
            ("reduce_v5_f32".into(), Backend::Llvm),
        )])
        .unwrap();
        let names: Vec<&str> = d[0].differing.iter().map(|x| x.0.as_str()).collect();
        assert!(names.contains(&"SASS barriers"), "{names:?}");
        assert!(names.contains(&"SASS shuffles"), "{names:?}");
        assert_eq!(d[0].a, "reduce_v3_f32 [llvm]");
        assert!(d[0].equal > 0);
    }
}
