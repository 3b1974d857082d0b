//! The catalogue against the PTX `cargo xtask ptx` built: every compiler's PTX declares
//! exactly the entry points the catalogue says it carries, no fewer and no more.

use catalog::{Backend, kernels, ptx};
use std::path::Path;

#[test]
fn every_ptx_carries_exactly_the_catalogued_entries() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for b in Backend::ALL {
        let path = root.join(ptx::path(b));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}: run `cargo xtask ptx` first", path.display()));
        let mut have: Vec<&str> = ptx::entries(&text);
        have.sort_unstable();
        let mut want = kernels::entries(b);
        want.sort();
        let missing: Vec<&String> = want
            .iter()
            .filter(|e| !have.contains(&e.as_str()))
            .collect();
        let unknown: Vec<&&str> = have
            .iter()
            .filter(|e| !want.iter().any(|w| w == *e))
            .collect();
        assert!(
            missing.is_empty() && unknown.is_empty(),
            "{b} PTX ({}): missing {missing:?} (catalogued, not built); unknown {unknown:?} (built, \
             not catalogued: add an entry to catalog/src/kernels/table.rs)",
            path.display()
        );
    }
}
