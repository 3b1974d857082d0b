//! The flags `lab` takes, defined here so that xtask parses and checks them too, on any
//! machine, before `lab` (which needs the CUDA driver just to start) runs.
//!
//! - [`bench`]: `lab bench`'s flags and the plan they resolve to.
//! - [`size`]: `2^28` in and out.

pub mod bench;
pub mod size;
