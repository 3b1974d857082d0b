"""A held-out corpus for the diagnosis in other compilers' shapes: Triton 3.6 kernels, and CuPy
RawKernels (NVRTC) where Triton cannot say it (a branch that splits a warp: Triton has no
per-lane control flow, its `tl.where` computes both sides for every element).

Each kernel has a stated truth in gpu/corpus/triton_corpus.truth.csv; gpu/corpus/README.md says
how the truths were set.

    python3 gpu/corpus/triton_corpus.py [reps=20] [--profile] [--only NAME[,NAME...]]

Timed (default): 3 warm-up launches, then `reps` launches timed by CUDA events, each behind a
spin kernel so that the Python launch cost is not inside the events, the output poisoned (or
zeroed where it accumulates) before each; the last output checked. --profile: each kernel
warmed up (compiled) once, then launched once between cudaProfilerStart and cudaProfilerStop,
so `ncu --profile-from-start off` captures exactly one launch per kernel, and that launch
checked. CSV on stdout: kernel,reps,median_us,min_us,max_us,min_bytes,check.
"""

import argparse
import sys

import cupy
import torch
import triton

from corpus_run import Runner, first_mismatch, poison
from triton_kernels import (
    CONFIG,
    SIGN_BRANCH,
    atomic_add_one_word,
    atomic_add_per_program,
    copy_aligned,
    copy_unaligned_input,
    gather_stride8,
    layernorm_rows,
    matmul_bf16,
    matmul_fp32_ieee,
    rowsum_grid16,
    rowsum_grid_full,
    softmax_row_nw2,
    softmax_row_nw16,
)


def sign_branch(name):
    """SIGN_BRANCH compiled by NVRTC under `name`."""
    return cupy.RawKernel(SIGN_BRANCH.replace("KERNEL", name), name)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("reps", nargs="?", type=int, default=20)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--only", default="", help="comma-separated kernel-name substrings")
    args = p.parse_args()
    if args.reps < 1:
        p.error(f"reps must be at least 1, got {args.reps}")
    only = [o for o in args.only.split(",") if o]
    r = Runner(args.reps, args.profile, only)
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(1)
    print(
        f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}, "
        f"cupy {cupy.__version__}",
        file=sys.stderr,
    )
    print("kernel,reps,median_us,min_us,max_us,min_bytes,check")

    if r.wanted("copy_unaligned_input", "copy_aligned", "gather_stride8"):
        n = 1 << 26
        block = CONFIG["copy_aligned"]["BLOCK"]
        base = torch.rand(n + 4, device=dev, generator=g)
        src = torch.rand(8 * n, device=dev, generator=g)
        y = torch.empty(n, device=dev)
        grid = (triton.cdiv(n, block),)
        unaligned, aligned = base[1 : n + 1], base[:n]
        if unaligned.data_ptr() % 16 != 4 or aligned.data_ptr() % 16 != 0:
            sys.exit("copy inputs: the allocator did not return a 16-byte-aligned block")
        r.run(
            "copy_unaligned_input",
            8.0 * n,
            lambda: copy_unaligned_input[grid](unaligned, y, n, **CONFIG["copy_unaligned_input"]),
            poison(y),
            lambda: "ok" if torch.equal(y, unaligned) else "copy differs",
        )
        r.run(
            "copy_aligned",
            8.0 * n,
            lambda: copy_aligned[grid](aligned, y, n, **CONFIG["copy_aligned"]),
            poison(y),
            lambda: "ok" if torch.equal(y, aligned) else "copy differs",
        )
        r.run(
            "gather_stride8",
            8.0 * n,
            lambda: gather_stride8[grid](src, y, n, **CONFIG["gather_stride8"]),
            poison(y),
            lambda: "ok" if torch.equal(y, src[::8]) else "gather differs",
        )
        del base, src, y

    if r.wanted("atomic_add_one_word", "atomic_add_per_program"):
        # Eighths in [-7/8, 7/8]: every partial sum is exact in FP32, whatever the order.
        n = 1 << 25
        x = torch.randint(-7, 8, (n,), device=dev, generator=g).float() / 8
        want = x.double().sum()
        acc = torch.zeros(1, device=dev)
        grid_one = (n // CONFIG["atomic_add_one_word"]["BLOCK"],)
        grid_prog = (n // CONFIG["atomic_add_per_program"]["BLOCK"],)
        check = lambda: first_mismatch(acc, want.reshape(1), "sum")
        r.run(
            "atomic_add_one_word",
            4.0 * n,
            lambda: atomic_add_one_word[grid_one](x, acc, n, **CONFIG["atomic_add_one_word"]),
            acc.zero_,
            check,
        )
        r.run(
            "atomic_add_per_program",
            4.0 * n,
            lambda: atomic_add_per_program[grid_prog](
                x, acc, n, **CONFIG["atomic_add_per_program"]
            ),
            acc.zero_,
            check,
        )
        del x

    if r.wanted("matmul_fp32_ieee", "matmul_bf16"):
        # Multiples of 1/64 in [-1, 1): exact in BF16, and every product and partial sum exact in
        # FP32 (multiples of 2^-12 under 2^12), so both GEMMs must equal the f64 product.
        m = n = k = 4096
        a = torch.randint(-64, 64, (m, k), device=dev, generator=g).float() / 64
        b = torch.randint(-64, 64, (k, n), device=dev, generator=g).float() / 64
        a16, b16 = a.bfloat16(), b.bfloat16()
        c = torch.empty(m, n, device=dev)
        want = (a[:256].double() @ b.double()).float()
        grid = (m // CONFIG["matmul_bf16"]["BM"], n // CONFIG["matmul_bf16"]["BN"])
        r.run(
            "matmul_fp32_ieee",
            12.0 * m * n,
            lambda: matmul_fp32_ieee[grid](a, b, c, m, n, k, **CONFIG["matmul_fp32_ieee"]),
            poison(c),
            lambda: first_mismatch(c[:256], want, "C element"),
        )
        r.run(
            "matmul_bf16",
            8.0 * m * n,
            lambda: matmul_bf16[grid](a16, b16, c, m, n, k, **CONFIG["matmul_bf16"]),
            poison(c),
            # 1e-3: room for the tensor cores' accumulation order (4 units of the 2^-12 grid).
            lambda: first_mismatch(c[:256], want, "C element", atol=1e-3),
        )
        del a, b, a16, b16, c

    if r.wanted("softmax_row_nw2", "softmax_row_nw16"):
        rows, cols = 4096, 16384
        x = torch.randn(rows, cols, device=dev, generator=g)
        y = torch.empty_like(x)
        want = torch.softmax(x[::512].double(), dim=-1)
        check = lambda: first_mismatch(y[::512], want, "element", rtol=1e-5)
        r.run(
            "softmax_row_nw2",
            8.0 * x.numel(),
            lambda: softmax_row_nw2[(rows,)](x, y, cols, **CONFIG["softmax_row_nw2"]),
            poison(y),
            check,
        )
        r.run(
            "softmax_row_nw16",
            8.0 * x.numel(),
            lambda: softmax_row_nw16[(rows,)](x, y, cols, **CONFIG["softmax_row_nw16"]),
            poison(y),
            check,
        )
        del x, y

    if r.wanted("rowsum_grid16", "rowsum_grid_full"):
        rows, cols = 32768, 4096
        x = torch.rand(rows, cols, device=dev, generator=g)
        out = torch.empty(rows, device=dev)
        want = x.double().sum(-1)
        check = lambda: first_mismatch(out, want, "row", rtol=1e-5)
        full = torch.cuda.get_device_properties(0).multi_processor_count * 8
        r.run(
            "rowsum_grid16",
            4.0 * x.numel(),
            lambda: rowsum_grid16[(16,)](x, out, rows, cols, **CONFIG["rowsum_grid16"]),
            poison(out),
            check,
        )
        r.run(
            "rowsum_grid_full",
            4.0 * x.numel(),
            lambda: rowsum_grid_full[(full,)](x, out, rows, cols, **CONFIG["rowsum_grid_full"]),
            poison(out),
            check,
        )
        del x, out

    if r.wanted("layernorm_rows"):
        rows, cols = 16384, 4096
        x = torch.randn(rows, cols, device=dev, generator=g)
        w = torch.rand(cols, device=dev, generator=g) + 0.5
        b = torch.rand(cols, device=dev, generator=g) - 0.5
        y = torch.empty_like(x)
        xs = x[::1024].double()
        want = torch.nn.functional.layer_norm(xs, (cols,), w.double(), b.double(), eps=1e-5)
        r.run(
            "layernorm_rows",
            8.0 * x.numel(),
            lambda: layernorm_rows[(rows,)](x, w, b, y, cols, 1e-5, **CONFIG["layernorm_rows"]),
            poison(y),
            lambda: first_mismatch(y[::1024], want, "element", rtol=1e-4, atol=1e-4),
        )
        del x, y

    if r.wanted("sign_branch_mixed", "sign_branch_grouped"):
        n, k = 1 << 20, 512
        mixed = torch.rand(n, device=dev, generator=g) - 0.5
        grouped = torch.cat([mixed[mixed <= 0], mixed[mixed > 0]])
        y = torch.empty(n, device=dev)
        kernels = {name: sign_branch(name) for name in ("sign_branch_mixed", "sign_branch_grouped")}

        def reference(x):
            # f64: the FP32 FMA chain stays within 1e-4 of it, the FP32 sum of 512 sines within
            # 5e-2 (its rounding over 512 additions of a sum that reaches ~250).
            xs = x[::997].double()
            t, s = xs.clone(), torch.zeros_like(xs)
            a = xs.clone()
            for _ in range(k):
                s += torch.sin(t.float().double())
                t = (t.float() + 1e-3).double()
                a = a * 0.999 + 1e-3
            return torch.where(xs > 0, s, a)

        for name, x in (("sign_branch_mixed", mixed), ("sign_branch_grouped", grouped)):
            if not r.wanted(name):
                continue
            want = reference(x)
            xc, yc = cupy.from_dlpack(x), cupy.from_dlpack(y)
            r.run(
                name,
                8.0 * n,
                lambda kern=kernels[name], xc=xc, yc=yc: kern(
                    (n // 256,), (256,), (xc, yc, cupy.int32(n), cupy.int32(k))
                ),
                poison(y),
                lambda want=want: first_mismatch(y[::997], want, "element", atol=5e-2),
            )
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
