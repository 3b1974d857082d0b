//! The lab's source-line attribution (`profiler::source` on the lab's captures): its source
//! tree, and a capture's line map made, when it holds none, from this tree's PTX of the
//! capture's backend.

use crate::asm::Build;
use crate::util;
use catalog::Backend;
use profiler::source::Attribution;
use profiler::source::lines::{self, LineMap};
use std::path::Path;

/// How the lab's captures find their lines.
pub fn lab() -> Attribution<'static> {
    Attribution {
        tree: util::source_tree(),
        make_map: Box::new(line_map),
    }
}

/// The line map of `functions` from this tree's PTX of `backend` (see
/// `profiler::source::lines`), its PTX named relative to the tree.
fn line_map(backend: &str, functions: &[&str], saved: &Path) -> Result<LineMap, String> {
    let b =
        Backend::from_name(backend).ok_or_else(|| format!("no lab PTX for backend '{backend}'"))?;
    let root = util::root();
    let ptx = root.join(catalog::ptx::path(b));
    if !ptx.is_file() {
        return Err(format!(
            "no {} and no PTX at {} to make it from (cargo xtask ptx; on a GPU machine, bring target/ptx along)",
            saved.display(),
            ptx.display()
        ));
    }
    let made = || -> anyhow::Result<LineMap> {
        let mut build = Build::load(b, &ptx)?;
        let has_lines = build.module.has_line_info();
        let shown = ptx
            .strip_prefix(&root)
            .unwrap_or(&ptx)
            .display()
            .to_string();
        let made_by = lines::made_by(&shown, &build.module.target);
        Ok(lines::from_listing(
            build.sass()?,
            has_lines,
            made_by,
            functions,
        ))
    };
    made().map_err(|e| format!("{e:#}"))
}
