//! The host library's errors: each says what failed, with the values involved, and where a
//! user can act, what to do.

use cust::error::CudaError;

pub type Result<T> = std::result::Result<T, HostError>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    #[error(
        "no CUDA device found (the driver loaded but reports none): run on a machine with an NVIDIA GPU"
    )]
    NoDevice,
    #[error(
        "the CUDA driver is not usable ({0}): check that the NVIDIA driver is installed and `nvidia-smi` works"
    )]
    Driver(CudaError),
    /// The PTX is missing or stale; the message names the file and the command that makes it.
    #[error("{0}")]
    Ptx(String),
    #[error("the driver rejected the {backend} PTX module: {source}")]
    ModuleLoad {
        backend: &'static str,
        source: CudaError,
    },
    #[error(
        "kernel '{name}' is not in the {backend} PTX: the PTX does not match this host; run `cargo xtask ptx` and rebuild"
    )]
    KernelNotFound { name: String, backend: &'static str },
    #[error("{what} = {value} exceeds the limit of {limit} ({why})")]
    TooLarge {
        what: &'static str,
        value: u64,
        limit: u64,
        why: &'static str,
    },
    #[error("{what}: {detail}")]
    Invalid { what: &'static str, detail: String },
    #[error("out of GPU memory allocating {bytes} bytes ({free} of {total} bytes free)")]
    OutOfMemory { bytes: u64, free: u64, total: u64 },
    #[error("{op} failed: {source}")]
    Cuda { op: String, source: CudaError },
}

/// Attaches the operation's name to a driver error.
pub(crate) trait Ctx<T> {
    fn ctx(self, op: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Ctx<T> for std::result::Result<T, CudaError> {
    fn ctx(self, op: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| HostError::Cuda { op: op(), source })
    }
}
