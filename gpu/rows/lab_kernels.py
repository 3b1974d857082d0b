"""The lab's Rust row kernels, launched from Python in the peers' rotation (`peers.py --lab`).

The lab's bench and peers.py each time their implementations against a D2D copy of their own,
by their own method (the lab poisons its output by a memset before each launch; peers.py spins
the GPU, then fills an output-sized buffer). To compare the Rust kernels with the peers by one
method, peers.py also times them itself: the PTX the lab ran (`dist/ptx/<backend>/`), loaded
into PyTorch's CUDA context through the driver API (ctypes, libcuda), each kernel launched
exactly as the lab launched it on this GPU (entry, grid, block, cluster, dynamic shared
memory: the `entry` and `launch` of the lab bench's `rows-<stem>.json`, the schedule the
catalogue chooses), with PyTorch's tensors as its arguments.
"""

import ctypes
import gzip
import json
import os

# cuda.h's values.
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5
CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING = 2
CU_JIT_GENERATE_LINE_INFO = 13
# Dynamic shared memory a kernel may ask without opting in first.
DEFAULT_SHARED_BYTES = 48 * 1024
PORTABLE_CLUSTER = 8
# The lab's Rust implementations, as the lab's records name them.
IMPLEMENTATIONS = ("rust-llvm", "rust-nvvm")


class LabError(Exception):
    pass


class _ClusterDim(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class _AttrValue(ctypes.Union):
    _fields_ = [("cluster", _ClusterDim), ("policy", ctypes.c_uint), ("pad", ctypes.c_char * 64)]


class _LaunchAttribute(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", _AttrValue)]


class _LaunchConfig(ctypes.Structure):
    _fields_ = [
        ("grid", ctypes.c_uint * 3),
        ("block", ctypes.c_uint * 3),
        ("shared_bytes", ctypes.c_uint),
        ("stream", ctypes.c_void_p),
        ("attrs", ctypes.POINTER(_LaunchAttribute)),
        ("num_attrs", ctypes.c_uint),
    ]


def launch_attributes(launch):
    """The launch attributes the lab sets for `launch` (its record): for the cluster schedule
    (clusters of 2 blocks or more) the cluster's size, and the load-balancing placement where
    the record says `balanced` (a record written before it: the default placement); none for
    the other schedules, which the lab launches plainly."""
    if launch["cluster"] <= 1:
        return []
    size = _LaunchAttribute()
    size.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    size.value.cluster = _ClusterDim(launch["cluster"], 1, 1)
    attrs = [size]
    if launch.get("balanced", False):
        policy = _LaunchAttribute()
        policy.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
        policy.value.policy = CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING
        attrs.append(policy)
    return attrs


def recorded_launches(lab_json_text, schedule=None):
    """(op, rows, cols, dtype, implementation) -> (entry, launch) for the verified rows of a
    lab rows file that record their launch: those of the schedule the catalogue chooses, or
    with `schedule` those of that schedule (`streamed`, …: the bench runs every schedule that
    holds a shape)."""
    doc = json.loads(lab_json_text)
    plans = {}
    for r in doc.get("rows", []):
        taken = r.get("schedule") == schedule if schedule else r.get("chosen")
        if taken and r.get("launch") and r.get("implementation") in IMPLEMENTATIONS:
            key = (r["op"], r["rows"], r["cols"], r["dtype"], r["implementation"])
            plans[key] = (r["entry"], r["launch"])
    if not plans:
        which = f"row of the {schedule} schedule" if schedule else "chosen row"
        raise LabError(
            f"the lab's rows file has no {which} with its launch: pass the rows-<stem>.json "
            "that `lab bench --kernel rows` wrote in this run"
        )
    return plans


class Driver:
    """libcuda's calls, on the context current on this thread (PyTorch's primary context)."""

    def __init__(self):
        try:
            self.cu = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise LabError(f"no CUDA driver ({e}): --lab needs the GPU machine") from e
        self.cu.cuLaunchKernelEx.argtypes = [
            ctypes.POINTER(_LaunchConfig),
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_void_p,
        ]

    def check(self, rc, what):
        if rc != 0:
            name = ctypes.c_char_p()
            self.cu.cuGetErrorName(rc, ctypes.byref(name))
            raise LabError(f"{what}: {name.value.decode() if name.value else rc}")

    def load(self, ptx):
        """The module JIT-compiled from ptx with line info, as the lab loads it."""
        module = ctypes.c_void_p()
        options = (ctypes.c_int * 1)(CU_JIT_GENERATE_LINE_INFO)
        values = (ctypes.c_void_p * 1)(1)
        rc = self.cu.cuModuleLoadDataEx(ctypes.byref(module), ctypes.c_char_p(ptx), 1, options, values)
        self.check(rc, "cuModuleLoadDataEx")
        return module

    def function(self, module, entry):
        f = ctypes.c_void_p()
        self.check(
            self.cu.cuModuleGetFunction(ctypes.byref(f), module, entry.encode()),
            f"cuModuleGetFunction {entry}",
        )
        return f

    def set_attribute(self, f, attribute, value, what):
        self.check(self.cu.cuFuncSetAttribute(f, ctypes.c_int(attribute), ctypes.c_int(value)), what)

    def launch(self, f, launch, stream, params):
        """One launch of f: `launch` is the lab's (blocks, threads, cluster, shared_bytes,
        balanced)."""
        config = _LaunchConfig()
        config.grid[:] = (launch["blocks"], 1, 1)
        config.block[:] = (launch["threads"], 1, 1)
        config.shared_bytes = launch["shared_bytes"]
        config.stream = stream
        # The lab launches its cluster schedule through the cluster launch whatever its size,
        # and every other one as a plain launch (no attribute): so does this.
        attrs = launch_attributes(launch)
        array = (_LaunchAttribute * len(attrs))(*attrs) if attrs else None
        config.attrs = ctypes.cast(array, ctypes.POINTER(_LaunchAttribute)) if attrs else None
        config.num_attrs = len(attrs)
        # kernelParams: the address of each argument's value (params keeps them alive).
        values = (ctypes.c_void_p * len(params))(*[ctypes.addressof(p) for p in params])
        self.check(self.cu.cuLaunchKernelEx(ctypes.byref(config), f, values, None), "cuLaunchKernelEx")


def ptx_paths(lab_json_text, ptx_dir=None):
    """backend -> the PTX file its kernels come from: under ptx_dir where given
    (`<backend>/gpu_kernels.ptx.gz`, as `dist/ptx` lays it out), else the file the lab's run
    loaded, as its rows file records it."""
    if ptx_dir:
        backends = (impl.removeprefix("rust-") for impl in IMPLEMENTATIONS)
        return {b: os.path.join(ptx_dir, b, "gpu_kernels.ptx.gz") for b in backends}
    return json.loads(lab_json_text).get("ptx", {})


class LabKernels:
    """The lab's chosen row kernels of one run, or those of one schedule
    ([`recorded_launches`]): `function(impl, key, eps)` gives a (x, w, b) -> y that launches the
    kernel on PyTorch's current stream."""

    def __init__(self, lab_json_path, ptx_dir=None, schedule=None):
        with open(lab_json_path) as f:
            text = f.read()
        self.plans = recorded_launches(text, schedule)
        self.ptx = ptx_paths(text, ptx_dir)
        self.driver = None
        self.modules = {}
        self.functions = {}

    def _module(self, backend):
        if backend not in self.modules:
            path = self.ptx.get(backend)
            if path is None:
                raise LabError(f"the lab's rows file names no {backend} PTX: pass --ptx (dist/ptx)")
            try:
                with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
                    ptx = f.read() + b"\0"
            except OSError as e:
                raise LabError(f"no PTX at {path} ({e}): pass --ptx, or carry dist/ built by `cargo xtask dist`") from e
            self.modules[backend] = self.driver.load(ptx)
        return self.modules[backend]

    def _function(self, backend, entry, launch):
        """The entry's function, allowed what this launch asks (once per case: a function
        first launched in small clusters may be launched in larger ones by the next case)."""
        key = (backend, entry)
        if key not in self.functions:
            self.functions[key] = self.driver.function(self._module(backend), entry)
        f = self.functions[key]
        if launch["shared_bytes"] > DEFAULT_SHARED_BYTES:
            self.driver.set_attribute(
                f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, launch["shared_bytes"], entry
            )
        if launch["cluster"] > PORTABLE_CLUSTER:
            self.driver.set_attribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1, entry)
        return f

    def runs(self, impl, key):
        """Whether the lab ran impl's kernel for key = (op, rows, cols, dtype): where it
        did not (a rows file from before rust-nvvm built the cluster schedule), the implementation
        is left out of the case."""
        return (*key, impl) in self.plans

    def function(self, impl, key, eps):
        """The lab's kernel for key = (op, rows, cols, dtype) on impl (`rust-llvm`,
        `rust-nvvm`), as a (x, w, b) -> y; LabError where the lab did not run it."""
        import torch

        plan = self.plans.get((*key, impl))
        if plan is None:
            raise LabError(f"the lab's rows file has no {impl} row taken for {key[0]} {key[1]}x{key[2]} {key[3]}")
        if self.driver is None:
            torch.cuda.init()
            torch.zeros(1, device="cuda")  # makes PyTorch's context current on this thread
            self.driver = Driver()
        entry, launch = plan
        f = self._function(impl.removeprefix("rust-"), entry, launch)
        rows, cols = ctypes.c_uint(key[1]), ctypes.c_uint(key[2])
        eps = ctypes.c_float(eps or 0.0)

        def run(x, w, b):
            if not x.is_contiguous():
                raise LabError("x must be contiguous")
            y = torch.empty_like(x)
            pointer = [ctypes.c_uint64(t.data_ptr() if t is not None else 0) for t in (x, w, b, y)]
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            self.driver.launch(f, launch, stream, [*pointer, rows, cols, eps])
            return y

        return run
