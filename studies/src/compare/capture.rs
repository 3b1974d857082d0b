//! The captures behind the hot-line diff: which ncu Source pages hold A's and B's kernels, and
//! each pair's hot lines read from them.

use super::pairs::Pair;
use super::{CompareRequest, HOT_LINES, HotLines, Plan, code};
use anyhow::Result;
use catalog::records::Row;
use std::path::{Path, PathBuf};

/// The captures whose Source pages hold A's and B's kernels: the raw pages' stems (`--ncu-from`,
/// both sides), or a live capture's `ncu-a-*` and `ncu-b-*` in `out_dir`; and whether the line
/// map is saved with them (made at capture time, from the PTX the kernels ran).
pub(super) fn capture_stems(
    req: &CompareRequest,
    plan: &Plan,
    out_dir: Option<&Path>,
) -> Option<(Vec<PathBuf>, Vec<PathBuf>, bool)> {
    use crate::profiles::capture::{raw_pages, stem};
    if !req.ncu_from.is_empty() {
        let stems: Vec<PathBuf> = raw_pages(&req.ncu_from)
            .ok()?
            .iter()
            .map(|p| stem(p).0)
            .collect();
        return Some((stems.clone(), stems, false));
    }
    let (Plan::Live { .. }, Some(dir), false) = (plan, out_dir, req.no_ncu) else {
        return None;
    };
    let stems: Vec<PathBuf> = raw_pages(&[dir.to_path_buf()])
        .ok()?
        .iter()
        .map(|p| stem(p).0)
        .collect();
    let side = |prefix: &str| -> Vec<PathBuf> {
        stems
            .iter()
            .filter(|s| {
                s.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            })
            .cloned()
            .collect()
    };
    Some((side("ncu-a-"), side("ncu-b-"), true))
}

/// The capture among `stems` whose Source page holds `row`'s kernel from its backend, and that
/// kernel's function name.
pub(super) fn source_stem(stems: &[PathBuf], row: &Row) -> Option<(PathBuf, String)> {
    use crate::profiles::capture;
    use profiler::source;
    let function = catalog::kernels::find(&row.kernel)?.entry(row.dtype.summed()?);
    let stem = stems.iter().find(|s| {
        capture::stem(&source::file(s, "raw.csv")).1 == row.backend.name()
            && source::read_file(s, source::SASS_PAGE)
                .is_ok_and(|t| t.contains(&format!("\"Kernel Name\",\"{function}\"")))
    })?;
    Some((stem.clone(), function))
}

/// Each pair's hot-line diff, from the Source pages of its capture; a note for each pair
/// without one.
pub(super) fn hot_lines(
    req: &CompareRequest,
    plan: &Plan,
    pairs: &[Pair],
    out_dir: Option<&Path>,
    notes: &mut Vec<String>,
) -> Vec<HotLines> {
    let Some((stems_a, stems_b, save)) = capture_stems(req, plan, out_dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in pairs {
        let side = |stems: &[PathBuf], row: &Row| -> Result<code::KernelLines, String> {
            let (stem, function) = source_stem(stems, row).ok_or_else(|| {
                format!(
                    "no Source page beside the capture holds {} [{}]",
                    row.kernel, row.backend
                )
            })?;
            code::kernel_lines(&stem, row.backend.name(), &function, save)
                .map_err(|e| format!("{e:#}"))
        };
        match (side(&stems_a, &p.a), side(&stems_b, &p.b)) {
            (Ok(a), Ok(b)) => out.push(HotLines {
                pair: p.label.clone(),
                lines: code::hot_lines(&a, &b, HOT_LINES),
            }),
            (Err(e), _) | (_, Err(e)) => notes.push(format!("hot lines: {}: {e}", p.label)),
        }
    }
    out
}
