//! `cargo xtask results-table RESULTS.json`: the reductions of one size as the README shows
//! them (GB/s per compiler, % of the read ceiling, ratio to CUB), generated from a bench results
//! file so that no figure in the docs is typed by hand. A test regenerates every table the
//! docs mark with `<!-- results-table PATH SIZE DTYPE -->` and compares.

use anyhow::{Result, bail};
use catalog::records::{Cache, Report, Row};
use catalog::{Backend, Dtype, Family, Runner};
use std::fmt::Write;
use std::path::PathBuf;
use studies::plot::results::{self, Measured};

#[derive(clap::Args)]
pub struct Args {
    /// A bench results file (`lab bench --out`)
    results: PathBuf,
    /// Reduction size, as the file labels it
    #[arg(long, default_value = "2^28")]
    size: String,
    /// Element type
    #[arg(long, default_value = "f32", value_parser = |s: &str| s.parse::<Dtype>())]
    dtype: Dtype,
    /// The rows of this cache, from a file measured hot and cold (`--cache both`)
    #[arg(long, value_enum)]
    cache: Option<Cache>,
}

pub fn run(args: &Args) -> Result<()> {
    let r = results::read(&args.results)?;
    let r = match (args.cache, r.caches().as_slice()) {
        (Some(c), _) => r.only(c),
        (None, [_]) => r,
        (None, _) => bail!(
            "{} holds hot and cold rows: pick one with --cache hot or --cache cold",
            args.results.display()
        ),
    };
    print!("{}", table(&r, &args.size, args.dtype)?);
    Ok(())
}

/// The compilers, in the table's column order, with their headers.
const BACKENDS: [(Backend, &str); 3] = [
    (Backend::Llvm, "llvm"),
    (Backend::Nvvm, "nvvm"),
    (Backend::Nvcc, "nvcc (C++)"),
];

/// The Markdown table: one line per reduction kernel (file order), CUB last.
pub fn table(r: &Report, size: &str, dtype: Dtype) -> Result<String> {
    let rows: Vec<&Row> = r
        .rows
        .iter()
        .filter(|x| x.section == Family::Reduce && x.size == size && x.dtype == dtype)
        .collect();
    if rows.is_empty() {
        bail!("no {dtype} reductions at {size} in this results file");
    }
    let mut kernels: Vec<&str> = Vec::new();
    for x in &rows {
        if x.backend != Runner::Cub && !kernels.contains(&x.kernel.as_str()) {
            kernels.push(&x.kernel);
        }
    }
    let find = |k: &str, b: Runner| rows.iter().find(|x| x.kernel == k && x.backend == b);
    let gbps = |x: Option<&&Row>| {
        x.and_then(|x| x.ok_gbps())
            .map_or("—".into(), |g| format!("{g:.0}"))
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| kernel | {} | % of read ceiling (llvm) | vs CUB (llvm) |",
        BACKENDS.map(|(_, h)| format!("{h} GB/s")).join(" | ")
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for k in kernels {
        let llvm = find(k, Backend::Llvm.into());
        let _ = writeln!(
            s,
            "| {k} | {} | {} | {} |",
            BACKENDS.map(|(b, _)| gbps(find(k, b.into()))).join(" | "),
            llvm.and_then(|x| x.pct_of_ceiling)
                .map_or("—".into(), |p| format!("{p:.1}")),
            llvm.and_then(|x| x.vs_reference)
                .map_or("—".into(), |v| format!("{v:.3}")),
        );
    }
    if let Some(cub) = find("cub_reduce_sum", Runner::Cub) {
        let _ = writeln!(
            s,
            "| CUB `DeviceReduce::Sum` | {} | | | {} | 1 |",
            gbps(Some(cub)),
            cub.pct_of_ceiling.map_or("—".into(), |p| format!("{p:.1}")),
        );
    }
    Ok(s)
}
