//! How right the diagnosis is on the lab's own kernels: each profiled kernel's headline
//! against the verdict the catalogue says it must get (a planted fault's, a fixed twin's
//! "none", the chapter's own kernels'). The judging, the tally and the tables are the profiler
//! crate's ([`profiler::accuracy`]), as for any corpus with a truth file.

use super::metrics::Profiled;
pub use profiler::accuracy::{Judged, Tally, confusion, tally, text};
use profiler::accuracy::{Verdicts, judged};
use profiler::diagnose;

/// The kernels of `rows` the catalogue states a verdict for, judged: each label once (a
/// two-pass kernel's second launch is the same kernel again).
pub fn judge(rows: &[Profiled]) -> Vec<Judged> {
    let mut seen = std::collections::HashSet::new();
    rows.iter()
        .filter(|r| seen.insert(r.label.as_str()))
        .filter_map(|r| {
            let expected = catalog::kernels::expected_verdict(catalogue_kernel(&r.kernel)?)?;
            let d = diagnose::diagnose(r);
            Some(judged(&r.label, expected, &Verdicts::from(&d)))
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
