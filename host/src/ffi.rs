//! Raw driver calls cust 0.3 does not wrap: stream capture into a CUDA graph, and replay; a
//! kernel's allowance of dynamic shared memory. All of the project's host-side FFI lives here,
//! behind `Graph` and [`allow_dynamic_shared`].

use crate::error::{HostError, Result};
use cust::stream::Stream;
use cust::sys as cu;

/// An instantiated CUDA graph, captured from a stream.
pub struct Graph {
    graph: cu::CUgraph,
    exec: cu::CUgraphExec,
}

/// Lets launches of `f` ask for up to `bytes` of dynamic shared memory (past the default 48
/// KiB, up to the device's per-block limit).
pub fn allow_dynamic_shared(f: &cust::function::Function, bytes: u32) -> Result<()> {
    let attr = cu::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    // SAFETY: `f` is a live function of a loaded module; the call only sets an attribute.
    let r = unsafe { cu::cuFuncSetAttribute(f.to_raw(), attr, bytes as i32) };
    check(
        r,
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
        "kernel attribute",
    )
}

fn check(r: cu::CUresult, op: &str, what: &'static str) -> Result<()> {
    if r == cu::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut msg: *const std::os::raw::c_char = std::ptr::null();
    // SAFETY: cuGetErrorString writes a pointer to a static string, or leaves it null.
    unsafe { cu::cuGetErrorString(r, &mut msg) };
    let text = if msg.is_null() {
        format!("{r:?}")
    } else {
        // SAFETY: non-null results point to NUL-terminated static strings.
        unsafe { std::ffi::CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned()
    };
    Err(HostError::Invalid {
        what,
        detail: format!("{op} failed: {text}"),
    })
}

impl Graph {
    /// Records everything `body` queues on `stream` (nothing runs), then instantiates it.
    /// `stream` must not be the legacy default stream.
    pub fn capture(stream: &Stream, body: impl FnOnce() -> Result<()>) -> Result<Graph> {
        let s = stream.as_inner();
        // SAFETY: `s` is a live stream owned by `stream`.
        check(
            unsafe {
                cu::cuStreamBeginCapture_v2(
                    s,
                    cu::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL,
                )
            },
            "cuStreamBeginCapture",
            "CUDA graph",
        )?;
        let queued = body();
        let mut graph = std::ptr::null_mut();
        // SAFETY: ends the capture begun above (also after an error, so the stream is usable).
        let ended = check(
            unsafe { cu::cuStreamEndCapture(s, &mut graph) },
            "cuStreamEndCapture",
            "CUDA graph",
        );
        queued?;
        ended?;
        let mut exec = std::ptr::null_mut();
        // SAFETY: `graph` is the valid graph just captured.
        if let Err(e) = check(
            unsafe { cu::cuGraphInstantiateWithFlags(&mut exec, graph, 0) },
            "cuGraphInstantiate",
            "CUDA graph",
        ) {
            // SAFETY: destroy the graph we own; exec was not created.
            unsafe { cu::cuGraphDestroy(graph) };
            return Err(e);
        }
        Ok(Graph { graph, exec })
    }

    /// Queues one replay of the whole graph on `stream`.
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        // SAFETY: `exec` is live until drop; `stream` is a live stream.
        check(
            unsafe { cu::cuGraphLaunch(self.exec, stream.as_inner()) },
            "cuGraphLaunch",
            "CUDA graph",
        )
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: both handles were created in `capture` and are destroyed exactly once.
        unsafe {
            cu::cuGraphExecDestroy(self.exec);
            cu::cuGraphDestroy(self.graph);
        }
    }
}
