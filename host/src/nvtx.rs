//! NVTX ranges in the lab's own domain, so an nsys timeline of any `lab` run reads by itself:
//! `nvtx_sum` lists every phase (setup, warm-up, timed loop, verify, …) by name.

use std::sync::OnceLock;

/// The NVTX domain every range of this project belongs to.
pub const DOMAIN: &std::ffi::CStr = c"kernel-lab";

fn domain() -> &'static nvtx::Domain {
    static D: OnceLock<nvtx::Domain> = OnceLock::new();
    D.get_or_init(|| nvtx::Domain::new(DOMAIN))
}

/// A push/pop range that ends when dropped: `let _r = range("reduce_v3 [llvm] timed");`
/// (A name with an interior NUL is cut there.)
pub fn range(name: &str) -> nvtx::domain::LocalRange<'static> {
    let name = name.split('\0').next().unwrap_or_default();
    let c = std::ffi::CString::new(name).expect("no interior NUL after the cut");
    domain().local_range(c)
}
