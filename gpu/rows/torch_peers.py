"""The torch side of peers.py: inputs, the implementations, the float64 references, the timing.

An implementation is a function (x, w, b) -> y; softmax ignores w and b, RMSNorm ignores b.
"""

import contextlib
import datetime
import importlib.metadata
import platform
import subprocess
import time

import torch
import torch.nn.functional as F
import triton

import triton_rows
from lab_kernels import IMPLEMENTATIONS as LAB_IMPLEMENTATIONS
from lab_kernels import LabError, LabKernels

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
# The GPU spins this long before each timed launch, while the host enqueues it.
SPIN_US = 250.0
INSTALL_LIGER = "run through gpu/rows/peers.sh with .whl/ carried (gpu/rows/README.md)"


class NoDevice(Exception):
    pass


class CheckFailed(Exception):
    pass


def eager(op, eps):
    """PyTorch's own op, eps bound as a constant (torch.compile then bakes it in)."""
    if op == "softmax":
        return lambda x, w, b: F.softmax(x, dim=-1)
    if op == "rmsnorm":
        return lambda x, w, b: F.rms_norm(x, (x.shape[-1],), w, eps)
    return lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, eps)


def liger(op, eps):
    from liger_kernel.transformers.functional import liger_layer_norm, liger_rms_norm, liger_softmax

    if op == "softmax":
        return lambda x, w, b: liger_softmax(x)
    if op == "rmsnorm":
        # "gemma": x, w and the product in f32, one rounding to the output dtype, as PyTorch's
        # fused rms_norm and the lab's kernels; the default "llama" rounds x * rstd to the input
        # dtype before the weight. Same traffic either way.
        return lambda x, w, b: liger_rms_norm(x, w, eps, casting_mode="gemma")
    return lambda x, w, b: liger_layer_norm(x, w, b, eps)


def plain_triton(op, eps):
    if op == "softmax":
        return lambda x, w, b: triton_rows.softmax(x)
    if op == "rmsnorm":
        return lambda x, w, b: triton_rows.rms_norm(x, w, eps)
    return lambda x, w, b: triton_rows.layer_norm(x, w, b, eps)


def reference(op, x, w, b, eps):
    """The op in float64, written out (not PyTorch's kernels, which are under test)."""
    xd = x.double()
    if op == "softmax":
        e = (xd - xd.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)
    if op == "rmsnorm":
        return xd * torch.rsqrt(xd.square().mean(-1, keepdim=True) + eps) * w.double()
    centred = xd - xd.mean(-1, keepdim=True)
    return centred * torch.rsqrt(centred.square().mean(-1, keepdim=True) + eps) * w.double() + b.double()


def max_error(out, ref):
    """max |out - ref| / (|ref| + mean |ref|): relative where |ref| is typical, absolute (scaled
    to the output's size) where it is near zero. NaN anywhere gives NaN."""
    magnitude = ref.abs()
    scale = magnitude.mean()
    return ((out.double() - ref).abs_() / magnitude.add_(scale)).max().item()


def _driver_version():
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        return out.splitlines()[0].strip()
    except (OSError, subprocess.SubprocessError, IndexError):
        return None


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


# What the L2 holds at each timed launch (peers.py --l2).
L2_STATES = {
    "dirty": "spin, then fill an output-sized buffer",
    "clean": "spin, then fill an output-sized buffer, then read twice the L2's size of another",
}


class Backend:
    def __init__(self, device, seed, lab=None, l2="dirty"):
        """lab: (the lab's rows-<stem>.json, its PTX folder, a schedule or None for the chosen
        ones), to time the lab's kernels too.
        l2: a key of L2_STATES."""
        if device == "cuda" and not torch.cuda.is_available():
            raise NoDevice("no CUDA device: run peers.py on the GPU machine (gpu/rows/README.md)")
        self.device = device
        self.seed = seed
        self.l2 = l2
        # "clean": read after the fill, this buffer's lines displace the fill's dirty ones (their
        # write-back happens then, before the start event) and leave the L2 holding clean lines,
        # as the lab's cold flush does (host/src/bench/measure/flush.rs).
        self.clean = None
        if l2 == "clean" and device == "cuda":
            l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
            self.clean = torch.ones(2 * l2_bytes // 4, device=device)
        self.lab = LabKernels(*lab) if lab else None
        torch.set_grad_enabled(False)
        try:
            liger("softmax", 0.0)
            self.liger_error = None
        except Exception as e:  # a Liger that cannot load is a result to record
            self.liger_error = f"liger_kernel not importable ({type(e).__name__}: {e}): {INSTALL_LIGER}"
        self.spin_cycles, self.spin_us = self._calibrate_spin() if device == "cuda" else (None, None)

    def _calibrate_spin(self):
        """Cycles of torch.cuda._sleep that last about SPIN_US, and what they measured."""
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def measure(cycles):
            torch.cuda._sleep(cycles)
            start.record()
            torch.cuda._sleep(cycles)
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1e3

        probe = 1_000_000
        cycles = max(1, int(probe * SPIN_US / measure(probe)))
        return cycles, measure(cycles)

    def facts(self):
        """date, device, versions and the timing config, for the results document."""
        versions = {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "triton": triton.__version__,
            "liger": _version("liger_kernel"),
            "liger_error": self.liger_error,
        }
        if self.device == "cuda":
            props = torch.cuda.get_device_properties(0)
            device = {
                "name": props.name,
                "sm_count": props.multi_processor_count,
                "l2_bytes": getattr(props, "L2_cache_size", None),
                "memory_bytes": props.total_memory,
                "driver_version": _driver_version(),
                "cuda_runtime": torch.version.cuda,
            }
        else:
            device = {
                "name": f"cpu ({platform.machine()}): not a GPU measurement",
                "sm_count": None,
                "l2_bytes": None,
                "memory_bytes": None,
                "driver_version": None,
                "cuda_runtime": None,
            }
        return {
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "device": device,
            "versions": versions,
            "config": {
                "spin_cycles": self.spin_cycles,
                "spin_us": self.spin_us,
                "before_launch": L2_STATES[self.l2],
            },
        }

    def runs(self, impl, key):
        """Whether impl takes part in the case key: every peer does; the lab's kernels where
        the lab's file has the case's chosen row."""
        if impl in LAB_IMPLEMENTATIONS:
            return self.lab is not None and self.lab.runs(impl, key)
        return True

    @contextlib.contextmanager
    def case(self, op, rows, cols, dtype, rtol, eps):
        case = Case(self, op, rows, cols, dtype, rtol, eps)
        try:
            yield case
        finally:
            case.close()


class Case:
    def __init__(self, backend, op, rows, cols, dtype, rtol, eps):
        self.backend, self.op, self.rtol, self.eps = backend, op, rtol, eps
        self.key = (op, rows, cols, dtype)
        self.device = backend.device
        g = torch.Generator(device=self.device).manual_seed(backend.seed)
        dt = DTYPES[dtype]
        self.x = torch.randn(rows, cols, generator=g, device=self.device).to(dt)
        # Filled after each spin, just before the timed launch: the L2 then holds the dirty
        # lines of an output-sized write, as after the lab's bench poisons its output (a fill
        # there costs the copy 1.4-1.6 % at 65536x512 f32: gpu/rows/l2_state.py).
        self.poison = torch.empty_like(self.x)
        self.w = self.b = None
        if op != "softmax":
            self.w = torch.randn(cols, generator=g, device=self.device).to(dt)
        if op == "layernorm":
            self.b = torch.randn(cols, generator=g, device=self.device).to(dt)
        # One compiled function per case: reset drops the previous shapes' graphs, so the
        # recompile limit is never reached (it would fall back to eager silently).
        torch._dynamo.reset()

    def function(self, impl):
        if impl == "eager":
            return eager(self.op, self.eps)
        if impl == "compile":
            return torch.compile(eager(self.op, self.eps), dynamic=False, fullgraph=True)
        if impl == "liger":
            if self.backend.liger_error:
                raise RuntimeError(self.backend.liger_error)
            return liger(self.op, self.eps)
        if impl == "triton":
            return plain_triton(self.op, self.eps)
        if impl in LAB_IMPLEMENTATIONS:
            if self.device != "cuda":
                raise LabError(f"{impl}: the lab's kernels need the GPU")
            return self.backend.lab.function(impl, self.key, self.eps)
        raise ValueError(f"unknown implementation {impl!r}")

    def prepare(self, impl):
        """A runner for impl, after one call (compiling, for compile and Triton) whose output
        is checked. Returns (runner, max_err, first_call_ms); raises CheckFailed."""
        x, w, b = self.x, self.w, self.b
        if impl == "copy":
            dst = torch.empty_like(x)

            def runner():
                return dst.copy_(x)
        else:
            fn = self.function(impl)

            def runner():
                return fn(x, w, b)

        t0 = time.perf_counter()
        out = runner()
        self._sync()
        first_ms = (time.perf_counter() - t0) * 1e3
        if out.shape != x.shape or out.dtype != x.dtype:
            raise CheckFailed(f"output {tuple(out.shape)} {out.dtype}, expected {tuple(x.shape)} {x.dtype}")
        if impl == "copy":
            if not torch.equal(out, x):
                raise CheckFailed("the copy differs from its source")
            return runner, 0.0, first_ms
        err = max_error(out, reference(self.op, x, w, b, self.eps))
        if not err <= self.rtol:
            raise CheckFailed(f"max error {err:.3g} > {self.rtol:g} against the float64 reference")
        return runner, err, first_ms

    def _sync(self):
        if self.device == "cuda":
            torch.cuda.synchronize()

    def time_round(self, runners):
        """Time each runner once, in order: for each a (device_us, host_us) pair, or the
        exception it raised. host_us is the time to enqueue the call."""
        if self.device != "cuda":
            return [self._wall(r) for r in runners]
        spin = self.backend.spin_cycles
        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in runners
        ]
        host, results = [], []
        for runner, (start, end) in zip(runners, events, strict=True):
            torch.cuda._sleep(spin)
            self.poison.fill_(float("nan"))
            if self.backend.clean is not None:
                self.backend.clean.sum()
            t0 = time.perf_counter()
            start.record()
            try:
                out = runner()
            except Exception as e:  # recorded as that implementation's error
                host.append(e)
                end.record()
                continue
            end.record()
            host.append((time.perf_counter() - t0) * 1e6)
            del out
        torch.cuda.synchronize()
        for h, (start, end) in zip(host, events, strict=True):
            results.append(h if isinstance(h, Exception) else (start.elapsed_time(end) * 1e3, h))
        return results

    def _wall(self, runner):
        try:
            t0 = time.perf_counter()
            runner()
            us = (time.perf_counter() - t0) * 1e6
            return us, us
        except Exception as e:
            return e

    def close(self):
        self.x = self.w = self.b = self.poison = None
        torch._dynamo.reset()
        if self.device == "cuda":
            torch.cuda.empty_cache()
