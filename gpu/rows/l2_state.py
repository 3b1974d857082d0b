"""What the L2 holds before a timed launch, and what it costs the launch.

The lab's bench poisons each output by a memset just before its timed launch (the L2 then
holds that many dirty lines, written back while the launch runs); the peers' script spins the
GPU before each launch instead. This times the same launches both ways, and the two mixed, at
one shape, on the GPU machine:

  spin         the GPU spins, then the timed launch (peers.py)
  spin-fill    the GPU spins, then fills another buffer of the output's size, then the timed
               launch (the L2 as the lab's poisoning memset leaves it; the spin hides the host)
  fill-spin    the fill, then the spin, then the timed launch
  spin-poison  the copy only: the spin, then a fill of its own output (the lab's order)

Usage: python3 gpu/rows/l2_state.py [--shape 65536x512] [--dtype f32] [--reps 30]
"""

import argparse
import statistics

import torch
import torch.nn.functional as F

SPIN_US = 250.0


def spin_cycles():
    """Cycles of torch.cuda._sleep that last about SPIN_US."""
    probe = 1_000_000
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(probe)
    start.record()
    torch.cuda._sleep(probe)
    end.record()
    torch.cuda.synchronize()
    return max(1, int(probe * SPIN_US / (start.elapsed_time(end) * 1e3)))


def time_us(run, before, reps, warmup=5):
    """Median, min and max µs of `run` over `reps` timed launches, `before` queued ahead of each."""
    times = []
    for i in range(warmup + reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        before()
        start.record()
        out = run()
        end.record()
        torch.cuda.synchronize()
        del out
        if i >= warmup:
            times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times), min(times), max(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="65536x512")
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16"])
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    rows, cols = map(int, a.shape.split("x"))
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[a.dtype]
    x = torch.randn(rows, cols, device="cuda", dtype=dtype)
    dst, scratch = torch.empty_like(x), torch.empty_like(x)
    softmax = torch.compile(lambda t: F.softmax(t, dim=-1), dynamic=False)
    softmax(x)
    cycles = spin_cycles()
    nan = float("nan")

    def spin():
        torch.cuda._sleep(cycles)

    def fill(t):
        return lambda: t.fill_(nan)

    befores = {
        "spin": spin,
        "spin-fill": lambda: (spin(), fill(scratch)()),
        "fill-spin": lambda: (fill(scratch)(), spin()),
        "spin-poison": lambda: (spin(), fill(dst)()),
    }
    runs = {"copy": lambda: dst.copy_(x), "compile softmax": lambda: softmax(x)}
    nbytes = 2 * x.numel() * x.element_size()
    print(f"# {torch.cuda.get_device_name()}, {a.shape} {a.dtype}, {a.reps} reps, spin {SPIN_US} µs")
    print(f"{'run':<16} {'before':<12} {'median us':>10} {'min us':>8} {'max us':>8} {'GB/s':>7}")
    for name, run in runs.items():
        for before_name, before in befores.items():
            if before_name == "spin-poison" and name != "copy":
                continue
            med, lo, hi = time_us(run, before, a.reps)
            print(f"{name:<16} {before_name:<12} {med:10.2f} {lo:8.2f} {hi:8.2f} {nbytes / med / 1e3:7.0f}")


if __name__ == "__main__":
    main()
