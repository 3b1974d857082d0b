//! The lab's vocabulary: the compilers and what else runs a row, the element types, the kernel
//! families and the output formats, each a type named once for every flag, table and record.
//! A name read from a flag or a file becomes one of these at the edge; the code past it
//! passes the type on.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The compilers whose PTX the lab carries: the two Rust GPU compilers, and nvcc compiling the
/// same algorithms written in CUDA C++ (the reference the Rust versions are held to).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// rustc's built-in NVPTX backend (LLVM), sm_90
    Llvm = 0,
    /// rust-cuda's rustc_codegen_nvvm (libnvvm 11.8), its sm_80 PTX raised to sm_90
    Nvvm = 1,
    /// nvcc 13 -O3 -arch=sm_90 on the CUDA C++ twins (gpu-kernels/cuda/kernels.cu)
    Nvcc = 2,
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Llvm, Backend::Nvvm, Backend::Nvcc];
    /// The Rust compilers: what the headline ratios ("best reduction / CUB") are about.
    pub const RUST: [Backend; 2] = [Backend::Llvm, Backend::Nvvm];

    /// `llvm`, `nvvm`, `nvcc`: every table label and flag value.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Llvm => "llvm",
            Backend::Nvvm => "nvvm",
            Backend::Nvcc => "nvcc",
        }
    }

    pub fn is_rust(self) -> bool {
        self != Backend::Nvcc
    }

    pub fn from_name(name: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name() == name)
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What runs a launch or a results row: one compiler's kernel, CUB's library call (which picks
/// its own kernels), or the driver's device-to-device copy (`cuMemcpyDtoDAsync`). Written as
/// its name: `llvm`, `nvvm`, `nvcc`, `cub`, `driver`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Runner {
    /// A kernel of the catalogue, compiled by this backend.
    Compiled(Backend),
    /// CUB's `DeviceReduce::Sum`.
    Cub,
    /// The driver's copy.
    Driver,
}

impl Runner {
    pub const ALL: [Runner; 5] = [
        Runner::Compiled(Backend::Llvm),
        Runner::Compiled(Backend::Nvvm),
        Runner::Compiled(Backend::Nvcc),
        Runner::Cub,
        Runner::Driver,
    ];

    /// `llvm`, `nvvm`, `nvcc`, `cub`, `driver`: every table label and record.
    pub fn name(self) -> &'static str {
        match self {
            Runner::Compiled(b) => b.name(),
            Runner::Cub => "cub",
            Runner::Driver => "driver",
        }
    }

    pub fn from_name(name: &str) -> Option<Runner> {
        Runner::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The compiler whose code runs; None for the library call and the driver's copy.
    pub fn backend(self) -> Option<Backend> {
        match self {
            Runner::Compiled(b) => Some(b),
            Runner::Cub | Runner::Driver => None,
        }
    }

    /// One of the Rust compilers' kernels (not CUB, the driver's copy or a CUDA C++ twin).
    pub fn is_rust(self) -> bool {
        self.backend().is_some_and(Backend::is_rust)
    }

    /// The runner of a launch on `backend`, None being the library call (CUB).
    pub fn of(backend: Option<Backend>) -> Runner {
        backend.map_or(Runner::Cub, Runner::Compiled)
    }
}

impl From<Backend> for Runner {
    fn from(b: Backend) -> Runner {
        Runner::Compiled(b)
    }
}

impl PartialEq<Backend> for Runner {
    fn eq(&self, b: &Backend) -> bool {
        *self == Runner::Compiled(*b)
    }
}

impl std::fmt::Display for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A name no type of the vocabulary has: what parsing one at the edge says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unknown {
    pub what: &'static str,
    pub name: String,
    pub known: Vec<&'static str>,
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown {} '{}' (one of {})",
            self.what,
            self.name,
            self.known.join(", ")
        )
    }
}

impl std::error::Error for Unknown {}

/// `FromStr` through a type's `from_name` and its `ALL`.
macro_rules! from_str_by_name {
    ($t:ty, $what:literal) => {
        impl std::str::FromStr for $t {
            type Err = Unknown;
            fn from_str(name: &str) -> Result<$t, Unknown> {
                <$t>::from_name(name).ok_or_else(|| Unknown {
                    what: $what,
                    name: name.to_string(),
                    known: <$t>::ALL.iter().map(|x| x.name()).collect(),
                })
            }
        }
    };
}

from_str_by_name!(Backend, "backend");
from_str_by_name!(Runner, "runner");
from_str_by_name!(Dtype, "element type");
from_str_by_name!(SlotChoice, "placement");

impl Serialize for Runner {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Runner {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Runner, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Which compilers a command runs: one, the two Rust ones, or all three.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Which {
    /// rustc's NVPTX backend
    Llvm,
    /// rust-cuda's NVVM backend
    Nvvm,
    /// The CUDA C++ twins, compiled by nvcc
    Nvcc,
    /// Both Rust compilers
    Both,
    /// Both Rust compilers and nvcc
    All,
}

impl Which {
    pub fn backends(self) -> Vec<Backend> {
        match self {
            Which::Llvm => vec![Backend::Llvm],
            Which::Nvvm => vec![Backend::Nvvm],
            Which::Nvcc => vec![Backend::Nvcc],
            Which::Both => Backend::RUST.to_vec(),
            Which::All => Backend::ALL.to_vec(),
        }
    }

    /// The flag value (`both`).
    pub fn name(self) -> &'static str {
        match self {
            Which::Llvm => "llvm",
            Which::Nvvm => "nvvm",
            Which::Nvcc => "nvcc",
            Which::Both => "both",
            Which::All => "all",
        }
    }
}

/// Element types of the kernels and the results rows. The reductions are instantiated for
/// `f32` and `i32`, the row-wise family for `f32` and `bf16` (what `--dtype` takes); `u32`
/// names the roof rows whose words are counters.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    F32,
    I32,
    /// Counters and indices (the block, shared-memory, scattered-store and tile roofs).
    #[value(skip)]
    U32,
    /// bfloat16 (the row-wise family's inputs and outputs; f32 inside the kernels).
    Bf16,
}

impl Dtype {
    pub const ALL: [Dtype; 4] = [Dtype::F32, Dtype::I32, Dtype::U32, Dtype::Bf16];
    /// The element types the reductions are instantiated for.
    pub const SUMMED: [Dtype; 2] = [Dtype::F32, Dtype::I32];

    /// `f32`, `i32`, `u32`, `bf16`: the suffix of PTX entry points and every table's dtype
    /// column.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::I32 => "i32",
            Dtype::U32 => "u32",
            Dtype::Bf16 => "bf16",
        }
    }

    /// The type when the reductions are instantiated for it (`f32`, `i32`); None for `u32`,
    /// which only counting roofs state.
    pub fn summed(self) -> Option<Dtype> {
        Dtype::SUMMED.contains(&self).then_some(self)
    }

    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::Bf16 => 2,
        }
    }

    /// Whether some kernel is instantiated for it (`f32`, `i32`, `bf16`; not the counting
    /// roofs' `u32`): what the model predicts rows of.
    pub fn instantiated(self) -> bool {
        self != Dtype::U32
    }

    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a kernel is for; also the bench's sections and `--kernel`'s family names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// The hardware ceilings and roofs measured in every run (read stream, FMA peak, the
    /// atomic, shared-memory, block, scattered-store and tile-order roofs).
    Ceiling,
    /// Σ of a vector, into one result word.
    Reduce,
    /// Matrix transposes, and the copy kernel of the same bytes.
    Transpose,
    /// The launch-gap demo.
    LaunchGap,
    /// The microscope's fault catalogue: each fault planted in a kernel, and its fixed twin.
    /// Run only when `--kernel` names them (never in the default bench).
    Faults,
    /// Row-wise reductions fused with elementwise work (the chapter's Part II): softmax,
    /// RMSNorm, LayerNorm, one catalogue entry per schedule. Run only when `--kernel` names
    /// them, at their own shapes.
    Rows,
}

impl Family {
    pub const ALL: [Family; 6] = [
        Family::Ceiling,
        Family::Reduce,
        Family::Transpose,
        Family::LaunchGap,
        Family::Faults,
        Family::Rows,
    ];

    /// `ceiling`, `reduce`, `transpose`, `launch_gap`, `faults`, `rows`: the `--kernel`
    /// family names and the bench's sections.
    pub fn name(self) -> &'static str {
        match self {
            Family::Ceiling => "ceiling",
            Family::Reduce => "reduce",
            Family::Transpose => "transpose",
            Family::LaunchGap => "launch_gap",
            Family::Faults => "faults",
            Family::Rows => "rows",
        }
    }

    /// Other names `--kernel` accepts for the family.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Family::Reduce => &["reductions"],
            Family::Transpose => &["transposes"],
            Family::Faults => &["fault"],
            Family::Rows => &["row", "rowwise"],
            _ => &[],
        }
    }

    /// `reduction`, `transpose`, `ceiling`, `bump`, `fault`, `rowwise`: how `lab run`'s plan
    /// and manifest spell the family ([`plan_spelling`]).
    pub fn plan_name(self) -> &'static str {
        match self {
            Family::Reduce => "reduction",
            Family::Transpose => "transpose",
            Family::Ceiling => "ceiling",
            Family::LaunchGap => "bump",
            Family::Faults => "fault",
            Family::Rows => "rowwise",
        }
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A [`Family`] as the plan and the manifest write it (`#[serde(with = "plan_spelling")]`):
/// their own names ([`Family::plan_name`]); the bench's names read too.
pub mod plan_spelling {
    use super::Family;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(f: &Family, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(f.plan_name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Family, D::Error> {
        let name = String::deserialize(d)?;
        Family::ALL
            .into_iter()
            .find(|f| f.plan_name() == name || f.name() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown family '{name}'")))
    }
}

/// Which of the result word's candidate slots a run adds into (`lab run --placement`, which
/// `cargo xtask profile --placement` passes on). `lab` times the slots with its calibration
/// kernel (`host::placement::CALIBRATION`) outside any profiled range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SlotChoice {
    /// Slot 0, no calibration (what a plain allocation gets: either group, by luck).
    First,
    /// The fastest slot by [`CALIBRATION`].
    Fast,
    /// The slowest slot by [`CALIBRATION`] (to profile the other group).
    Slow,
}

impl SlotChoice {
    pub const ALL: [SlotChoice; 3] = [SlotChoice::First, SlotChoice::Fast, SlotChoice::Slow];

    /// `first`, `fast`, `slow`: the flag's values.
    pub fn name(self) -> &'static str {
        match self {
            SlotChoice::First => "first",
            SlotChoice::Fast => "fast",
            SlotChoice::Slow => "slow",
        }
    }

    pub fn from_name(name: &str) -> Option<SlotChoice> {
        SlotChoice::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether the run times the slots before its launches (every choice but the first).
    pub fn calibrates(self) -> bool {
        self != SlotChoice::First
    }
}

impl std::fmt::Display for SlotChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a command prints on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Aligned text tables
    Table,
    /// One JSON document
    Json,
    /// CSV, one row per line
    Csv,
}
