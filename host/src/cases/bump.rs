//! The launch-gap demo kernel: `data[i] += 1`. The data is reset to its start before each
//! measured batch of launches; after `k` launches every element must be its start plus `k`.

use super::Case;
use super::verify::Mismatches;
use crate::error::{Ctx, Result};
use crate::lab::Lab;
use crate::launchers::{LaunchConfig, stream::bump};
use catalog::{Backend, Dtype};
use cust::function::Function;
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer};

/// `bump` over a copy of `start`, ready to launch.
pub struct Bump<'a> {
    lab: &'a Lab,
    backend: Backend,
    /// Looked up once: the launches are what the launch gap times.
    function: Function<'a>,
    config: LaunchConfig,
    start: Vec<f32>,
    data: DeviceBuffer<f32>,
}

impl<'a> Bump<'a> {
    /// `bump` on `backend` over `start.len()` floats that start at `start`.
    pub fn new(lab: &'a Lab, backend: Backend, start: Vec<f32>) -> Result<Self> {
        let function = lab.function(backend, &bump().entry(Dtype::F32))?;
        let config = lab.bump_config(backend, start.len() as u64)?;
        let data = lab.upload(&start)?;
        Ok(Bump {
            lab,
            backend,
            function,
            config,
            start,
            data,
        })
    }

    /// Elements bumped per launch.
    pub fn len(&self) -> usize {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// Compares the data with its start plus `launches`. The stream must be idle.
    pub fn verify(&self, launches: u32) -> Result<Mismatches> {
        let mut got = vec![0f32; self.start.len()];
        self.data
            .copy_to(&mut got[..])
            .ctx(|| "reading bump data".into())?;
        let want: Vec<f32> = self.start.iter().map(|s| s + launches as f32).collect();
        Ok(Mismatches::of(&got, &want))
    }
}

impl Case for Bump<'_> {
    fn config(&self) -> Option<LaunchConfig> {
        Some(self.config)
    }

    fn reset(&self) -> Result<()> {
        // SAFETY: `data` is a live allocation of `start.len()` floats that outlives the queue;
        // `start` is pageable, which the driver stages before this call returns.
        unsafe {
            self.data
                .index(..)
                .async_copy_from(&self.start[..], &self.lab.stream)
        }
        .ctx(|| "resetting bump data".into())
    }

    fn launch(&self) -> Result<()> {
        let lab = self.lab;
        lab.launch_bump(self.backend, &self.function, &self.data, &lab.stream)
    }
}
