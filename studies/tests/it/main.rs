//! The studies crate's integration tests, one binary (one link) for all:
//!
//! - [`asm_control`]: the control bits `sass` decodes, held to what must be true if the
//!   decoding is right, on every kernel of the lab's three PTX sets;
//! - [`cluster_loads`]: `asm --check`'s cluster load runs, on a kernel with and without its
//!   launch bounds;
//! - [`profile_ncu`]: the lab's ncu captures read, tabled, held to the chapter's expectations,
//!   diagnosed and scored;
//! - [`profile_source`]: `profile --source` on the lab's H200 capture.

mod asm_control;
mod cluster_loads;
mod profile_ncu;
mod profile_source;

use std::path::{Path, PathBuf};

/// The lab's H200 captures, kept under `xtask/tests/fixtures/` (the docs and commands name
/// them there).
pub fn lab_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../xtask/tests/fixtures")
}
