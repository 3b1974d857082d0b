"""Softmax, RMSNorm and LayerNorm forward by the peers, against the D2D copy of the same tensor.

For each op, shape (rows x cols) and dtype it times PyTorch eager (F.softmax, F.rms_norm,
F.layer_norm), torch.compile(dynamic=False) of the same function, Liger-Kernel's functional
ops and the plain Triton kernels of triton_rows.py, with `dst.copy_(src)` of the same tensor
in the same rotation as the ceiling. Each implementation is checked once against a float64
reference before it is timed; one that fails or raises is recorded as an error, not timed.

Timing: CUDA events around each launch, after a spin kernel (torch.cuda._sleep) that keeps
the GPU busy while the host enqueues the launch, so the events time the device work and not
the host's Python, and a fill of an output-sized buffer (the L2 as the lab's bench leaves it
when it poisons an output before each timed launch; --l2 clean then reads twice the L2's size
of another buffer, so the launch pays no write-back of the fill's lines). Implementations
alternate in a shuffled order each round (none follows itself), with no L2 flush: every tensor
here is at least 64 MB. Median of --reps rounds.

Constants every implementation (and the lab's Rust kernels) uses:
  LayerNorm eps = 1e-5 (PyTorch's default), RMSNorm eps = 1e-6; weight and bias random.
  Tolerance: max |out - ref| / (|ref| + mean |ref|) <= 1e-5 (f32) or 1e-2 (bf16).
  bytes = one read + one write of the tensor + the weight and bias vectors.

Usage on the GPU machine: bash gpu/rows/peers.sh [flags] (unpacks Liger, then runs this);
python3 gpu/rows/peers.py --help for the flags. README.md beside this file has the JSON schema.
"""

import argparse
import os
import random
import shlex
import sys
import time

import report

OPS = ("softmax", "rmsnorm", "layernorm")
DTYPES = ("f32", "bf16")
SHAPES = ((65536, 512), (32768, 1024), (16384, 4096), (8192, 8192), (4096, 32768),
          (1024, 131072), (256, 262144))  # fmt: skip
QUICK_SHAPES = ((65536, 512), (8192, 8192), (1024, 131072))
EPS = {"layernorm": 1e-5, "rmsnorm": 1e-6}
RTOL = {"f32": 1e-5, "bf16": 1e-2}
ELEMENT_BYTES = {"f32": 4, "bf16": 2}
# Per-column parameter vectors each op reads (weight, bias).
PARAMS = {"softmax": 0, "rmsnorm": 1, "layernorm": 2}
MIN_REPS, MIN_WARMUP = 20, 5


def op_bytes(op, rows, cols, dtype):
    """One read and one write of the tensor, plus the op's weight and bias vectors."""
    size = ELEMENT_BYTES[dtype]
    return 2 * rows * cols * size + PARAMS[op] * cols * size


def copy_bytes(rows, cols, dtype):
    return 2 * rows * cols * ELEMENT_BYTES[dtype]


def round_order(names, rng, previous_last):
    """A shuffled order of names whose first is not the previous round's last, so no
    implementation is timed straight after itself (hot on its own output in L2)."""
    order = list(names)
    rng.shuffle(order)
    if len(order) > 1 and order[0] == previous_last:
        order[0], order[1] = order[1], order[0]
    return order


def measure_case(case, impls, warmup, reps, seed):
    """Prepare (build, first call, check) each implementation and the copy, then time the ones
    that passed in alternating rounds. Returns one row per implementation, the copy's first.

    `case` is a backend case: .key (op, rows, cols, dtype), .prepare(impl) -> (runner,
    max_err, first_call_ms) raising on a failed check, and .time_round(runners) -> for each
    runner a (device_us, host_us) pair or the exception it raised."""
    op, rows, cols, dtype = case.key
    key = {"op": op, "rows": rows, "cols": cols, "dtype": dtype}
    names = [report.COPY, *impls]
    nbytes = {n: copy_bytes(rows, cols, dtype) if n == report.COPY else op_bytes(*case.key) for n in names}
    runners, checks, errors = {}, {}, {}
    for name in names:
        try:
            runner, max_err, first_ms = case.prepare(name)
            runners[name] = runner
            checks[name] = (max_err, first_ms)
        except Exception as e:  # any failure of a peer is a result to record
            errors[name] = _one_line(e)
    device = {n: [] for n in runners}
    host = {n: [] for n in runners}
    rng = random.Random(seed)
    last = None
    for i in range(warmup + reps):
        order = round_order([n for n in names if n in runners], rng, last)
        if not order:
            break
        for n, timed in zip(order, case.time_round([runners[n] for n in order]), strict=True):
            if isinstance(timed, Exception):
                errors[n] = f"raised while timed: {_one_line(timed)}"
                del runners[n]
            elif i >= warmup:
                device[n].append(timed[0])
                host[n].append(timed[1])
        last = order[-1]
    result = []
    for n in names:
        if n in errors:
            first_ms = checks.get(n, (None, None))[1]
            result.append(report.row(key, n, nbytes[n], first_call_ms=first_ms, error=errors[n]))
        else:
            max_err, first_ms = checks[n]
            result.append(report.row(key, n, nbytes[n], device[n], host[n], first_ms, max_err))
    return report.finish_case(result)


def _one_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:400]


def parse_list(text, allowed, what):
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {','.join(bad) or repr(text)}: choose from {','.join(allowed)}"
        )
    return tuple(items)


def parse_shapes(text):
    shapes = []
    for t in text.split(","):
        try:
            r, c = (int(v) for v in t.lower().split("x"))
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad shape {t!r}: write ROWSxCOLS, e.g. 8192x8192") from None
        if r < 1 or c < 1:
            raise argparse.ArgumentTypeError(f"bad shape {t!r}: rows and cols must be >= 1")
        shapes.append((r, c))
    return tuple(shapes)


def parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="peers.json", help="JSON results file (default peers.json)")
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"shapes {','.join(f'{r}x{c}' for r, c in QUICK_SHAPES)} and {MIN_REPS} reps",
    )
    p.add_argument(
        "--ops", type=lambda t: parse_list(t, OPS, "op"), default=OPS, help=f"comma list of {','.join(OPS)}"
    )
    p.add_argument("--shapes", type=parse_shapes, help="comma list of ROWSxCOLS (default: all seven)")
    p.add_argument(
        "--dtypes",
        type=lambda t: parse_list(t, DTYPES, "dtype"),
        default=DTYPES,
        help=f"comma list of {','.join(DTYPES)}",
    )
    p.add_argument(
        "--impls",
        type=lambda t: parse_list(t, report.IMPLEMENTATIONS, "implementation"),
        default=report.IMPLEMENTATIONS,
        help=f"comma list of {','.join(report.IMPLEMENTATIONS)} (the copy always runs; "
        "leave out compile to skip its per-shape compile time)",
    )
    p.add_argument(
        "--lab",
        metavar="ROWS_JSON",
        help="also time the lab's Rust kernels in the same rotation (rust-llvm, rust-nvvm): "
        "the chosen rows of this rows-<stem>.json from `lab bench --kernel rows`, each launched "
        "as the lab launched it, from the PTX under --ptx",
    )
    p.add_argument(
        "--lab-schedule",
        metavar="NAME",
        help="with --lab, time the lab's kernels of this schedule (streamed, cluster, …: the "
        "bench runs every schedule that holds a shape) instead of the chosen ones",
    )
    p.add_argument(
        "--ptx",
        help="the lab's PTX folder for --lab, laid out as dist/ptx (default: the PTX the lab's run "
        "loaded, as its rows file records it)",
    )
    p.add_argument("--reps", type=int, help=f"timed rounds (default 30, --quick {MIN_REPS}; >= {MIN_REPS})")
    p.add_argument("--warmup", type=int, default=MIN_WARMUP, help=f"untimed rounds first (>= {MIN_WARMUP})")
    p.add_argument("--seed", type=int, default=0, help="inputs' and rounds' seed")
    p.add_argument(
        "--l2",
        choices=("dirty", "clean"),
        default="dirty",
        help="what the L2 holds at each timed launch: dirty (default), the lines of an "
        "output-sized fill, whose write-back the launch pays; clean, the same fill then a read "
        "of twice the L2's size, so the launch evicts only clean lines",
    )
    p.add_argument(
        "--device",
        default="cuda",
        choices=("cuda", "cpu"),
        help="cpu checks the script without a GPU (Triton's interpreter, Inductor's C++ "
        "backend, wall-clock times): its numbers are not GPU measurements",
    )
    return p


def options(argv):
    p = parser()
    args = p.parse_args(argv)
    if args.shapes is None:
        args.shapes = QUICK_SHAPES if args.quick else SHAPES
    if args.reps is None:
        args.reps = MIN_REPS if args.quick else 30
    if args.lab:
        if not os.path.isfile(args.lab):
            p.error(f"--lab {args.lab}: no such file (the rows-<stem>.json `lab bench --kernel rows` wrote)")
        args.impls = (*report.LAB, *args.impls)
    elif args.lab_schedule:
        p.error("--lab-schedule goes with --lab")
    if args.reps < MIN_REPS or args.warmup < MIN_WARMUP:
        p.error(f"--reps must be >= {MIN_REPS} and --warmup >= {MIN_WARMUP} (median of >= 20 runs)")
    return args


def cases(args):
    return [(op, r, c, dt) for op in args.ops for dt in args.dtypes for r, c in args.shapes]


def run(args, backend, command, log=sys.stderr):
    """Measure every case with `backend`, rewriting args.out after each case (marked complete
    only at the end), and return the document."""
    facts = backend.facts()
    facts["command_line"] = command
    facts["config"] = {
        "reps": args.reps,
        "warmup": args.warmup,
        "seed": args.seed,
        "device": args.device,
        "l2": args.l2,
        "eps": EPS,
        "rtol": RTOL,
        # The lab's kernels of one schedule, not the chosen ones (--lab-schedule).
        **({"lab_schedule": args.lab_schedule} if args.lab_schedule else {}),
        **facts.pop("config", {}),
    }
    rows = []
    todo = cases(args)
    t0 = time.perf_counter()
    for i, key in enumerate(todo, 1):
        tc = time.perf_counter()
        impls = [impl for impl in args.impls if backend.runs(impl, key)]
        with backend.case(*key, rtol=RTOL[key[3]], eps=EPS.get(key[0])) as case:
            case_rows = measure_case(case, impls, args.warmup, args.reps, args.seed)
        rows += case_rows
        firsts = ", ".join(
            f"{r['implementation']} {r['first_call_ms'] / 1e3:.1f}"
            for r in case_rows
            if r["first_call_ms"] is not None
        )
        print(
            f"[{i}/{len(todo)}] {key[0]} {key[1]}x{key[2]} {key[3]}: "
            f"{time.perf_counter() - tc:.1f} s (first calls, s: {firsts})",
            file=log,
            flush=True,
        )
        facts["elapsed_s"] = time.perf_counter() - t0
        report.write_json(args.out, report.document(facts, rows, complete=i == len(todo)))
    return report.document(facts, rows, complete=True)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = options(argv)
    if args.device == "cpu":
        # Before triton is imported: its kernels then run in the interpreter, on the CPU.
        os.environ.setdefault("TRITON_INTERPRET", "1")
    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir):
        sys.exit(f"error: no folder {out_dir!r} for --out: create it or pass another path")
    try:
        import torch_peers
    except ImportError as e:
        sys.exit(f"error: {e}: run peers.py where torch and triton are installed (the GPU machine)")
    try:
        backend = torch_peers.Backend(
            args.device,
            args.seed,
            lab=args.lab and (args.lab, args.ptx, args.lab_schedule),
            l2=args.l2,
        )
    except (torch_peers.NoDevice, torch_peers.LabError) as e:
        sys.exit(f"error: {e}")
    command = shlex.join([os.path.basename(sys.executable), sys.argv[0], *argv])
    doc = run(args, backend, command)
    print(report.text_table(doc))
    failed = [r for r in doc["rows"] if not r["ok"]]
    print(
        f"wrote {args.out}: {len(doc['rows'])} rows, {len(failed)} errors, {doc['elapsed_s']:.0f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
