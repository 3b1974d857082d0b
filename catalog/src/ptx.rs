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

/// The entry point a PTX line declares, if it declares one (`.visible .entry reduce_v3_f32(`
/// → `reduce_v3_f32`).
pub fn entry_name(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix(".visible .entry ")?;
    Some(rest.split('(').next().unwrap_or(rest).trim())
}

/// The kernel entry points a PTX module declares.
pub fn entries(ptx: &str) -> Vec<&str> {
    ptx.lines().filter_map(entry_name).collect()
}

/// `ptx` with launch bounds on the entries `bounds` gives them for (the most threads a block,
/// the fewest blocks an SM): `.maxntid T, 1, 1` and `.minnctapersm K` between the entry's
/// parameter list and its body, as nvcc writes `__launch_bounds__(T, K)`. ptxas then fits
/// the entry's registers to K blocks of T threads an SM.
pub fn with_launch_bounds(ptx: &str, bounds: impl Fn(&str) -> Option<(u32, u32)>) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut pending = None;
    for line in ptx.split_inclusive('\n') {
        if let Some(name) = entry_name(line) {
            pending = bounds(name);
        }
        out.push_str(line);
        // The parameter list's `)`, on the entry's line or the last of its parameters'.
        if pending.is_some() && line.contains(')') {
            let (threads, blocks) = pending.take().unwrap();
            out.push_str(&format!(
                ".maxntid {threads}, 1, 1\n.minnctapersm {blocks}\n"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the entries given bounds get them, after their parameter list and before `{`.
    #[test]
    fn launch_bounds_go_between_the_parameters_and_the_body() {
        let ptx = ".visible .entry a(\n\t.param .u32 a_param_0\n)  // @a\n{\n\tret;\n}\n\
                   .visible .entry b(\n\t.param .u32 b_param_0\n)\n{\n\tret;\n}\n\
                   .visible .entry c()\n{\n\tret;\n}\n";
        let bounded = with_launch_bounds(ptx, |e| (e != "a").then_some((512, 2)));
        let want = ptx
            .replace(
                "b_param_0\n)\n{",
                "b_param_0\n)\n.maxntid 512, 1, 1\n.minnctapersm 2\n{",
            )
            .replace("c()\n{", "c()\n.maxntid 512, 1, 1\n.minnctapersm 2\n{");
        assert_eq!(bounded, want);
        assert_eq!(with_launch_bounds(ptx, |_| None), ptx);
    }

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
