//! The counters side: the chapter's metrics (the columns of `ncu-table` / `ncu-transpose`) for
//! A and B side by side, with the change; from a live ncu capture
//! ([`crate::profiles::ncu::NcuOptions::collect`], the path every ncu subcommand takes) or from
//! raw pages captured earlier.

use super::claims::change_pct;
use super::live;
use super::pairs::Pair;
use super::{CompareRequest, Plan};
use crate::profiles::capture::Collect;
use crate::profiles::metrics::{self, Column, Profiled as Launch, function_name};
use crate::profiles::ncu::NcuOptions;
use anyhow::Result;
use catalog::{Backend, Dtype, Family, Runner};
use profiler::ncu::Counters;
use serde::Serialize;
use std::path::Path;

/// One metric of a pair.
#[derive(Clone, Debug, Serialize)]
pub struct CounterRow {
    /// A column key (`inst`) or an ncu metric name.
    pub key: String,
    pub header: String,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// (B − A) / A, in percent.
    pub change_pct: Option<f64>,
    /// Decimals shown.
    #[serde(skip)]
    pub digits: usize,
    /// The change the lab's performance model predicted, in percent (none yet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_change_pct: Option<f64>,
}

/// One pair's metrics.
#[derive(Clone, Debug, Serialize)]
pub struct CounterPair {
    pub label: String,
    pub rows: Vec<CounterRow>,
}

/// The chapter's columns for a kernel family (None: no chapter table covers it).
pub fn columns(family: Family) -> Option<Vec<Column>> {
    match family {
        Family::Reduce => Some(metrics::reduction_columns()),
        Family::Transpose => Some(metrics::transpose_columns()),
        _ => None,
    }
}

/// The `--metrics` a family's columns need (the table's list), plus `extra`.
pub fn collect_for(family: Family, extra: &[String]) -> Collect {
    let mut m = match family {
        Family::Transpose => metrics::transpose_table(),
        _ => metrics::reduction_table(),
    };
    for x in extra {
        if !m.contains(x) {
            m.push(x.clone());
        }
    }
    let sections = metrics::TABLE_SECTIONS
        .iter()
        .chain(&SOURCE_SECTIONS)
        .map(|s| s.to_string())
        .collect();
    Collect {
        set: None,
        sections,
        metrics: m,
    }
}

/// The sections that fill the Source page the hot-line diff reads: the per-instruction
/// counters and the warp-state samples (`profile --source` has them through `--set full`).
pub const SOURCE_SECTIONS: [&str; 2] = ["SourceCounters", "WarpStateStats"];

/// The profiled launch of `kernel` in `dtype` from `backend`, among `rows`.
pub fn find<'a>(
    rows: &'a [Launch],
    kernel: &str,
    backend: Runner,
    dtype: Dtype,
) -> Option<&'a Launch> {
    let k = catalog::kernels::find(kernel)?;
    let entry = k.entry(dtype.summed()?);
    rows.iter()
        .find(|r| r.runner() == Some(backend) && function_name(&r.profiled.kernel) == entry)
}

/// A counter's A and B value: a column key through its column, else an ncu metric by name.
pub fn value(a: &Launch, b: &Launch, cols: &[Column], name: &str) -> Option<(f64, f64)> {
    match cols.iter().find(|c| c.key == name) {
        Some(c) => Some(((c.get)(a)?, (c.get)(b)?)),
        None => Some((a.m(name)?, b.m(name)?)),
    }
}

/// A pair's columns side by side, then the `extra` metrics (those a prediction names).
pub fn side_by_side(
    label: &str,
    a: &Launch,
    b: &Launch,
    cols: &[Column],
    extra: &[String],
) -> CounterPair {
    let mut rows: Vec<CounterRow> = cols
        .iter()
        .map(|c| row(c.key, c.header, (c.get)(a), (c.get)(b), c.digits))
        .collect();
    for x in extra
        .iter()
        .filter(|x| !cols.iter().any(|c| c.key == x.as_str()))
    {
        rows.push(row(x, x, a.m(x), b.m(x), 1));
    }
    CounterPair {
        label: label.to_string(),
        rows,
    }
}

fn row(key: &str, header: &str, a: Option<f64>, b: Option<f64>, digits: usize) -> CounterRow {
    CounterRow {
        key: key.into(),
        header: header.into(),
        change_pct: match (a, b) {
            (Some(a), Some(b)) => Some(change_pct(a, b)),
            _ => None,
        },
        a,
        b,
        digits,
        predicted_change_pct: None,
    }
}

/// `lab run` size flags for a pair's row: its `n` (reductions), its `RxC` (transposes).
pub fn size_args(r: &catalog::records::Row) -> Vec<String> {
    let mut a = vec!["--size".to_string(), r.n.to_string()];
    if let Some((rows, cols)) = r.size.split_once('x')
        && r.section == Family::Transpose
    {
        a.extend(["--rows".into(), rows.into(), "--cols".into(), cols.into()]);
    }
    a
}

/// One side's profiled launches: `kernel`'s entries for `dtypes` from `backend`, under ncu
/// (one process, as `ncu-table` runs it), files named `<base>-<backend>.*` in `dir`, the
/// Source page exported beside the raw page (as `profile --source` does).
#[allow(clippy::too_many_arguments)]
pub fn capture(
    dir: &Path,
    lab: Option<&Path>,
    base: &str,
    kernel: &str,
    backend: Backend,
    dtypes: &[Dtype],
    collect: Collect,
    size_args: Vec<String>,
) -> Result<(Vec<Launch>, String)> {
    let k = catalog::kernels::find(kernel)
        .ok_or_else(|| anyhow::anyhow!("no kernel '{kernel}' in the catalogue"))?;
    let entries: Vec<String> = dtypes
        .iter()
        .filter_map(|d| d.summed())
        .map(|d| k.entry(d))
        .collect();
    options(dir, lab, backend)?.collect_with(
        base,
        &entries.join(","),
        collect,
        size_args,
        true,
        &[],
    )
}

/// The ncu options of a side's capture: `ncu-table`'s defaults (through its flags, so an
/// option added there keeps its default here too), one compiler, files into `dir`.
fn options(dir: &Path, lab: Option<&Path>, backend: Backend) -> Result<NcuOptions> {
    #[derive(clap::Parser)]
    struct Flags {
        #[command(flatten)]
        ncu: NcuOptions,
    }
    let mut argv = vec![
        "compare".to_string(),
        "--backend".into(),
        backend.name().into(),
        "--output".into(),
        dir.display().to_string(),
    ];
    if let Some(lab) = lab {
        argv.extend(["--lab".into(), lab.display().to_string()]);
    }
    Ok(<Flags as clap::Parser>::try_parse_from(argv)
        .map_err(|e| anyhow::anyhow!("ncu options: {e}"))?
        .ncu)
}

/// A's and B's profiled launches (and the size they were profiled at, when known), or a note
/// saying why there are none.
pub(super) type ProfiledSides = Option<(Vec<Launch>, Vec<Launch>, Option<String>)>;

pub(super) fn profiled_rows(
    req: &CompareRequest,
    plan: &Plan,
    pairs: &[Pair],
    out_dir: Option<&Path>,
    lab: Option<&Path>,
    extra: &[String],
    notes: &mut Vec<String>,
) -> (ProfiledSides, Option<String>) {
    if !req.ncu_from.is_empty() {
        return match crate::profiles::capture::read_capture(&req.ncu_from) {
            Ok(rows) => {
                let files: Vec<String> = req
                    .ncu_from
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                let how = format!(
                    "read back from {} (captured on its own: its size may differ from the timed rows')",
                    files.join(", ")
                );
                (Some((rows.clone(), rows, None)), Some(how))
            }
            Err(e) => {
                notes.push(format!("counters: not read: {e:#}"));
                (None, None)
            }
        };
    }
    let (Plan::Live { a, b, .. }, Some(dir), Some(first)) = (plan, out_dir, pairs.first()) else {
        if !req.no_ncu {
            notes.push(
                "counters: not measured (results files hold times only; --ncu-from RAW.csv … adds captured counters)"
                    .into(),
            );
        }
        return (None, None);
    };
    if req.no_ncu {
        notes.push("counters: not measured (--no-ncu)".into());
        return (None, None);
    }
    let Some(family) = Some(first.a.section).filter(|f| columns(*f).is_some()) else {
        notes.push(format!(
            "counters: no chapter metrics for {} kernels",
            first.a.section.name()
        ));
        return (None, None);
    };
    if let Err(e) = profiler::tools::NCU.find() {
        notes.push(format!("counters: not measured: {e}"));
        return (None, None);
    }
    let dtypes: Vec<Dtype> = {
        let mut d: Vec<Dtype> = pairs.iter().map(|p| p.a.dtype).collect();
        d.dedup();
        d
    };
    let size_args = size_args(&first.a);
    let capture_side = |side: &live::Side| -> Result<(Vec<Launch>, String)> {
        let mut rows = Vec::new();
        let mut how = String::new();
        for backend in &side.backends {
            let base = format!("ncu-{}", side.name);
            let (r, h) = capture(
                dir,
                lab,
                &base,
                &side.kernel,
                *backend,
                &dtypes,
                collect_for(family, extra),
                size_args.clone(),
            )?;
            rows.extend(r);
            how = h;
        }
        Ok((rows, how))
    };
    match (capture_side(a), capture_side(b)) {
        (Ok((ra, how)), Ok((rb, _))) => {
            if pairs.iter().any(|p| p.a.size != first.a.size) {
                notes.push(format!("counters: profiled at {} only", first.a.size));
            }
            let names: Vec<&str> = dtypes.iter().map(|d| d.name()).collect();
            let how = format!("{how}; {} {}", first.a.size, names.join(","));
            (Some((ra, rb, Some(first.a.size.clone()))), Some(how))
        }
        (Err(e), _) | (_, Err(e)) => {
            notes.push(format!("counters: not measured: {e:#}"));
            (None, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ncu_table_rows() -> Vec<Launch> {
        let dir = crate::util::root().join("xtask/tests/fixtures/ncu");
        crate::profiles::capture::read_capture(&[
            dir.join("ncu-table-llvm.raw.csv.gz"),
            dir.join("ncu-table-nvcc.raw.csv.gz"),
        ])
        .unwrap()
    }

    /// v3 against v5 from the H200's ncu-table capture (2^24 f32): v5 sums eight elements a
    /// thread (v4's coarsening: an eighth of the blocks) and leaves the last tree levels to
    /// warp shuffles (fewer shared loads a block).
    #[test]
    fn v3_and_v5_side_by_side_from_the_h200_capture() {
        let rows = ncu_table_rows();
        let a = find(&rows, "reduce_v3", Backend::Llvm.into(), Dtype::F32).expect("v3 llvm");
        let b = find(&rows, "reduce_v5", Backend::Llvm.into(), Dtype::F32).expect("v5 llvm");
        assert!(find(&rows, "reduce_v3", Backend::Nvvm.into(), Dtype::F32).is_none());
        assert!(find(&rows, "reduce_v3", Backend::Llvm.into(), Dtype::I32).is_none());
        let cols = columns(Family::Reduce).unwrap();
        let p = side_by_side(
            "v3 → v5",
            a,
            b,
            &cols,
            &["dram__bytes_read.sum".into(), "inst".into()],
        );
        assert_eq!(
            p.rows.len(),
            cols.len() + 1,
            "a column named again is not repeated"
        );
        let get = |k: &str| p.rows.iter().find(|r| r.key == k).unwrap();
        let inst = get("inst");
        assert!(inst.change_pct.unwrap() < -80.0, "{inst:?}");
        let sh = get("sh_ld_req_per_block");
        assert!(sh.b.unwrap() < sh.a.unwrap() * 0.6, "{sh:?}");
        assert_eq!(
            get("blocks").change_pct,
            Some(-87.5),
            "65,536 blocks to 8,192"
        );
        // A metric the table did not collect reads as not measured.
        let dram = get("dram__bytes_read.sum");
        assert_eq!((dram.a, dram.change_pct), (None, None));
        assert_eq!(value(a, b, &cols, "inst").map(|(x, y)| y < x), Some(true));
        assert!(value(a, b, &cols, "no__such.metric").is_none());
    }

    #[test]
    fn llvm_and_nvcc_of_one_kernel_pair_up() {
        let rows = ncu_table_rows();
        let a = find(&rows, "reduce_v4", Backend::Llvm.into(), Dtype::F32).unwrap();
        let b = find(&rows, "reduce_v4", Backend::Nvcc.into(), Dtype::F32).unwrap();
        assert_eq!(a.backend, "llvm");
        assert_eq!(b.backend, "nvcc");
        let p = side_by_side("v4", a, b, &columns(Family::Reduce).unwrap(), &[]);
        assert!(
            p.rows
                .iter()
                .all(|r| r.a.is_some() || r.key == "ns_per_red"),
            "{p:?}"
        );
    }

    #[test]
    fn a_side_is_profiled_with_ncu_tables_defaults() {
        let o = options(Path::new("/o"), Some(Path::new("/bin/lab")), Backend::Nvcc).unwrap();
        assert_eq!(o.backend, catalog::Which::Nvcc);
        assert_eq!(o.out_dir(), Path::new("/o"));
        assert_eq!(o.lab.as_deref(), Some(Path::new("/bin/lab")));
        assert_eq!(o.select, crate::profiles::capture::Select::Nvtx);
        assert!(o.from.is_empty() && o.placement.is_none());
    }

    #[test]
    fn sizes_and_metrics_follow_the_family() {
        let mut r = catalog::records::Row::new(
            Family::Transpose,
            "transpose_tiled",
            Backend::Llvm,
            Dtype::F32,
            64,
            "8x8".into(),
            0,
        );
        assert_eq!(size_args(&r).join(" "), "--size 64 --rows 8 --cols 8");
        r.section = Family::Reduce;
        assert_eq!(size_args(&r).join(" "), "--size 64");
        let c = collect_for(Family::Reduce, &["dram__bytes_read.sum".into()]);
        assert!(c.metrics.contains(&metrics::INST.to_string()));
        assert_eq!(c.metrics.last().unwrap(), "dram__bytes_read.sum");
        assert!(
            c.sections.iter().any(|s| s == "SourceCounters"),
            "{:?}",
            c.sections
        );
        assert!(columns(Family::LaunchGap).is_none());
    }
}
