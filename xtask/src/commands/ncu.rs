//! `cargo xtask ncu-table` and `cargo xtask ncu-transpose`: the chapter's key metrics for
//! every reduction (and the transposes) under ncu, beside the chapter's predictions (see
//! [`studies::profiles::tables`]).

use anyhow::Result;
use studies::profiles::ncu::NcuOptions;
use studies::profiles::tables;

#[derive(clap::Args)]
pub struct TableArgs {
    #[command(flatten)]
    pub ncu: NcuOptions,
    /// Elements per reduction (profiling size: replays stay short)
    #[arg(long, default_value_t = 1 << 24)]
    pub size: u64,
}

/// `ncu-table`.
pub fn table(args: &TableArgs) -> Result<()> {
    tables::reductions(&args.ncu, args.size)
}

#[derive(clap::Args)]
pub struct TransposeArgs {
    #[command(flatten)]
    pub ncu: NcuOptions,
    /// Input rows
    #[arg(long, default_value_t = 4096)]
    pub rows: u32,
    /// Input columns
    #[arg(long, default_value_t = 4096)]
    pub cols: u32,
}

/// `ncu-transpose`.
pub fn transpose(args: &TransposeArgs) -> Result<()> {
    tables::transposes(&args.ncu, args.rows, args.cols)
}
