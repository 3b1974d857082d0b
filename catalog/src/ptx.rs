//! Where `cargo xtask ptx` writes each compiler's PTX, relative to the workspace root, and
//! where `cargo xtask dist` puts it beside the binaries that load it.

use crate::Backend;

/// `target/ptx/<backend>/gpu_kernels.ptx`.
pub fn path(backend: Backend) -> String {
    set_path(backend.name())
}

/// `target/ptx/<set>/gpu_kernels.ptx`: a compiler's set, or the canaries'.
pub fn set_path(set: &str) -> String {
    format!("target/ptx/{set}/gpu_kernels.ptx")
}

/// The sanitizer canaries' PTX set (built with rustc's NVPTX backend only, kept apart from the
/// compilers' sets so the lab's PTX never holds a deliberately wrong kernel).
pub const CANARY_SET: &str = "canary";

/// The canaries' PTX.
pub const CANARY: &str = "target/ptx/canary/gpu_kernels.ptx";

/// `ptx/<set>/gpu_kernels.ptx.gz`, relative to `dist/`: each set once, beside the binaries,
/// gzipped (the llvm set's line tables make it 4 MB plain, a twentieth of that packed).
pub fn dist_path(set: &str) -> String {
    format!("ptx/{set}/gpu_kernels.ptx.gz")
}

/// The file `cargo xtask dist` writes into `dist/` (what was built from which commit); the
/// binaries take the `ptx/` beside it as theirs.
pub const DIST_MANIFEST: &str = "MANIFEST.txt";

/// The kernel entry points a PTX module declares (`.visible .entry reduce_v3_f32(`).
pub fn entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.trim_start().strip_prefix(".visible .entry "))
        .map(|rest| rest.split('(').next().unwrap_or(rest).trim())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_off_the_entry_lines() {
        assert_eq!(path(Backend::Nvvm), "target/ptx/nvvm/gpu_kernels.ptx");
        assert_eq!(set_path(CANARY_SET), CANARY);
        assert_eq!(dist_path("llvm"), "ptx/llvm/gpu_kernels.ptx.gz");
        assert_eq!(
            entries(".visible .entry bump(\n\t.param .u64 a\n)\n.visible .entry reduce_v1_f32(\n"),
            ["bump", "reduce_v1_f32"]
        );
    }
}
