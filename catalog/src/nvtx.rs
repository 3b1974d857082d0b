//! The NVTX names `lab` emits and the profilers select on.

/// The domain every range of `lab` is pushed in.
pub const DOMAIN: &str = "kernel-lab";
/// Push/pop range around the one profiled launch of each kernel in `lab run`.
pub const PROFILE_RANGE: &str = "profile";
/// Push/pop range around `lab run`'s untimed warm-up launch (never profiled).
pub const WARMUP_RANGE: &str = "warmup";
/// ncu's `--nvtx-include` filter that selects exactly the launches in [`PROFILE_RANGE`]
/// (`domain@range/`: the trailing `/` means a push/pop range).
pub const NVTX_FILTER: &str = "kernel-lab@profile/";

#[cfg(test)]
mod tests {
    #[test]
    fn the_filter_names_the_domain_and_the_profile_range() {
        assert_eq!(
            super::NVTX_FILTER,
            format!("{}@{}/", super::DOMAIN, super::PROFILE_RANGE)
        );
    }
}
