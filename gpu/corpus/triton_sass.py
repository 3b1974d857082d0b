"""Compiles each Triton kernel of the corpus for sm_90 as the runner launches it (the same
constants, and the argument specialisations Triton derives at launch: which pointers are
16-byte aligned, which integers divide by 16) and prints, per kernel, its registers and the
SASS instructions its planted mechanism shows in: the loads' widths, local memory (spills),
atomics and fences, FFMA against HGMMA, MUFU.

Needs only `triton` (no GPU, torch or CuPy) and a cuobjdump:

    python3 gpu/corpus/triton_sass.py [CUOBJDUMP]     (default: cuobjdump on PATH)
"""

import collections
import re
import subprocess
import sys
import tempfile

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import triton_kernels as K

# Argument types as the runner passes them; "!" marks a pointer or integer that is NOT 16-byte
# aligned (or divisible by 16): the rest are.
SIGNATURES = {
    "copy_unaligned_input": {"x_ptr": "*fp32!", "y_ptr": "*fp32", "n": "i32"},
    "copy_aligned": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"},
    "gather_stride8": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"},
    "atomic_add_one_word": {"x_ptr": "*fp32", "acc_ptr": "*fp32", "n": "i32"},
    "atomic_add_per_program": {"x_ptr": "*fp32", "acc_ptr": "*fp32", "n": "i32"},
    "matmul_fp32_ieee": {
        "a_ptr": "*fp32",
        "b_ptr": "*fp32",
        "c_ptr": "*fp32",
        "M": "i32",
        "N": "i32",
        "K": "i32",
    },
    "matmul_bf16": {
        "a_ptr": "*bf16",
        "b_ptr": "*bf16",
        "c_ptr": "*fp32",
        "M": "i32",
        "N": "i32",
        "K": "i32",
    },
    "softmax_row_nw2": {"x_ptr": "*fp32", "y_ptr": "*fp32", "cols": "i32"},
    "softmax_row_nw16": {"x_ptr": "*fp32", "y_ptr": "*fp32", "cols": "i32"},
    "rowsum_grid16": {"x_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32", "cols": "i32"},
    "rowsum_grid_full": {"x_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32", "cols": "i32"},
    "layernorm_rows": {
        "x_ptr": "*fp32",
        "w_ptr": "*fp32",
        "b_ptr": "*fp32",
        "y_ptr": "*fp32",
        "cols": "i32",
        "eps": "fp32",
    },
}
SHOWN = re.compile(r"^(LD|ST|ATOM|RED|MEMBAR|HMMA|HGMMA|FFMA$|MUFU)")


def compile_kernel(name, cuobjdump):
    config = dict(K.CONFIG[name])
    options = {o: config.pop(o) for o in ("num_warps", "num_stages") if o in config}
    signature, attrs = {}, {}
    for i, (arg, ty) in enumerate(SIGNATURES[name].items()):
        signature[arg] = ty.rstrip("!")
        if not ty.endswith("!") and (ty.startswith("*") or ty == "i32"):
            attrs[(i,)] = [["tt.divisibility", 16]]
    signature.update({c: "constexpr" for c in config})
    src = ASTSource(fn=getattr(K, name), signature=signature, constexprs=config, attrs=attrs)
    kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(kernel.asm["cubin"])
        f.flush()
        sass = subprocess.run(
            [cuobjdump, "-sass", f.name], capture_output=True, text=True, check=True
        ).stdout
        usage = subprocess.run(
            [cuobjdump, "-res-usage", f.name], capture_output=True, text=True, check=True
        ).stdout
    ops = collections.Counter(re.findall(r"\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass))
    regs = re.search(r"REG:(\d+)", usage)
    shown = " ".join(f"{op}:{c}" for op, c in sorted(ops.items()) if SHOWN.match(op))
    return f"{name:24} regs {regs.group(1) if regs else '?':>3}  {shown}"


def main():
    cuobjdump = sys.argv[1] if len(sys.argv) > 1 else "cuobjdump"
    print(f"# triton {triton.__version__}, sm_90")
    for name in SIGNATURES:
        print(compile_kernel(name, cuobjdump), flush=True)


if __name__ == "__main__":
    main()
