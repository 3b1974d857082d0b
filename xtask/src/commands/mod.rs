//! One module per subcommand, named like the chapter's make targets.
pub mod accuracy;
pub mod asm;
pub mod bench;
pub mod compare;
pub mod dist;
pub mod explore;
pub mod log;
pub mod model_check;
pub mod ncu;
pub mod nsys;
pub mod plot;
pub mod profile;
pub mod ptx;
pub mod results_table;
pub mod rows_table;
pub mod sanitize;
