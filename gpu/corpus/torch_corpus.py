"""A held-out corpus for the diagnosis from PyTorch 2.11 and cuBLAS: ops whose kernels' truth
follows from their mechanism (gpu/corpus/torch_corpus.truth.csv; gpu/corpus/README.md says why
each truth holds). Every op launches one kernel.

    python3 gpu/corpus/torch_corpus.py [reps=20] [--profile] [--only NAME[,NAME...]]

Timed (default): 3 warm-up runs, then `reps` runs timed by CUDA events, each behind a spin
kernel so that the Python dispatch is not inside the events, the output poisoned (or zeroed
where the op accumulates) before each; the last output checked. --profile: each op warmed up
once, then run once between cudaProfilerStart and cudaProfilerStop, so
`ncu --profile-from-start off` captures exactly one launch of each op's kernel, and checked.
CSV on stdout: kernel,reps,median_us,min_us,max_us,min_bytes,check, where `kernel` is the
part of the kernel's name that the truth file matches it by.
"""

import argparse
import sys

import torch

from corpus_run import Runner, first_mismatch, poison


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("reps", nargs="?", type=int, default=20)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--only", default="", help="comma-separated kernel-name substrings")
    args = p.parse_args()
    if args.reps < 1:
        p.error(f"reps must be at least 1, got {args.reps}")
    r = Runner(args.reps, args.profile, [o for o in args.only.split(",") if o])
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(2)
    torch.backends.cuda.matmul.allow_tf32 = False
    print(
        f"# {torch.cuda.get_device_name()}, torch {torch.__version__} (CUDA {torch.version.cuda})",
        file=sys.stderr,
    )
    print("kernel,reps,median_us,min_us,max_us,min_bytes,check")

    def eighths(*shape):
        # Multiples of 1/8 in [-7/8, 7/8]: the sums below are exact in FP32 in any order.
        return torch.randint(-7, 8, shape, device=dev, generator=g).float() / 8

    # FP32 GEMM with TF32 off (cuBLAS on the FMA pipe) and the same product in BF16 (tensor
    # cores). Multiples of 1/64: exact in BF16, every FP32 partial sum exact.
    if r.wanted("sm80_xmma_gemm_f32f32", "nvjet_sm90"):
        n = 4096
        a = torch.randint(-64, 64, (n, n), device=dev, generator=g).float() / 64
        b = torch.randint(-64, 64, (n, n), device=dev, generator=g).float() / 64
        a16, b16 = a.bfloat16(), b.bfloat16()
        c32 = torch.empty(n, n, device=dev)
        c16 = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
        want = a[:256].double() @ b.double()
        r.run(
            "sm80_xmma_gemm_f32f32",
            12.0 * n * n,
            lambda: torch.mm(a, b, out=c32),
            poison(c32),
            lambda: first_mismatch(c32[:256], want, "C element"),
        )
        r.run(
            "nvjet_sm90",
            6.0 * n * n,
            lambda: torch.mm(a16, b16, out=c16),
            poison(c16),
            lambda: first_mismatch(c16[:256], want, "C element", rtol=2**-8, atol=2**-8),
        )
        del a, b, a16, b16, c32, c16

    if r.wanted("vectorized_elementwise_kernel", "reduce_kernel<512"):
        n = 1 << 26
        x = torch.rand(n, device=dev, generator=g)
        y = torch.rand(n, device=dev, generator=g)
        z = torch.empty(n, device=dev)
        total = torch.empty((), device=dev)
        r.run(
            "vectorized_elementwise_kernel",
            12.0 * n,
            lambda: torch.add(x, y, out=z),
            poison(z),
            lambda: first_mismatch(
                z[::4099], (x[::4099].double() + y[::4099].double()).float(), "element"
            ),
        )
        want = x.double().sum()
        r.run(
            "reduce_kernel<512",
            4.0 * n,
            lambda: torch.sum(x.view(-1), 0, dtype=torch.float32, out=total),
            poison(total),
            lambda: first_mismatch(total, want, "sum", rtol=1e-5),
        )
        del x, y, z

    if r.wanted("vectorized_layer_norm_kernel"):
        rows, cols = 32768, 2048
        x = torch.randn(rows, cols, device=dev, generator=g)
        w = torch.rand(cols, device=dev, generator=g) + 0.5
        b = torch.rand(cols, device=dev, generator=g) - 0.5
        out = {}  # layer_norm allocates its output (from the caching allocator: no kernel)
        want = torch.nn.functional.layer_norm(x[::997].double(), (cols,), w.double(), b.double())
        r.run(
            "vectorized_layer_norm_kernel",
            8.0 * x.numel(),
            lambda: out.update(y=torch.nn.functional.layer_norm(x, (cols,), w, b)),
            out.clear,
            lambda: first_mismatch(out["y"][::997], want, "element", rtol=1e-4, atol=1e-4),
        )
        del x, out

    if r.wanted("direct_copy_kernel_cuda"):
        x = torch.rand(8192, 8192, device=dev, generator=g)
        t = torch.empty(8192, 8192, device=dev)
        r.run(
            "direct_copy_kernel_cuda",
            8.0 * x.numel(),
            lambda: t.copy_(x.t()),
            poison(t),
            lambda: "ok" if torch.equal(t[::61], x.t()[::61]) else "transpose differs",
        )
        del x, t

    if r.wanted("indexSelect"):
        table = torch.rand(1 << 28, device=dev, generator=g)  # 1 GiB
        idx = torch.randint(0, 1 << 28, (1 << 24,), device=dev, generator=g)
        out = torch.empty(1 << 24, device=dev)
        r.run(
            "indexSelect",
            8.0 * idx.numel() + 8.0 * idx.numel(),
            lambda: torch.index_select(table, 0, idx, out=out),
            poison(out),
            lambda: "ok" if torch.equal(out, table[idx]) else "gather differs",
        )
        del table, idx, out

    if r.wanted("indexFunc"):
        rows, width, bins = 1 << 19, 64, 4
        src = eighths(rows, width)
        idx = torch.randint(0, bins, (rows,), device=dev, generator=g)
        acc = torch.zeros(bins, width, device=dev)
        want = torch.zeros(bins, width, device=dev, dtype=torch.float64).index_add_(
            0, idx, src.double()
        )
        r.run(
            "indexFunc",
            4.0 * src.numel() + 8.0 * rows,
            lambda: acc.index_add_(0, idx, src),
            acc.zero_,
            lambda: first_mismatch(acc, want, "bin element"),
        )
        del src, idx, acc
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
