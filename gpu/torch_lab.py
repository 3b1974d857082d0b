"""Kernels no one here wrote: PyTorch's and cuBLAS's, for the diagnosis to be checked on.

One step of six ops, each in its own NVTX range: an FP32 GEMM (cuBLAS on the FMA pipe,
TF32 off), a BF16 GEMM (tensor cores), softmax, layer norm, a sum, and a transposing copy.
The step runs `--warmup` times, then once between cudaProfilerStart and cudaProfilerStop, so

    ncu --profile-from-start off ... python3 gpu/torch_lab.py

profiles exactly one launch of each op's kernels, and `nsys` sees the NVTX ranges.
"""

import argparse

import torch


def step(x, a32, b32, a16, b16):
    rng = torch.cuda.nvtx.range
    with rng("gemm fp32"):
        c32 = a32 @ b32
    with rng("gemm bf16"):
        c16 = a16 @ b16
    with rng("softmax"):
        s = torch.softmax(x, dim=-1)
    with rng("layer norm"):
        n = torch.nn.functional.layer_norm(x, x.shape[-1:])
    with rng("sum"):
        total = x.sum()
    with rng("transpose copy"):
        t = x.t().contiguous()
    return c32, c16, s, n, total, t


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gemm", type=int, default=4096, help="GEMM edge (M = N = K)")
    p.add_argument("--rows", type=int, default=16384, help="rows of the row-wise ops' input")
    p.add_argument("--cols", type=int, default=4096, help="columns of that input")
    p.add_argument("--warmup", type=int, default=3)
    args = p.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(1)
    dev = dict(device="cuda", generator=g)
    x = torch.randn(args.rows, args.cols, **dev)
    a32 = torch.randn(args.gemm, args.gemm, **dev)
    b32 = torch.randn(args.gemm, args.gemm, **dev)
    a16, b16 = a32.bfloat16(), b32.bfloat16()

    for _ in range(args.warmup):
        step(x, a32, b32, a16, b16)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    with torch.cuda.nvtx.range("profiled step"):
        out = step(x, a32, b32, a16, b16)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()

    # The results are right, or the profile measured something else.
    c32, c16, s, n, total, t = out
    ref = (a32[:64].double() @ b32[:, :64].double()).float()
    assert torch.allclose(c32[:64, :64], ref, rtol=1e-3, atol=1e-2), "fp32 GEMM"
    assert torch.allclose(c16[:64, :64].float(), ref, rtol=5e-2, atol=2.0), "bf16 GEMM"
    assert n.mean(-1).abs().max().item() < 1e-3, "layer norm"
    assert torch.allclose(s.sum(-1), torch.ones_like(s[:, 0]), atol=1e-4), "softmax"
    assert torch.allclose(total.double(), x.double().sum(), rtol=1e-4), "sum"
    assert torch.equal(t[:, :7], x[:7].t()), "transpose"
    print("torch_lab: ok", torch.__version__, torch.cuda.get_device_name())


if __name__ == "__main__":
    main()
