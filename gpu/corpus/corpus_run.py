"""What the Python corpora share: the runner that times each kernel with CUDA events or
launches it once for the profiler, and the check that names the first wrong element."""

import torch


def poison(t):
    """A reset that fills `t` with NaN."""
    return lambda: t.fill_(float("nan"))


class Runner:
    """Runs each kernel of a corpus: timed (`reps` CUDA-event timings after 3 warm-ups) or,
    with `profile`, once between cudaProfilerStart and cudaProfilerStop after one warm-up;
    prints its CSV row and remembers whether any check failed. `only`: name substrings to run
    (all when empty)."""

    def __init__(self, reps, profile, only):
        self.reps, self.profile, self.only = reps, profile, only
        self.failed = False

    def wanted(self, *names):
        """Whether any of `names` is to run."""
        return not self.only or any(o in n for n in names for o in self.only)

    def run(self, name, min_bytes, launch, reset, check):
        """`launch` the kernel `name` (which must move `min_bytes` at least), `reset` its output
        before every launch (outside the events), then `check()` the last output: "ok" or what
        was wrong."""
        if not self.wanted(name):
            return
        times = []
        if self.profile:
            reset()
            launch()  # compiles; outside the profiled range
            reset()
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStart()
            launch()
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()
        else:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            for r in range(-3, self.reps):
                reset()
                torch.cuda._sleep(2_000_000)  # the GPU spins while the launch is queued
                start.record()
                launch()
                end.record()
                end.synchronize()
                if r >= 0:
                    times.append(start.elapsed_time(end) * 1e3)
        verdict = check()
        self.failed |= verdict != "ok"
        if times:
            times.sort()
            mid = len(times) // 2
            median = times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2
            print(
                f"{name},{len(times)},{median:.2f},{times[0]:.2f},{times[-1]:.2f},"
                f"{min_bytes:.0f},{verdict}",
                flush=True,
            )
        else:
            print(f"{name},0,,,,{min_bytes:.0f},{verdict}", flush=True)


def first_mismatch(got, want, what, rtol=0.0, atol=0.0):
    """`ok`, or where `got` first differs from `want` beyond atol + rtol |want|."""
    bad = (got.double() - want.double()).abs() > atol + rtol * want.double().abs()
    bad |= ~torch.isfinite(got)
    if not bad.any():
        return "ok"
    i = int(bad.nonzero()[0][0]) if bad.dim() else 0
    g, w = got.reshape(-1)[i].item(), want.reshape(-1)[i].item()
    return f"{what} {i}: got {g:.9g} want {w:.9g}"
