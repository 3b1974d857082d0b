//! The records that cross between `lab` and `xtask` as JSON: `lab run --plan`'s plan,
//! `lab run --manifest`'s manifest, and `lab bench`'s results file ([`results`], with the
//! result word's [`placement`] and the run's [`roofs`]). `lab` writes them, `xtask` reads them, both through these
//! types.

pub mod placement;
pub mod results;
pub mod roofs;

pub use placement::{Group, Placement, SlotTimes};
pub use results::{Cache, CacheMode, Clocks, Config, Device, Report, Row, SCHEMA_VERSION, Status};
pub use roofs::{LoadWait, Roofs};

use crate::names::plan_spelling;
use crate::{Backend, Family, Runner};
use serde::{Deserialize, Serialize};

/// What `lab` prints on stderr before the path of every file it writes (`wrote PATH`).
pub const WROTE: &str = "wrote ";

/// The paths a `lab` run's stderr says it wrote, in order (the lines that start with
/// [`WROTE`]).
pub fn written(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(WROTE))
        .collect()
}

/// Problem sizes of one `lab run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sizes {
    /// Elements of the reductions, the stream kernels and `bump`.
    pub n: u64,
    /// Transpose input rows and columns.
    pub rows: u32,
    pub cols: u32,
    /// Elements the reduction inputs start past a 16-byte boundary (0–3: misaligned starts).
    pub offset: u32,
}

/// One launch `lab run` will make, known before touching the GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Planned {
    /// `reduce_v3 [llvm]`: how every table labels this launch.
    pub label: String,
    /// `reduce_v3` (`reduce_v3_i32` for the i32 instance): what `lab run --kernel` takes.
    pub kernel: String,
    /// `reduce_v3_f32`: the name ncu and nsys report (CUB: the library call).
    pub entry: String,
    /// Written `reduction`, `transpose`, `ceiling`, `bump` or `fault` ([`Family::plan_name`]).
    #[serde(with = "plan_spelling")]
    pub family: Family,
    /// `llvm`, `nvvm`, `nvcc`; `cub` for CUB's library call.
    pub backend: Runner,
    /// Elements the kernel processes (rows × cols for a transpose).
    pub elements: u64,
    /// Launches of `entry` the run makes (2 for a two-pass kernel). Written only when not 1,
    /// so a one-launch plan keeps its shape and plans without the field read as 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub launches: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// Everything `lab run` will launch, in order (`lab run --plan`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub sizes: Sizes,
    /// Backends the binary carries: `llvm`, `nvvm`, `nvcc`.
    pub backends_built: Vec<Backend>,
    /// Notes about what was skipped and why.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The NVTX filter that selects the profiled launches.
    pub nvtx_filter: String,
    pub launches: Vec<Planned>,
}

/// Grid, block, dynamic shared memory and blocks per cluster of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchConfig {
    pub grid: (u32, u32),
    pub block: (u32, u32),
    pub shared_bytes: u32,
    /// Blocks per thread-block cluster along x (1: no cluster). Written only when not 1, and
    /// read as 1 where absent.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub cluster: u32,
}

/// What one profiled launch did, and whether its result was right.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Launched {
    /// What was planned (its fields appear at the top level of the manifest's JSON).
    #[serde(flatten)]
    pub planned: Planned,
    /// Grid, block and shared memory (None for CUB, which picks its own).
    pub config: Option<LaunchConfig>,
    /// The result matched the CPU reference.
    pub ok: bool,
    /// What was compared: values, error and bound.
    pub check: String,
}

/// Facts about the GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub name: String,
    pub compute_capability: (i32, i32),
    pub sm_count: u32,
    pub l2_bytes: u64,
    pub memory_bytes: u64,
    /// CUDA version the driver supports, e.g. "13.0".
    pub driver_cuda: String,
    pub sm_clock_khz: i32,
    pub memory_clock_khz: i32,
    pub memory_bus_bits: i32,
    /// Shared memory of one SM, in bytes (what blocks resident on it share).
    pub shared_per_sm: u32,
}

/// The manifest `lab run --manifest` writes: the device, the plan, then what each launch did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub device: DeviceInfo,
    pub plan: Plan,
    pub launches: Vec<Launched>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_paths_are_read_off_the_wrote_lines() {
        let err = "note: x\nwrote results/a.txt\nbench: 3 rows\nwrote results/a.json\n";
        assert_eq!(written(err), ["results/a.txt", "results/a.json"]);
    }
}
