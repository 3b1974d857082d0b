//! The launch constants as C preprocessor definitions, so the CUDA C++ twins
//! (`gpu-kernels/cuda/kernels.cu`, and `gpu/harness.cu`, which includes it) are compiled with
//! the same values as the Rust kernels: `cargo xtask ptx` and `cargo xtask dist` pass
//! [`nvcc_defines`] on nvcc's command line.

use crate::launch;

/// Lists every constant of [`launch`] once, by module and name; the values are read from the
/// constants themselves.
macro_rules! constants {
    ($($module:ident: $($name:ident),+;)+) => {
        /// Every constant of [`launch`]: (module, name, value in decimal).
        pub fn constants() -> Vec<(&'static str, &'static str, String)> {
            vec![$($(
                (stringify!($module), stringify!($name), launch::$module::$name.to_string()),
            )+)+]
        }
    };
}

constants! {
    reduce: BLOCK, WARPS, COARSEN, V7_UNROLL;
    transpose: TILE, ROWS_PER_PASS, V4_TILE, V4_THREADS;
    stream: BLOCK, FMA_BLOCK, FMA_CHAINS, FMA_UNROLL;
    roofs: BLOCK, LINE_WORDS, SPREAD_REDS_PER_WARP, SHARED_STEPS;
    faults: BLOCK, GEMM_THREADS, GEMM_TILE, GEMM_K_F32, GEMM_K_BF16, GEMM_PITCH_BF16, STRIDE,
        PER_THREAD, LIVE_FAULT, LIVE_FIXED, LINE_WORDS, TILE, PITCH_FAULT, PITCH_FIXED,
        UNIT_STEPS, UNIT_CHAINS, UNITS_PER_BLOCK, UNDERSIZED_BLOCKS, SPILL_WORDS, SPILL_PASSES,
        ASYNC_THREADS, ASYNC_STAGES, SFU_TERMS, L2_FITS_LOG2, L2_EXCEEDS_LOG2, SEGMENT;
    rows: WARP_VECTORS, NARROW_VECTORS, WARP_ROWS_PER_BLOCK, BLOCK_VECTORS, BLOCK_MAX_THREADS,
        WIDE_VECTORS, WIDE_MAX_THREADS, CLUSTER_VECTORS, CLUSTER_THREADS, CLUSTER_THREADS_BF16,
        CLUSTER_SM_THREADS, CLUSTER_MIN, CLUSTER_MAX, STREAMED_THREADS, STREAMED_VECTORS,
        SLOT_WORDS, SHARED_BYTES, PAIR_SHARED_BYTES, CLUSTER_KEPT_B_VECTORS;
    bump: BLOCK;
}

/// The C name of `launch::<module>::<name>`: `LAB_<MODULE>_<NAME>` (`LAB_REDUCE_BLOCK`).
pub fn macro_name(module: &str, name: &str) -> String {
    format!("LAB_{}_{name}", module.to_uppercase())
}

/// nvcc's `-D` flags for every launch constant: `-DLAB_REDUCE_BLOCK=256`, ….
pub fn nvcc_defines() -> Vec<String> {
    constants()
        .into_iter()
        .map(|(module, name, value)| format!("-D{}={value}", macro_name(module, name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (module, name) of every `pub const` in the launch file, read from its text.
    fn declared() -> Vec<(String, String)> {
        let text = include_str!("../../gpu-kernels/src/launch.rs");
        let mut module = None;
        let mut found = Vec::new();
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("pub mod ") {
                module = Some(rest.trim_end_matches('{').trim().to_string());
            } else if let Some(rest) = line.strip_prefix("pub const ") {
                let name = rest.split(':').next().unwrap().trim().to_string();
                let module = module.clone().expect("a constant outside every module");
                found.push((module, name));
            }
        }
        found
    }

    /// A constant added to the launch file must be added to `constants!` too, or the C++
    /// twins would never see it.
    #[test]
    fn every_launch_constant_is_defined() {
        let listed: Vec<(String, String)> = constants()
            .into_iter()
            .map(|(m, n, _)| (m.to_string(), n.to_string()))
            .collect();
        let declared = declared();
        assert!(declared.len() >= 10, "launch.rs parsed badly: {declared:?}");
        assert_eq!(listed, declared);
    }

    #[test]
    fn flags_carry_the_constants_values() {
        let flags = nvcc_defines();
        assert_eq!(flags.len(), constants().len());
        for expected in [
            format!("-DLAB_REDUCE_BLOCK={}", launch::reduce::BLOCK),
            format!("-DLAB_REDUCE_WARPS={}", launch::reduce::WARPS),
            format!("-DLAB_TRANSPOSE_TILE={}", launch::transpose::TILE),
            format!("-DLAB_STREAM_FMA_UNROLL={}", launch::stream::FMA_UNROLL),
        ] {
            assert!(
                flags.contains(&expected),
                "{expected} missing from {flags:?}"
            );
        }
        assert_eq!(macro_name("transpose", "V4_TILE"), "LAB_TRANSPOSE_V4_TILE");
        // Each name once: two constants must never render to the same macro.
        let mut names: Vec<&str> = flags.iter().map(|f| f.split('=').next().unwrap()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), flags.len());
    }
}
