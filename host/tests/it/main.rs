//! The host crate's integration tests, one binary (one link) for all: `lab`'s refusals
//! ([`cli`]), its plans ([`run_plan`]), and the map of unsafe code ([`unsafe_map`]).

mod cli;
mod run_plan;
mod unsafe_map;
