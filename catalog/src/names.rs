//! The compilers, element types and output formats, named once for every flag and table.

use serde::{Deserialize, Serialize};

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
    /// rust-cuda's rustc_codegen_nvvm (libnvvm 11.8), sm_80 PTX JIT-compiled for the GPU
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

/// Element types of the reductions.
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
}

impl Dtype {
    pub const ALL: [Dtype; 2] = [Dtype::F32, Dtype::I32];

    /// `f32`, `i32`: the suffix of PTX entry points and every table's dtype column.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::I32 => "i32",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> u64 {
        4
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
