//! Where `cargo xtask ptx` writes each compiler's PTX, relative to the workspace root.

use crate::Backend;

/// `target/ptx/<backend>/gpu_kernels.ptx`.
pub fn path(backend: Backend) -> String {
    format!("target/ptx/{}/gpu_kernels.ptx", backend.name())
}

/// The sanitizer canaries' PTX (built with rustc's NVPTX backend only).
pub const CANARY: &str = "target/ptx/canary/gpu_kernels.ptx";

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
        assert_eq!(
            entries(".visible .entry bump(\n\t.param .u64 a\n)\n.visible .entry reduce_v1_f32(\n"),
            ["bump", "reduce_v1_f32"]
        );
    }
}
