//! `lab canary <tool>`: launches one of the sanitizer's canaries (`gpu-kernels/src/canary.rs`),
//! kernels that are wrong on purpose, so `cargo xtask sanitize` can check that each
//! compute-sanitizer tool flags a planted fault before it trusts the tool's clean reports.
//!
//! The process exists only to be run under compute-sanitizer, which watches every access;
//! each launch below breaks exactly one rule and writes nothing outside its own allocations.
//! Without the sanitizer the synccheck canary's fault is undefined behaviour that may hang
//! its warp, so `xtask sanitize` gives every canary run a time limit.

use crate::error::{Ctx, HostError, Result};
use crate::lab::Lab;
use cust::function::{BlockSize, GridSize};
use cust::memory::DeviceBuffer;
use cust::module::Module;
use std::ffi::c_void;

/// Which tool's canary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Canary {
    /// `canary_oob_write`: a global write one element past its buffer
    Memcheck,
    /// `canary_shared_race`: threads of different warps write and read one shared word
    Racecheck,
    /// `canary_warp_sync_mask`: `bar.warp.sync` by a thread its mask leaves out
    Synccheck,
    /// `canary_uninit_read`: a read of device memory nothing has written
    Initcheck,
}

/// Elements of the memcheck canary's buffer: 4000 bytes, not a multiple of the driver's 256-byte
/// allocation alignment, so the element past the end lies in the allocation's padding, never in
/// another buffer (memcheck checks the size asked for, not the padded one).
const OOB_N: u32 = 1000;
/// Threads of the racecheck block: two or more warps.
const BLOCK: u32 = 64;
/// Threads of the synccheck block: one warp.
const WARP: u32 = 32;
/// Elements the initcheck canary reads.
const UNINIT_N: u32 = 256;

/// Launches `which` canary once and waits for it. Under its sanitizer tool the launch, or
/// the wait, may come back as an error: the sanitizer's report is the result, not this one.
pub fn run(which: Canary) -> Result<()> {
    let lab = Lab::new()?;
    // Loaded after `lab`, so dropped before its context.
    let module =
        Module::from_ptx(crate::ptx::canary()?, &[]).map_err(|source| HostError::ModuleLoad {
            backend: "canary",
            source,
        })?;
    let entry = match which {
        Canary::Memcheck => "canary_oob_write",
        Canary::Racecheck => "canary_shared_race",
        Canary::Synccheck => "canary_warp_sync_mask",
        Canary::Initcheck => "canary_uninit_read",
    };
    let f = module
        .get_function(entry)
        .map_err(|_| HostError::KernelNotFound {
            name: entry.into(),
            backend: "canary",
        })?;
    let stream = &lab.stream;
    let launched = match which {
        Canary::Memcheck => {
            let data = lab.upload(&[0u32; OOB_N as usize])?;
            let p = data.as_device_ptr();
            // SAFETY: deliberately out of bounds: the arguments match the kernel's (pointer,
            // u32 length), but it writes data[OOB_N], one element past the OOB_N-element
            // buffer, for memcheck to catch. Those 4 bytes lie in the allocation's alignment
            // padding (see OOB_N), so nothing else is overwritten.
            unsafe {
                stream.launch(
                    &f,
                    GridSize::x((OOB_N + 1).div_ceil(256)),
                    BlockSize::x(256),
                    0,
                    &[arg(&p), arg(&OOB_N)],
                )
            }
            .and_then(|()| stream.synchronize())
        }
        Canary::Racecheck => {
            let out = lab.upload(&[0u32; BLOCK as usize])?;
            let p = out.as_device_ptr();
            // SAFETY: deliberately racy: every thread writes and reads the same shared word
            // with no barrier, a data race racecheck must report. The accesses stay inside the
            // 4 bytes of shared memory given here and each thread writes only out[tid] of a
            // BLOCK-element buffer, so the race decides a value, never an address.
            unsafe { stream.launch(&f, GridSize::x(1), BlockSize::x(BLOCK), 4, &[arg(&p)]) }
                .and_then(|()| stream.synchronize())
        }
        Canary::Synccheck => {
            // SAFETY: deliberately breaks `bar.warp.sync`'s rule that the calling thread is in
            // its mask: thread 16 syncs on lanes 0..16, which synccheck must report. The kernel
            // takes no arguments and touches no memory; without the sanitizer the fault is
            // undefined behaviour of one warp's scheduling (it may end the launch with an error
            // or hang it, and `xtask sanitize` limits the run's time), never a stray access.
            unsafe { stream.launch(&f, GridSize::x(1), BlockSize::x(WARP), 0, &[]) }
                .and_then(|()| stream.synchronize())
        }
        Canary::Initcheck => {
            // SAFETY: deliberately breaks `uninitialized`'s contract (write before reading):
            // the kernel reads the contents, the fault initcheck must report. The host never
            // reads them, and any bits are a valid u32, so the kernel only sums unknown values.
            let input = unsafe { DeviceBuffer::<u32>::uninitialized(UNINIT_N as usize) }
                .ctx(|| "allocating the initcheck canary's input".into())?;
            let out = lab.upload(&[0u32])?;
            let (i, o) = (input.as_device_ptr(), out.as_device_ptr());
            // SAFETY: the kernel reads input[0..UNINIT_N) and writes out[0], both inside
            // their buffers; only the values read are undefined, on purpose.
            unsafe {
                stream.launch(
                    &f,
                    GridSize::x(1),
                    BlockSize::x(1),
                    0,
                    &[arg(&i), arg(&UNINIT_N), arg(&o)],
                )
            }
            .and_then(|()| stream.synchronize())
        }
    };
    launched.ctx(|| format!("running {entry}"))?;
    println!("canary: {entry} ran; it is wrong on purpose, for compute-sanitizer to flag");
    Ok(())
}

fn arg<T>(v: &T) -> *mut c_void {
    v as *const T as *mut c_void
}
