"""Scratch experiment (not part of the lab): several builds of the lab's row kernels and
torch.compile timed in one rotation, by peers.py's method (spin, output-sized fill, events).

usage: python3 variants.py --shapes 65536x512,... --ops ... --dtypes ... --reps 30 NAME=ROWS_JSON[@PTXDIR] ...
"""
import argparse, random, statistics, sys, os, json
sys.path.insert(0, os.path.join(os.environ.get("REPO", "."), "gpu/rows"))
import torch
import torch_peers
from lab_kernels import LabKernels, IMPLEMENTATIONS

ap = argparse.ArgumentParser()
ap.add_argument("--shapes", required=True)
ap.add_argument("--ops", default="softmax,rmsnorm,layernorm")
ap.add_argument("--dtypes", default="f32,bf16")
ap.add_argument("--reps", type=int, default=30)
ap.add_argument("--warmup", type=int, default=5)
ap.add_argument("--impls", default="compile")
ap.add_argument("--backends", default="rust-llvm")
ap.add_argument("--out", required=True)
ap.add_argument("labs", nargs="+")
a = ap.parse_args()
labs = {}
for spec in a.labs:
    name, rest = spec.split("=", 1)
    path, _, ptx = rest.partition("@")
    labs[name] = LabKernels(path, ptx or None)
backend = torch_peers.Backend("cuda", 1234)
EPS = {"layernorm": 1e-5, "rmsnorm": 1e-6, "softmax": None}
RTOL = {"f32": 1e-5, "bf16": 1e-2}


class Case(torch_peers.Case):
    def function(self, impl):
        if "/" in impl:
            v, i = impl.split("/")
            return labs[v].function(i, self.key, self.eps)
        return super().function(impl)


results = []
rng = random.Random(7)
for shape in a.shapes.split(","):
    rows, cols = map(int, shape.split("x"))
    for op in a.ops.split(","):
        for dt in a.dtypes.split(","):
            key = (op, rows, cols, dt)
            case = Case(backend, op, rows, cols, dt, RTOL[dt], EPS[op])
            names = ["copy", *a.impls.split(",")]
            for v, lk in labs.items():
                for i in a.backends.split(","):
                    if lk.runs(i, key):
                        names.append(f"{v}/{i}")
            runners, err = {}, {}
            for n in names:
                try:
                    runners[n] = case.prepare(n)[0]
                except Exception as e:
                    err[n] = f"{type(e).__name__}: {e}"[:200]
            times = {n: [] for n in runners}
            for r in range(a.warmup + a.reps):
                order = list(runners)
                rng.shuffle(order)
                for n, t in zip(order, case.time_round([runners[n] for n in order])):
                    if r >= a.warmup and not isinstance(t, Exception):
                        times[n].append(t[0])
            copy = statistics.median(times["copy"])
            line = {"op": op, "rows": rows, "cols": cols, "dtype": dt, "copy_us": copy, "errors": err,
                    "x_copy": {n: copy / statistics.median(t) for n, t in times.items() if t},
                    "p10_p90_us": {n: statistics.quantiles(t, n=10)[0:9:8] for n, t in times.items() if len(t) > 2},
                    "median_us": {n: statistics.median(t) for n, t in times.items() if t}}
            results.append(line)
            print(op, shape, dt, " ".join(f"{n}={x:.3f}" for n, x in line["x_copy"].items()), err or "", flush=True)
            case.close()
json.dump(results, open(a.out, "w"), indent=1)
