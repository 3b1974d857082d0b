#!/usr/bin/env python3
"""The peers' plain Triton row kernels (gpu/rows/triton_rows.py) as PTX for sm_90, compiled the
way its launcher would launch them at one shape, with no GPU, torch or driver: Triton alone.

Usage: python3 gpu/rows/triton_ptx.py OP COLS DTYPE OUT.ptx   (OP: softmax, rms_norm, layer_norm)

Then `cargo xtask asm --ptx OUT.ptx --kernel all --sass` reads its SASS beside the lab's (the
PTX says `.target sm_90a`: asm assembles it for sm_90a). The pointers are taken 16-byte
aligned and `n_cols` divisible by 16 where it is, as Triton specializes them at a launch from
tensors of that shape.
"""

import sys
import types
from pathlib import Path

# triton_rows imports torch for its launchers; the kernels need only triton.
sys.modules.setdefault("torch", types.ModuleType("torch"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import triton_rows as T  # noqa: E402

ELEMENT = {"f32": "*fp32", "bf16": "*bf16"}
WEIGHTS = {"softmax": 0, "rms_norm": 1, "layer_norm": 2}


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in WEIGHTS or sys.argv[3] not in ELEMENT:
        sys.exit(__doc__.strip().splitlines()[2])
    op, cols, dtype, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
    block = triton.next_power_of_2(cols)
    whole = block <= T.ROW_MAX_BLOCK
    kernel = getattr(T, f"{op}_row_kernel" if whole else f"{op}_looped_kernel")
    warps = T.row_warps(block) if whole else T.LOOP_WARPS
    pointers = ["x_ptr", *["w_ptr", "b_ptr"][: WEIGHTS[op]], "y_ptr"]
    signature = {p: ELEMENT[dtype] for p in pointers} | {"n_cols": "i32"}
    if op != "softmax":
        signature["eps"] = "fp32"
    signature["BLOCK"] = "constexpr"
    aligned = [(i,) for i in range(len(pointers))] + ([(len(pointers),)] if cols % 16 == 0 else [])
    source = ASTSource(
        fn=kernel,
        signature=signature,
        constexprs={"BLOCK": block if whole else T.LOOP_BLOCK},
        attrs={k: [["tt.divisibility", 16]] for k in aligned},
    )
    target = GPUTarget("cuda", 90, 32)
    compiled = triton.compile(source, target=target, options={"num_warps": warps})
    out.write_text(compiled.asm["ptx"])
    print(f"{out}: {kernel.fn.__name__}, {warps} warps, BLOCK {block if whole else T.LOOP_BLOCK}")


if __name__ == "__main__":
    main()
