//! One module per subcommand, named like the chapter's make targets.
pub mod dist;
pub mod ptx;
