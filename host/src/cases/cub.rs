//! CUB's `cub::DeviceReduce::Sum`, the reference every reduction is compared with.
//!
//! The CUDA C++ shim `host/cub/cub_reduce.cu` is compiled by build.rs with nvcc into a static
//! library, linked with the static CUDA runtime (`cfg(has_cub)`). cudart works in the device's
//! primary context, which is the context `Lab` holds (cust's `Context::new` retains the primary
//! context), so `cust` device pointers and streams are valid on both sides. Without nvcc at
//! build time the bench still runs; the CUB rows say why they are missing.
//!
//! This file is the project's second FFI boundary besides `ffi.rs`; its calls exist only when
//! the shim is built.

use crate::error::{HostError, Result};
use crate::launchers::Elem;
use cust::memory::{DeviceBuffer, DeviceSlice};
use cust::stream::Stream;

#[cfg(has_cub)]
mod sys {
    use std::ffi::{c_char, c_int, c_void};

    // host/cub/cub_reduce.cu. Every function returns a cudaError_t (0 = success).
    unsafe extern "C" {
        /// `*bytes` = temp storage for a sum of `n` floats (no device access).
        pub fn lab_cub_sum_f32_temp_bytes(n: u64, bytes: *mut usize) -> c_int;
        pub fn lab_cub_sum_i32_temp_bytes(n: u64, bytes: *mut usize) -> c_int;
        /// Queues `*out = Σ input[0..n)` on `stream`. `temp`: device, `bytes` bytes; `input`:
        /// device, `n` elements; `out`: device, one element; `stream`: a CUstream.
        pub fn lab_cub_sum_f32(
            temp: *mut c_void,
            bytes: usize,
            input: *const f32,
            out: *mut f32,
            n: u64,
            stream: *mut c_void,
        ) -> c_int;
        pub fn lab_cub_sum_i32(
            temp: *mut c_void,
            bytes: usize,
            input: *const i32,
            out: *mut i32,
            n: u64,
            stream: *mut c_void,
        ) -> c_int;
        /// A static, NUL-terminated description of an error code.
        pub fn lab_cub_error_string(code: c_int) -> *const c_char;
        /// cudart's version, e.g. 13000.
        pub fn lab_cub_runtime_version() -> c_int;
    }
}

/// Why CUB is not in this binary, or `None` when it is.
pub fn unavailable() -> Option<&'static str> {
    #[cfg(has_cub)]
    return None;
    #[cfg(not(has_cub))]
    return Some(env!("LAB_CUB_MISSING"));
}

/// The CUDA runtime version CUB was linked with (`13.0`).
pub fn runtime_version() -> Option<String> {
    #[cfg(has_cub)]
    {
        // SAFETY: no arguments; cudart only reads its own version.
        let v = unsafe { sys::lab_cub_runtime_version() };
        Some(format!("{}.{}", v / 1000, (v % 1000) / 10))
    }
    #[cfg(not(has_cub))]
    None
}

/// Element types CUB sums here.
pub trait CubElem: Elem {
    #[doc(hidden)]
    fn temp_bytes(n: u64) -> std::result::Result<usize, i32>;
    /// # Safety
    /// `temp` holds `bytes` device bytes, `input` `n` elements, `out` one; `stream` is live.
    #[doc(hidden)]
    unsafe fn sum(temp: u64, bytes: usize, input: u64, out: u64, n: u64, stream: &Stream) -> i32;
}

macro_rules! cub_elem {
    ($t:ty, $temp:ident, $sum:ident) => {
        impl CubElem for $t {
            fn temp_bytes(_n: u64) -> std::result::Result<usize, i32> {
                #[cfg(has_cub)]
                {
                    let mut bytes = 0usize;
                    // SAFETY: a size query: CUB writes `bytes` and touches no device memory.
                    match unsafe { sys::$temp(_n, &mut bytes) } {
                        0 => Ok(bytes),
                        e => Err(e),
                    }
                }
                #[cfg(not(has_cub))]
                Err(-1)
            }
            unsafe fn sum(
                _temp: u64,
                _bytes: usize,
                _input: u64,
                _out: u64,
                _n: u64,
                _stream: &Stream,
            ) -> i32 {
                #[cfg(has_cub)]
                // SAFETY: the caller's contract (see the trait) is the shim's.
                return unsafe {
                    sys::$sum(
                        _temp as *mut _,
                        _bytes,
                        _input as *const $t,
                        _out as *mut $t,
                        _n,
                        _stream.as_inner() as *mut _,
                    )
                };
                #[cfg(not(has_cub))]
                -1
            }
        }
    };
}
cub_elem!(f32, lab_cub_sum_f32_temp_bytes, lab_cub_sum_f32);
cub_elem!(i32, lab_cub_sum_i32_temp_bytes, lab_cub_sum_i32);

/// A `DeviceReduce::Sum` of `n` elements of `T`, with its temp storage allocated.
pub struct CubSum<T> {
    temp: DeviceBuffer<u8>,
    bytes: usize,
    n: u64,
    _t: std::marker::PhantomData<T>,
}

impl<T: CubElem> CubSum<T> {
    /// Queries and allocates the temp storage for `n` elements.
    pub fn new(n: u64) -> Result<CubSum<T>> {
        if let Some(why) = unavailable() {
            return Err(HostError::Invalid {
                what: "CUB",
                detail: why.to_string(),
            });
        }
        let bytes = T::temp_bytes(n).map_err(|e| cub_error("DeviceReduce::Sum size query", e))?;
        let temp = DeviceBuffer::zeroed(bytes.max(1)).map_err(|source| HostError::Cuda {
            op: format!("allocating {bytes} bytes of CUB temp storage"),
            source,
        })?;
        Ok(CubSum {
            temp,
            bytes,
            n,
            _t: std::marker::PhantomData,
        })
    }

    /// Queues `out[0] = Σ input` on `stream` (CUB overwrites `out`: nothing to zero).
    pub fn launch(
        &self,
        input: &DeviceSlice<T>,
        out: &DeviceSlice<T>,
        stream: &Stream,
    ) -> Result<()> {
        if input.len() as u64 != self.n || out.is_empty() {
            return Err(HostError::Invalid {
                what: "CUB sum buffers",
                detail: format!(
                    "input has {} elements (temp storage sized for {}), out {}",
                    input.len(),
                    self.n,
                    out.len()
                ),
            });
        }
        // SAFETY: temp holds `bytes` bytes (sized by CUB's own query for `n`), input `n`
        // elements and out one (checked above); all three and `stream` outlive the launch,
        // since the caller synchronizes before dropping them.
        let e = unsafe {
            T::sum(
                self.temp.as_device_ptr().as_raw(),
                self.bytes,
                input.as_device_ptr().as_raw(),
                out.as_device_ptr().as_raw(),
                self.n,
                stream,
            )
        };
        match e {
            0 => Ok(()),
            e => Err(cub_error("DeviceReduce::Sum", e)),
        }
    }
}

fn cub_error(op: &str, code: i32) -> HostError {
    #[cfg(has_cub)]
    let text = {
        // SAFETY: cudaGetErrorString returns a static NUL-terminated string for any code.
        let p = unsafe { sys::lab_cub_error_string(code) };
        if p.is_null() {
            format!("error {code}")
        } else {
            // SAFETY: non-null, static, NUL-terminated (above).
            let s = unsafe { std::ffi::CStr::from_ptr(p) };
            format!("{} (cudaError {code})", s.to_string_lossy())
        }
    };
    #[cfg(not(has_cub))]
    let text = format!("CUB is not built in (code {code})");
    HostError::Invalid {
        what: "CUB",
        detail: format!("{op} failed: {text}"),
    }
}
