//! The catalogue's integration tests, one binary (one link) for all: the catalogue against
//! the PTX `cargo xtask ptx` built ([`ptx_entries`]), and every kept results file read through
//! its records ([`results_files`]). Its modules' layers: the `layers` crate's tests.

mod ptx_entries;
mod results_files;
