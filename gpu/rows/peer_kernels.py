#!/usr/bin/env python3
"""What the peers' compiled kernels are, read from the caches peers.sh keeps (peer-kernels.tgz):
torch.compile's generated Triton kernels, each with its iteration space (xnumel x r0_numel: the
case's rows x columns where it reduces a whole row per x, else the pieces Inductor split the
work into) and the config Inductor's autotuning chose, and every Triton kernel's launch facts
(Liger's and triton_rows.py's too). No torch, no GPU: the question it answers offline is what a
peer's kernel does at a shape, where the table says it is faster.

Usage: python3 gpu/rows/peer_kernels.py peer-kernels.tgz|DIR [--ptx DIR]

--ptx writes the PTX of each torch.compile kernel Inductor chose, named by kernel, iteration
space and dtype (compile-triton_red_fused__fused_rms_norm_0-4096x32768-f32.ptx), and of every
other Triton kernel, named by kernel, BLOCK and warps
(triton-_softmax_single_block_forward_kernel-b8192-w16.ptx); `cargo xtask asm --ptx FILE
--kernel all --sass` then reads its SASS beside the lab's.
"""

import argparse
import collections
import json
import re
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

# Inductor names a kernel by what it fuses: the op's aten name is in it.
OPS = (("softmax", "softmax"), ("rms_norm", "rmsnorm"), ("layer_norm", "layernorm"))
DTYPES = {"fp32": "f32", "bf16": "bf16", "fp16": "f16"}
# Inductor's kernel kinds: a looped reduction reads the row in R0_BLOCK pieces once per loop
# (twice for a norm's statistic and output), a persistent one holds the row.
KINDS = {"red": "looped", "per": "persistent", "poi": "pointwise"}


class Unreadable(Exception):
    pass


def is_kernel_file(src):
    """Whether a generated file is one Triton kernel's. A graph's wrapper module quotes its
    kernels' sources in async_compile.triton(...) calls: each kernel is read from its own
    file, where its best_config sits beside it."""
    return "@triton.jit" in src and "async_compile.triton(" not in src


def best_config_of(path, alone):
    """The .best_config autotuning saved for the kernel in `path`: named after the kernel's file
    (PyTorch's own test of it), or, as PyTorch 2.11 writes it on the GPU machine, by a hash of
    its own in the kernel's folder, taken where the folder holds this kernel `alone` (None
    where two kernels share it and neither is named)."""
    named = path.with_suffix(".best_config")
    if named.is_file():
        return named
    beside = sorted(path.parent.glob("*.best_config"))
    return beside[0] if len(beside) == 1 and alone else None


def inductor_kernel(path, src, alone):
    """The facts of one generated kernel file (`src` its text, `alone` in its folder), or None
    where the file holds no Triton kernel."""
    name = re.search(r"^def (triton_\w+)\(", src, re.MULTILINE)
    if not is_kernel_file(src) or not name:
        return None
    name = name.group(1)

    def number(var):
        m = re.search(rf"^\s+{var} = (\d+)$", src, re.MULTILINE)
        return int(m.group(1)) if m else None

    dtype = re.search(r"'in_ptr0': '\*(\w+)'", src)
    kind = re.match(r"triton_(red|per|poi)_", name)
    best = best_config_of(path, alone)
    try:
        config = json.loads(best.read_text()) if best else None
    except json.JSONDecodeError as e:
        raise Unreadable(f"{best}: {e}") from None
    return {
        "kernel": name,
        "op": next((op for key, op in OPS if key in name), None),
        "kind": KINDS.get(kind.group(1)) if kind else None,
        "xnumel": number("xnumel"),
        "r0_numel": number("r0_numel") or number("rnumel"),
        "dtype": DTYPES.get(dtype.group(1), dtype.group(1)) if dtype else None,
        # The L2 policies its loads ask: a looped reduction keeps the row for its next pass.
        "evict_last": src.count("evict_last"),
        "evict_first": src.count("evict_first"),
        "config": config,
    }


def ttgir_facts(path):
    """From a compile's TTGIR: the widest range it makes (a Triton kernel's BLOCK, where it
    aranges one) and the elements a thread takes at a time in its first blocked layout, per
    dimension ("4": 4 f32 or 8 bf16 are one 16-byte access; Inductor's reductions are 2-D,
    rows x columns, "1x4")."""
    if not path.is_file():
        return None, None
    src = path.read_text(errors="replace")
    ends = [int(n) for n in re.findall(r"make_range \{end = (\d+)", src)]
    per_thread = re.search(r"#ttg\.blocked<\{sizePerThread = \[([\d, ]+)\]", src)
    per_thread = "x".join(per_thread.group(1).replace(" ", "").split(",")) if per_thread else None
    return (max(ends) if ends else None), per_thread


def triton_kernels(root):
    """Every compiled Triton kernel in the Triton cache: its cache hash, name, launch facts."""
    out = []
    for meta in sorted((root / "triton").glob("*/*.json")):
        if meta.name.startswith("__grp__"):
            continue
        try:
            m = json.loads(meta.read_text())
        except json.JSONDecodeError as e:
            raise Unreadable(f"{meta}: {e}") from None
        if "name" not in m:
            continue
        block, per_thread = ttgir_facts(meta.with_suffix(".ttgir"))
        out.append(
            {
                "hash": meta.parent.name,
                "kernel": m["name"],
                "num_warps": m.get("num_warps"),
                "num_stages": m.get("num_stages"),
                "shared": m.get("shared"),
                "block": block,
                "per_thread": per_thread,
                "ptx": meta.with_suffix(".ptx") if meta.with_suffix(".ptx").is_file() else None,
            }
        )
    return out


def compile_kernels(root, triton):
    """Inductor's kernels, each with the Triton compile (of `triton`, `triton_kernels`) its
    autotuning chose, where one did."""
    compiled = {k["hash"]: k for k in triton}
    sources = {p: p.read_text(errors="replace") for p in sorted((root / "inductor").rglob("*.py"))}
    per_folder = collections.Counter(p.parent for p, src in sources.items() if is_kernel_file(src))
    out = []
    for path, src in sources.items():
        k = inductor_kernel(path, src, per_folder[path.parent] == 1)
        if k is None:
            continue
        chosen = compiled.get((k["config"] or {}).get("triton_cache_hash"))
        for fact in ("ptx", "shared", "per_thread"):
            k[fact] = chosen[fact] if chosen else None
        out.append(k)
    return out


def read(root):
    """The caches' kernels, each file read once: Inductor's (`compile_kernels`), then every
    Triton compile (`triton_kernels`)."""
    triton = triton_kernels(root)
    return compile_kernels(root, triton), triton


def space(k, sep="x"):
    """A kernel's iteration space: xnumel x r0_numel, or xnumel alone (a pointwise kernel)."""
    return cell(k["xnumel"]) if k["r0_numel"] is None else f"{cell(k['xnumel'])}{sep}{k['r0_numel']}"


def ptx_name(k):
    return f"compile-{k['kernel']}-{space(k)}-{cell(k['dtype'])}"


def cell(v):
    return "-" if v is None else str(v)


def tables(inductor, triton):
    """The two tables as text: torch.compile's kernels by op and shape, then every Triton
    kernel."""
    lines = ["torch.compile's kernels (the config is Inductor's autotuning choice, - where none was saved)"]
    head = (
        "op",
        "xnumel x r0_numel",
        "dtype",
        "kind",
        "XBLOCK",
        "R0_BLOCK",
        "warps",
        "stages",
        "per thread",
        "evict_last/first",
        "kernel",
    )
    rows = []
    for k in sorted(inductor, key=lambda k: (k["op"] or "", k["r0_numel"] or 0, k["dtype"] or "", k["kernel"])):
        c = k["config"] or {}
        rows.append(
            (
                cell(k["op"]),
                space(k, " x "),
                cell(k["dtype"]),
                cell(k["kind"]),
                cell(c.get("XBLOCK")),
                cell(c.get("R0_BLOCK", c.get("RBLOCK"))),
                cell(c.get("num_warps")),
                cell(c.get("num_stages")),
                cell(k["per_thread"]),
                f"{k['evict_last']}/{k['evict_first']}",
                k["kernel"],
            )
        )
    lines += align(head, rows)
    lines += ["", "every Triton kernel compiled (Liger's, triton_rows.py's, and Inductor's configs), by name"]
    seen = {}
    for k in triton:
        key = tuple(cell(k[f]) for f in ("kernel", "block", "num_warps", "num_stages", "per_thread", "shared"))
        seen[key] = seen.get(key, 0) + 1
    lines += align(
        ("kernel", "BLOCK", "warps", "stages", "per thread", "shared B", "compiles"),
        [(*key, str(n)) for key, n in sorted(seen.items())],
    )
    return "\n".join(lines)


def align(head, rows):
    widths = [max(len(str(r[i])) for r in (head, *rows)) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*head), fmt.format(*("-" * w for w in widths)), *(fmt.format(*r) for r in rows)]


def write_ptx(inductor, triton, out):
    """The chosen torch.compile kernels' PTX, named by kernel, iteration space and dtype, and
    every other Triton kernel's, named by kernel, BLOCK and warps (Inductor's unchosen configs
    left out)."""
    out.mkdir(parents=True, exist_ok=True)
    names = {}
    for k in inductor:
        if k["ptx"] is not None:
            names[k["ptx"]] = ptx_name(k)
    generated = {k["kernel"] for k in inductor}
    for k in triton:
        if k["ptx"] is not None and k["kernel"] not in generated:
            names.setdefault(k["ptx"], f"triton-{k['kernel']}-b{cell(k['block'])}-w{cell(k['num_warps'])}")
    written = []
    for src, name in sorted(names.items(), key=lambda kv: kv[1]):
        dst = out / f"{name}.ptx"
        shutil.copyfile(src, dst)
        written.append(dst)
    return written


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kernels", help="peer-kernels.tgz from peers.sh, or the folder it unpacks to")
    p.add_argument(
        "--ptx", metavar="DIR", help="write the chosen torch.compile kernels' PTX, and the other Triton kernels', here"
    )
    args = p.parse_args(argv)
    src = Path(args.kernels)
    if not src.exists():
        sys.exit(f"error: {src}: no such file or folder (peers.sh writes peer-kernels.tgz beside peers.json)")
    with tempfile.TemporaryDirectory() as tmp:
        root = src
        if src.is_file():
            try:
                with tarfile.open(src) as t:
                    # The data filter (no links out, no devices) where this Python has it.
                    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                    t.extractall(tmp, **safe)
            except tarfile.TarError as e:
                sys.exit(f"error: {src}: not a tar archive ({e})")
            root = Path(tmp)
        if not (root / "inductor").is_dir() and not (root / "triton").is_dir():
            sys.exit(f"error: {src}: holds neither inductor/ nor triton/ (the caches peers.sh keeps)")
        try:
            inductor, triton = read(root)
            print(tables(inductor, triton))
            if args.ptx:
                for path in write_ptx(inductor, triton, Path(args.ptx)):
                    print(f"wrote {path}", file=sys.stderr)
        except Unreadable as e:
            sys.exit(f"error: {e}")


if __name__ == "__main__":
    main()
