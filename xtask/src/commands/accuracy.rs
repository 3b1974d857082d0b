//! `cargo xtask accuracy`: the diagnosis held to what the catalogue says each kernel must get,
//! over the fault catalogue (each fault named by its headline, each fixed twin clean) and the
//! chapter's kernels, as a list, a tally and a confusion table (see
//! [`crate::profiler::accuracy`]).

use crate::profiler::accuracy;
use crate::profiler::capture::Collect;
use crate::profiler::metrics;
use crate::profiler::ncu::{NcuOptions, emit};
use anyhow::{Result, bail};

#[derive(clap::Args)]
pub struct Args {
    /// The kernels to profile (with --from: to keep): NAME[,NAME...], a family, or all
    #[arg(long, default_value = "faults,reduce,transpose")]
    kernel: String,
    /// Elements per reduction
    #[arg(long, default_value_t = 1 << 24)]
    size: u64,
    /// Transpose rows and columns
    #[arg(long, default_value_t = 8192)]
    edge: u32,
    #[command(flatten)]
    ncu: NcuOptions,
}

pub fn run(args: &Args) -> Result<()> {
    let collect = Collect {
        set: Some(profiler::ncu::run::Set::Full),
        sections: Vec::new(),
        metrics: metrics::diagnosis(),
    };
    let size_args = vec![
        "--size".into(),
        args.size.to_string(),
        "--rows".into(),
        args.edge.to_string(),
        "--cols".into(),
        args.edge.to_string(),
    ];
    let (rows, how) = args
        .ncu
        .collect("accuracy", &args.kernel, collect, size_args)?;
    let judged = accuracy::judge(&rows);
    if judged.is_empty() {
        bail!(
            "no profiled kernel has a verdict the catalogue states (--kernel faults,reduce,transpose)"
        );
    }
    let text = accuracy::text(&judged, &how);
    let json = serde_json::to_string_pretty(&serde_json::json!({
        "how": how,
        "tally": accuracy::tally(&judged),
        "kernels": judged,
    }))?;
    let mut w = csv::Writer::from_writer(Vec::new());
    for j in &judged {
        w.serialize(j)?;
    }
    let csv = String::from_utf8(w.into_inner()?)?;
    emit(
        args.ncu.write_dir().as_deref(),
        "accuracy",
        args.ncu.format,
        &text,
        &json,
        &csv,
    )
}
