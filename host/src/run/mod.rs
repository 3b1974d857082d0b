//! `lab run`: each selected kernel launched exactly once, for ncu and nsys.
//!
//! A profiler replays or traces every launch it sees, so a benchmark loop is the wrong thing
//! to profile. For every (kernel, backend) this module
//!
//! 1. fills the inputs (random, seeded) and computes the CPU reference,
//! 2. launches once untimed inside the NVTX range [`WARMUP_RANGE`] (module JIT, lazy loading
//!    and first-touch costs land here, not in the profiled launch),
//! 3. resets the output outside any range,
//! 4. launches exactly once inside the push/pop range [`PROFILE_RANGE`] of the lab's NVTX
//!    domain, and waits for it,
//! 5. copies the result back and checks it against the CPU reference (`ok` / `FAILED`).
//!
//! ncu selects step 4 with `--nvtx --nvtx-include "kernel-lab@profile/"` ([`NVTX_FILTER`]);
//! when one kernel on one backend is run, `--kernel-name <entry> --launch-skip 1
//! --launch-count 1` selects the same launch without NVTX.
//!
//! CUB's `DeviceReduce::Sum` (`cub_reduce_sum`) runs the same way when the binary links it
//! (`cases::cub`); it is one launch whatever `--backend` says (it is not compiled from Rust),
//! and ncu sees CUB's own kernels (typically two: tiles, then a single-block finish).
//!
//! The kernels are the catalogue's ([`catalog::select`] resolves `--kernel`); a new catalogue
//! entry of a known family runs here without a change. What each launch reads, resets and
//! checks is its family's case (`crate::cases`), the same `lab bench` times.
//!
//! - `plan`: `--kernel` resolved, the launches planned, the memory they need; a plan given
//!   back (`--from-plan`, how xtask's profilers run what `--plan` resolved) checked;
//! - `launch`: the launches;
//! - [`predict`]: `--predict`, the model's time for each kernel from a run's roofs, no GPU;
//! - this module: the command (its output lines, `--list`, `--manifest`).

mod launch;
mod plan;
pub mod predict;
#[cfg(test)]
mod tests;

pub use catalog::nvtx::{NVTX_FILTER, PROFILE_RANGE, WARMUP_RANGE};
pub use catalog::records::{Launched, Manifest, Plan, Planned, Sizes};
pub use launch::run;
pub use plan::{
    DEFAULT_EDGE, DEFAULT_N, RunKernel, bytes_needed, check, default_sizes, plan, select,
};

use crate::error::{HostError, Result};
use crate::files::{report_written, write_atomic};
use crate::lab::Lab;
use crate::nvtx;
use crate::placement::{Placement, ResultSlots, SlotChoice};
use catalog::{Family, Which};

/// `reduce_v3 [llvm]  grid 65536×1  block 256×1  smem 1024 B  ok (…)`.
pub fn line(l: &Launched) -> String {
    let launch = match &l.config {
        Some(c) if c.cluster > 1 => format!(
            "grid {}×{}  block {}×{}  cluster {}  smem {} B",
            c.grid.0, c.grid.1, c.block.0, c.block.1, c.cluster, c.shared_bytes
        ),
        Some(c) => format!(
            "grid {}×{}  block {}×{}  smem {} B",
            c.grid.0, c.grid.1, c.block.0, c.block.1, c.shared_bytes
        ),
        None => "launch chosen by the library".to_string(),
    };
    format!(
        "{:<24} {launch}  {} ({})",
        l.planned.label,
        if l.ok { "ok" } else { "FAILED" },
        l.check
    )
}

/// `lab run --list`: the families, then every kernel with its PTX entry.
pub fn names_help() -> String {
    let mut s = String::from("groups:\n");
    s += &format!("  {:<18} every kernel\n", "all");
    for f in Family::ALL {
        let names: Vec<&str> = catalog::KERNELS
            .iter()
            .filter(|k| k.family == f)
            .map(|k| k.name)
            .collect();
        let mut g = f.name().to_string();
        for a in f.aliases() {
            g += &format!(", {a}");
        }
        s += &format!("  {g:<18} {}\n", names.join(", "));
    }
    s += "kernels (PTX entry in brackets):\n";
    for k in catalog::KERNELS {
        for &d in k.dtypes {
            let r = RunKernel {
                kernel: k,
                dtype: d,
            };
            s += &format!("  {:<18} [{}]\n", r.name(), r.entry());
        }
        if k.dtypes.is_empty() {
            s += &format!("  {:<18} [{}]\n", k.name, k.name);
        }
    }
    s
}

/// `--kernel`, `--backend` and the sizes, as given.
#[derive(Clone, Debug)]
pub struct Named {
    /// `--kernel`: names, families or unique parts of names, comma-separated.
    pub kernels: String,
    pub which: Which,
    pub sizes: Sizes,
}

/// What `lab run` launches.
#[derive(Clone, Debug)]
pub enum Launches {
    /// The kernels named, resolved here into a plan.
    Named(Named),
    /// A plan resolved before (`--from-plan`: what `lab run --plan` printed, or some of its
    /// launches), run as it is once [`check`]ed.
    Planned(Plan),
}

impl Launches {
    /// The plan to run.
    pub fn plan(&self) -> Result<Plan> {
        match self {
            Launches::Named(n) => plan(&select(&n.kernels)?, n.which, n.sizes),
            Launches::Planned(p) => {
                check(p)?;
                Ok(p.clone())
            }
        }
    }
}

/// Reads the plan `--from-plan FILE` names.
pub fn read_plan(path: &std::path::Path) -> Result<Plan> {
    let invalid = |detail: String| HostError::Invalid {
        what: "--from-plan",
        detail,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| invalid(format!("could not read '{}': {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| invalid(format!("'{}' is not a plan: {e}", path.display())))
}

/// What `lab run` was asked to do (parsed by the binary's argument layer).
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub launches: Launches,
    pub seed: u64,
    /// Where the reductions' result word goes (`--placement`).
    pub placement: SlotChoice,
    /// `--plan`: print the plan as JSON, touch no GPU.
    pub plan_only: bool,
    /// `--manifest FILE`: write the launches and their checks as JSON.
    pub manifest: Option<std::path::PathBuf>,
}

/// `lab run`: one line per launch on stdout. Returns whether every result was right.
pub fn run_cli(req: &RunRequest) -> Result<bool> {
    let plan = req.launches.plan()?;
    if req.plan_only {
        let json = serde_json::to_string_pretty(&plan).expect("the plan serializes");
        println!("{json}");
        return Ok(true);
    }
    crate::lab::check_device_fits(bytes_needed(&plan))?;
    let lab = Lab::new()?;
    for note in &plan.notes {
        eprintln!("note: {note}");
    }
    println!(
        "lab run: {} ({} SMs), reductions n = {}, transposes {}×{}; one warm-up, then one launch in NVTX range '{}'",
        lab.info.name,
        lab.info.sm_count,
        plan.sizes.n,
        plan.sizes.rows,
        plan.sizes.cols,
        PROFILE_RANGE
    );
    let mut slots = ResultSlots::new()?;
    if req.placement.calibrates()
        && plan
            .launches
            .iter()
            .any(|l| plan::planned_kernel(l).kernel.family == Family::Reduce)
    {
        // Outside the NVTX range `profile`: ncu's default selection never sees these launches.
        let _r = nvtx::range("result word placement");
        slots.choose(&lab, req.placement)?;
        println!("{}", Placement::from(&slots).describe());
    }
    let launched = run(&lab, &plan, req.seed, &slots, |l| println!("{}", line(l)))?;
    if let Some(path) = &req.manifest {
        let m = Manifest {
            device: lab.info.clone(),
            plan: plan.clone(),
            launches: launched.clone(),
        };
        let json = serde_json::to_string_pretty(&m).expect("the manifest serializes");
        write_atomic(path, json.as_bytes()).map_err(|e| HostError::Invalid {
            what: "--manifest",
            detail: e.to_string(),
        })?;
        report_written(path);
    }
    let failed = launched.iter().filter(|l| !l.ok).count();
    if failed > 0 {
        eprintln!(
            "error: {failed} of {} launches FAILED verification",
            launched.len()
        );
    }
    Ok(failed == 0)
}
