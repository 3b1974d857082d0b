//! `ncu-table` and `ncu-transpose`: the chapter's key metrics for every reduction (and the
//! transposes), one profiled launch each, with the chapter's expected values beside the measured
//! values and a one-line diagnosis per kernel.

use super::capture::Collect;
use super::expected::{self, Expectation};
use super::metrics::{self, Profiled};
use super::ncu::{NcuOptions, emit, fail_if_unverified};
use super::report::TableReport;
use anyhow::{Result, bail};

/// `ncu-table`: every reduction at `size` elements.
pub fn reductions(opts: &NcuOptions, size: u64) -> Result<()> {
    let collect = Collect {
        set: None,
        sections: metrics::TABLE_SECTIONS.map(String::from).to_vec(),
        metrics: metrics::reduction_table(),
    };
    let size_args = vec!["--size".into(), size.to_string()];
    let (rows, how) = opts.collect("ncu-table", "reductions", collect, size_args)?;
    let preds = expected::reductions();
    let title = format!(
        "ncu-table: reductions, n = {} f32, one profiled launch each (after an untimed warm-up)",
        profiler::fmt::thousands(size as i64)
    );
    let notes = vec![
        how,
        "per block = ÷ blocks launched (sm__ctas_launched.sum); inst/warp = smsp__inst_executed ÷ smsp__warps_launched".into(),
        "sh-ld req = shared loads with >= 1 lane on (smsp__inst_executed_op_shared_ld_pred_on_any); conflicts and wavefronts: l1tex__data_{bank_conflicts,pipe_lsu_wavefronts}_pipe_lsu_mem_shared_op_ld".into(),
        "barrier, long-sb: warps stalled per issued instruction; occ %: achieved occupancy".into(),
        "ncu µs is time under the profiler (replayed, caches flushed): compare kernels within this table, never read it as a speed".into(),
    ];
    tabulate(
        "ncu-table",
        opts,
        &rows,
        title,
        notes,
        &metrics::reduction_columns(),
        &preds,
    )
}

/// `ncu-transpose`: the transposes of a `rows × cols` input.
pub fn transposes(opts: &NcuOptions, rows: u32, cols: u32) -> Result<()> {
    let collect = Collect {
        set: None,
        sections: metrics::TABLE_SECTIONS.map(String::from).to_vec(),
        metrics: metrics::transpose_table(),
    };
    let size_args = vec![
        "--rows".into(),
        rows.to_string(),
        "--cols".into(),
        cols.to_string(),
    ];
    let (measured, how) = opts.collect("ncu-transpose", "transposes", collect, size_args)?;
    let preds = expected::transposes(rows as u64, cols as u64);
    let title = format!(
        "ncu-transpose: {}×{} f32, one profiled launch each (after an untimed warm-up)",
        rows, cols
    );
    let notes = vec![
        how,
        "per warp-wide request: sectors/req = l1tex__t_sectors ÷ l1tex__t_requests (global); wavefronts/req = shared wavefronts ÷ shared requests with >= 1 lane on".into(),
        "coalesced 4-byte lanes: 4 sectors/request; conflict-free shared access: 1 wavefront/request".into(),
        "ncu µs is time under the profiler (replayed, caches flushed): compare kernels within this table, never read it as a speed".into(),
    ];
    tabulate(
        "ncu-transpose",
        opts,
        &measured,
        title,
        notes,
        &metrics::transpose_columns(),
        &preds,
    )
}

/// The table of `rows` with `preds` beside them, written and printed; fails after printing
/// when a result was wrong under the profiler.
fn tabulate(
    kind: &str,
    opts: &NcuOptions,
    rows: &[Profiled],
    title: String,
    notes: Vec<String>,
    columns: &[metrics::Column],
    preds: &[Expectation],
) -> Result<()> {
    if rows.is_empty() {
        bail!("no profiled kernels to tabulate");
    }
    let report = TableReport::build(kind, title, notes, rows, columns, preds);
    emit(
        opts.write_dir().as_deref(),
        kind,
        opts.format,
        &report.text(preds),
        &report.json(),
        &report.csv(),
    )?;
    fail_if_unverified(rows)
}
