//! Raw driver calls cust 0.3 does not wrap: stream capture into a CUDA graph, and replay; a
//! kernel's allowance of dynamic shared memory; a launch in thread-block clusters, and how
//! many fit at once (`cuLaunchKernelEx`, `cuOccupancyMaxActiveClusters`: CUDA 12, and cust's
//! bindings are CUDA 11.4's, so they are declared here). All of the project's host-side FFI
//! lives here, behind `Graph`, [`allow_dynamic_shared`], [`launch_clusters`] and
//! [`max_active_clusters`].

use crate::error::{HostError, Result};
use catalog::rows::PORTABLE_CLUSTER;
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

/// The most blocks a cluster may have on sm_90 (past 8, the portable size, only once the
/// function allows it: [`launch_clusters`] does).
pub const MAX_CLUSTER: u32 = 16;

/// `CUlaunchAttributeValue` (cuda.h, CUDA 12): a 64-byte union, 8-byte aligned; its
/// `clusterDim` member is three `unsigned int`s at its start.
#[repr(C, align(8))]
struct LaunchAttributeValue([u32; 16]);

/// `CUlaunchAttribute`: the attribute's id, padding to 8 bytes, its value.
#[repr(C)]
struct LaunchAttribute {
    id: u32,
    pad: [u8; 4],
    value: LaunchAttributeValue,
}

/// `CUlaunchConfig`.
#[repr(C)]
struct LaunchConfig {
    grid: [u32; 3],
    block: [u32; 3],
    shared_mem_bytes: u32,
    stream: cu::CUstream,
    attrs: *mut LaunchAttribute,
    num_attrs: u32,
}

/// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`.
const LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: u32 = 4;
/// `CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE`, and its value
/// `CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING`.
const LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY: u32 = 5;
const CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING: u32 = 2;
/// `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED` (not in cust's CUDA 11.4 enum).
const FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: i32 = 14;

unsafe extern "C" {
    /// `cuLaunchKernelEx` (CUDA 12.0+ drivers).
    fn cuLaunchKernelEx(
        config: *const LaunchConfig,
        f: cu::CUfunction,
        params: *mut *mut std::ffi::c_void,
        extra: *mut *mut std::ffi::c_void,
    ) -> cu::CUresult;
    /// `cuOccupancyMaxActiveClusters` (CUDA 12.0+ drivers).
    fn cuOccupancyMaxActiveClusters(
        clusters: *mut i32,
        f: cu::CUfunction,
        config: *const LaunchConfig,
    ) -> cu::CUresult;
    /// `cuFuncSetAttribute` with the attribute as its C `int`, for attributes newer than
    /// cust's enum.
    #[link_name = "cuFuncSetAttribute"]
    fn cuFuncSetAttribute_int(f: cu::CUfunction, attr: i32, value: i32) -> cu::CUresult;
}

/// A 1-D launch of `f` in clusters of `cluster` blocks along x: `blocks` blocks of `threads`,
/// `shared_bytes` of dynamic shared memory, on `stream`, with `args` (pointers to each
/// parameter's value, in order); placed by the driver's load-balancing policy where
/// `balanced`, else by its default (spread). Refuses a cluster of 0 or more than
/// [`MAX_CLUSTER`] blocks, or a grid it does not divide; a cluster past 8 blocks is allowed
/// on `f` first.
///
/// # Safety
/// `args` must match `f`'s parameters in number, order and type, and what they point to must
/// be valid for the kernel (as for any launch); each pointer in `args` must stay valid until
/// this call returns.
pub unsafe fn launch_clusters(
    f: &cust::function::Function,
    (blocks, threads, cluster): (u32, u32, u32),
    shared_bytes: u32,
    balanced: bool,
    stream: &Stream,
    args: &[*mut std::ffi::c_void],
) -> Result<()> {
    if cluster == 0 || cluster > MAX_CLUSTER || !blocks.is_multiple_of(cluster) {
        return Err(HostError::Invalid {
            what: "cluster launch",
            detail: format!(
                "clusters of {cluster} blocks over a grid of {blocks}: a cluster has 1 to \
                 {MAX_CLUSTER} blocks and divides the grid"
            ),
        });
    }
    allow_cluster(f, cluster)?;
    let (mut attrs, num_attrs) = cluster_attributes(cluster, balanced);
    let config = LaunchConfig {
        grid: [blocks, 1, 1],
        block: [threads, 1, 1],
        shared_mem_bytes: shared_bytes,
        stream: stream.as_inner(),
        attrs: attrs.as_mut_ptr(),
        num_attrs,
    };
    let mut params: Vec<*mut std::ffi::c_void> = args.to_vec();
    // SAFETY: `config` and `attrs` are live for the call and laid out as cuda.h's structs;
    // `params` points to the caller's argument values (the caller's contract).
    let r = unsafe {
        cuLaunchKernelEx(
            &config,
            f.to_raw(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    check(r, "cuLaunchKernelEx", "cluster launch")
}

/// How many clusters of `cluster` blocks of `threads` threads, with `shared_bytes` of dynamic
/// shared memory each, `f` can have on the GPU at once, placed as [`launch_clusters`] places
/// them (`balanced`) (the driver's count, which knows how the SMs group into GPCs); refused
/// as [`launch_clusters`] refuses.
pub fn max_active_clusters(
    f: &cust::function::Function,
    (threads, cluster): (u32, u32),
    shared_bytes: u32,
    balanced: bool,
) -> Result<u32> {
    if cluster == 0 || cluster > MAX_CLUSTER {
        return Err(HostError::Invalid {
            what: "cluster occupancy",
            detail: format!("clusters of {cluster} blocks: a cluster has 1 to {MAX_CLUSTER}"),
        });
    }
    allow_cluster(f, cluster)?;
    let (mut attrs, num_attrs) = cluster_attributes(cluster, balanced);
    let config = LaunchConfig {
        grid: [cluster, 1, 1],
        block: [threads, 1, 1],
        shared_mem_bytes: shared_bytes,
        stream: std::ptr::null_mut(),
        attrs: attrs.as_mut_ptr(),
        num_attrs,
    };
    let mut n = 0i32;
    // SAFETY: `config` and `attrs` are live for the call and laid out as cuda.h's structs;
    // `f` is a live function; the call only writes `n`.
    let r = unsafe { cuOccupancyMaxActiveClusters(&mut n, f.to_raw(), &config) };
    check(r, "cuOccupancyMaxActiveClusters", "cluster occupancy")?;
    if n < 1 {
        return Err(HostError::Invalid {
            what: "cluster occupancy",
            detail: format!(
                "no cluster of {cluster} blocks of {threads} threads fits on this GPU at once"
            ),
        });
    }
    Ok(n as u32)
}

/// Lets `f` take clusters past the portable 8 blocks, where `cluster` is.
fn allow_cluster(f: &cust::function::Function, cluster: u32) -> Result<()> {
    if cluster <= PORTABLE_CLUSTER {
        return Ok(());
    }
    // SAFETY: `f` is a live function of a loaded module; the call only sets an attribute.
    let r = unsafe {
        cuFuncSetAttribute_int(
            f.to_raw(),
            FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
            1,
        )
    };
    check(
        r,
        "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)",
        "cluster launch",
    )
}

/// The launch attributes that set clusters of `cluster` blocks along x, and where `balanced`
/// the load-balancing placement: the array and how many of it the launch passes.
fn cluster_attributes(cluster: u32, balanced: bool) -> ([LaunchAttribute; 2], u32) {
    let attribute = |id, first: [u32; 3]| {
        let mut value = [0u32; 16];
        value[..3].copy_from_slice(&first);
        LaunchAttribute {
            id,
            pad: [0; 4],
            value: LaunchAttributeValue(value),
        }
    };
    let attrs = [
        attribute(LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, [cluster, 1, 1]),
        attribute(
            LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY,
            [CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING, 0, 0],
        ),
    ];
    (attrs, 1 + balanced as u32)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The structs match cuda.h's layout (CUDA 12, x86-64): sizes and the fields' offsets.
    #[test]
    fn launch_structs_have_cudas_layout() {
        assert_eq!(size_of::<LaunchAttributeValue>(), 64);
        assert_eq!(size_of::<LaunchAttribute>(), 72);
        assert_eq!(std::mem::offset_of!(LaunchAttribute, value), 8);
        assert_eq!(size_of::<LaunchConfig>(), 56);
        assert_eq!(std::mem::offset_of!(LaunchConfig, shared_mem_bytes), 24);
        assert_eq!(std::mem::offset_of!(LaunchConfig, stream), 32);
        assert_eq!(std::mem::offset_of!(LaunchConfig, attrs), 40);
        assert_eq!(std::mem::offset_of!(LaunchConfig, num_attrs), 48);
    }

    /// A cluster launch passes its size, and the load-balancing placement only where asked.
    #[test]
    fn a_cluster_launch_asks_its_placement_only_where_balanced() {
        let (attrs, n) = cluster_attributes(16, true);
        assert_eq!(n, 2);
        assert_eq!(attrs[0].id, LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
        assert_eq!(attrs[0].value.0[..3], [16, 1, 1]);
        assert_eq!(attrs[1].id, LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY);
        assert_eq!(
            attrs[1].value.0[0],
            CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING
        );
        let (attrs, n) = cluster_attributes(8, false);
        assert_eq!((n, attrs[0].value.0[0]), (1, 8));
    }
}
