//! `Lab`: the CUDA context, one stream, and the kernels' modules from llvm, nvvm and nvcc.

use crate::error::{Ctx, HostError, Result};
use catalog::Backend;
use cust::context::Context;
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::memory::{DeviceBuffer, DeviceCopy};
use cust::module::{Module, ModuleJitOption};
use cust::stream::{Stream, StreamFlags};
use std::collections::HashMap;
use std::sync::Mutex;

pub use catalog::records::DeviceInfo;

/// A cluster launch as the driver's occupancy count sees it: the backend's entry, threads per
/// block, blocks per cluster, and whether load balancing places them.
type ClusterShape = (Backend, String, u32, u32, bool);

pub struct Lab {
    /// One per backend, indexed by `Backend as usize`.
    modules: Vec<Module>,
    /// Non-blocking so graph capture works on it and it never syncs with the legacy stream.
    pub stream: Stream,
    pub info: DeviceInfo,
    device: Device,
    /// Clusters that fit on the GPU at once, by [`ClusterShape`]: asked of the driver once,
    /// not between a launch's timing events.
    clusters_at_once: Mutex<HashMap<ClusterShape, u32>>,
    // Dropped last: everything above lives in this context.
    _context: Context,
}

impl Lab {
    /// Initialises the driver, takes device 0's primary context and loads every compiler's PTX
    /// ([`crate::ptx`]: a missing or stale one is an error naming the command that makes it).
    pub fn new() -> Result<Lab> {
        let (device, context) = primary_context()?;
        let info = device_info(device).ctx(|| "reading device attributes".into())?;
        let stream =
            Stream::new(StreamFlags::NON_BLOCKING, None).ctx(|| "creating a stream".into())?;
        let modules = Backend::ALL
            .into_iter()
            .map(|b| {
                // Line tables ride along (like nvcc -lineinfo, no change to the code) so that
                // ncu's source page can charge samples to the kernels' source lines.
                Module::from_ptx(
                    crate::ptx::of(b)?,
                    &[ModuleJitOption::GenerateLineInfo(true)],
                )
                .map_err(|source| HostError::ModuleLoad {
                    backend: b.name(),
                    source,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Lab {
            modules,
            stream,
            info,
            device,
            clusters_at_once: Mutex::default(),
            _context: context,
        })
    }

    /// How many clusters of `cluster` blocks of `threads` threads `entry` can have on the GPU
    /// at once, placed by the load-balancing policy where `balanced` (asked of the driver once
    /// per combination).
    pub fn clusters_at_once(
        &self,
        backend: Backend,
        entry: &str,
        (threads, cluster): (u32, u32),
        shared_bytes: u32,
        balanced: bool,
    ) -> Result<u32> {
        let key = (backend, entry.to_string(), threads, cluster, balanced);
        let mut known = self
            .clusters_at_once
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(&n) = known.get(&key) {
            return Ok(n);
        }
        let f = self.function(backend, entry)?;
        let n = crate::ffi::max_active_clusters(&f, (threads, cluster), shared_bytes, balanced)?;
        known.insert(key, n);
        Ok(n)
    }

    /// The loaded module of one compiler's PTX.
    pub fn module(&self, backend: Backend) -> &Module {
        &self.modules[backend as usize]
    }

    /// The backends this binary launches: every compiler's PTX is always loaded.
    pub const BACKENDS: [Backend; 3] = Backend::ALL;

    /// [`Lab::BACKENDS`], as a list.
    pub fn backends(&self) -> Vec<Backend> {
        Self::BACKENDS.to_vec()
    }

    /// Free and total device memory, in bytes.
    pub fn memory(&self) -> Result<(u64, u64)> {
        let (free, total) = cust::memory::mem_get_info().ctx(|| "cuMemGetInfo".into())?;
        Ok((free as u64, total as u64))
    }

    /// Fails at once, with the numbers, when `bytes` of new allocations cannot fit in the
    /// GPU's free memory: callers check before generating inputs, so a size that cannot run
    /// is refused before any work.
    pub fn check_fits(&self, bytes: u64) -> Result<()> {
        let (free, total) = self.memory()?;
        check_fits(bytes, free, total)
    }

    /// Copies `data` to a new device buffer; running out of memory is reported with the
    /// sizes involved instead of a bare driver code.
    pub fn upload<T: DeviceCopy>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::from_slice(data).map_err(|e| self.alloc_error(e, std::mem::size_of_val(data)))
    }

    fn alloc_error(&self, e: CudaError, bytes: usize) -> HostError {
        match (e, self.memory()) {
            (CudaError::OutOfMemory, Ok((free, total))) => HostError::OutOfMemory {
                bytes: bytes as u64,
                free,
                total,
            },
            (source, _) => HostError::Cuda {
                op: format!("allocating {bytes} bytes"),
                source,
            },
        }
    }

    pub fn device(&self) -> Device {
        self.device
    }

    /// Waits for everything queued on the lab's stream.
    pub fn sync(&self) -> Result<()> {
        self.stream
            .synchronize()
            .ctx(|| "synchronizing the stream".into())
    }
}

/// Device 0 and its primary context, current on this thread.
fn primary_context() -> Result<(Device, Context)> {
    cust::init(cust::CudaFlags::empty()).map_err(|e| match e {
        CudaError::NoDevice => HostError::NoDevice,
        e => HostError::Driver(e),
    })?;
    let device = Device::get_device(0).map_err(|e| match e {
        CudaError::NoDevice | CudaError::InvalidDevice => HostError::NoDevice,
        e => HostError::Driver(e),
    })?;
    let context = Context::new(device).ctx(|| "creating the CUDA context".into())?;
    Ok((device, context))
}

/// Fails at once, with the numbers, when `bytes` cannot fit in device 0's free memory,
/// before any module is loaded: loading and JIT-compiling the three PTX sets takes longer
/// than a refusal should.
pub fn check_device_fits(bytes: u64) -> Result<()> {
    let (_device, _context) = primary_context()?;
    let (free, total) = cust::memory::mem_get_info().ctx(|| "cuMemGetInfo".into())?;
    check_fits(bytes, free as u64, total as u64)
}

/// `needed` bytes against `free` of `total` device bytes: the out-of-memory error, with all
/// three numbers, when they do not fit.
pub fn check_fits(needed: u64, free: u64, total: u64) -> Result<()> {
    if needed > free {
        return Err(HostError::OutOfMemory {
            bytes: needed,
            free,
            total,
        });
    }
    Ok(())
}

fn device_info(d: Device) -> cust::error::CudaResult<DeviceInfo> {
    let attr = |a| d.get_attribute(a);
    Ok(DeviceInfo {
        name: d.name()?,
        compute_capability: (
            attr(DeviceAttribute::ComputeCapabilityMajor)?,
            attr(DeviceAttribute::ComputeCapabilityMinor)?,
        ),
        sm_count: attr(DeviceAttribute::MultiprocessorCount)? as u32,
        l2_bytes: attr(DeviceAttribute::L2CacheSize)? as u64,
        memory_bytes: d.total_memory()? as u64,
        driver_cuda: {
            let v = cust::CudaApiVersion::get()?;
            format!("{}.{}", v.major(), v.minor())
        },
        sm_clock_khz: attr(DeviceAttribute::ClockRate)?,
        memory_clock_khz: attr(DeviceAttribute::MemoryClockRate)?,
        memory_bus_bits: attr(DeviceAttribute::GlobalMemoryBusWidth)?,
        shared_per_sm: attr(DeviceAttribute::MaxSharedMemoryPerMultiprocessor)? as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_fits_refuses_with_the_numbers() {
        assert!(check_fits(100, 100, 200).is_ok());
        assert!(check_fits(0, 0, 200).is_ok());
        let e = check_fits(160_000_000_000, 140_000_000_000, 150_000_000_000).unwrap_err();
        assert!(matches!(e, HostError::OutOfMemory { .. }), "{e:?}");
        let msg = e.to_string();
        for n in ["160000000000", "140000000000", "150000000000"] {
            assert!(msg.contains(n), "{n} missing in: {msg}");
        }
        assert_eq!(msg.lines().count(), 1, "{msg}");
    }
}
