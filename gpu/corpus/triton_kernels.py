"""The Triton 3.6 kernels of the Triton corpus (triton_corpus.py runs them) and the CuPy
RawKernel source it compiles with NVRTC. Kept apart from the runner so that they compile for
sm_90 without a GPU, torch or CuPy (triton_sass.py): only `triton` is imported here.

CONFIG holds each kernel's launch constants, which both the runner and the SASS check use.
"""

import triton
import triton.language as tl

# ---- copies: an input view 4 bytes off 16-byte alignment makes Triton load four scalars per
# thread (each load instruction uses 8 of every 32-byte sector; L1 catches the re-reads), an
# aligned one 16-byte vectors; a stride of 8 floats reads one float per sector ----


@triton.jit
def _copy_body(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def copy_unaligned_input(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    _copy_body(x_ptr, y_ptr, n, BLOCK)


@triton.jit
def copy_aligned(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    _copy_body(x_ptr, y_ptr, n, BLOCK)


@triton.jit
def gather_stride8(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs.to(tl.int64) * 8, mask=mask), mask=mask)


# ---- a sum into one word: an atomic per element (Triton's default acq_rel semantics: an
# ATOMG and a fence per element) vs one per program ----


@triton.jit
def atomic_add_one_word(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(acc_ptr + tl.zeros([BLOCK], tl.int32), x, mask=mask)


@triton.jit
def atomic_add_per_program(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(acc_ptr, tl.sum(x, 0))


# ---- GEMM C = A B (row-major): tl.dot in FP32 with input_precision="ieee" (FFMA on the FMA
# pipe) vs BF16 inputs (wgmma on the tensor cores) ----


@triton.jit
def _matmul_body(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    PRECISION: tl.constexpr,
):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None].to(tl.int64) * K + rk[None, :]
    b = b_ptr + rk[:, None].to(tl.int64) * N + rn[None, :]
    acc = tl.zeros([BM, BN], tl.float32)
    for _ in range(0, K, BK):
        acc = tl.dot(tl.load(a), tl.load(b), acc, input_precision=PRECISION)
        a += BK
        b += BK * N
    tl.store(c_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], acc)


@triton.jit
def matmul_fp32_ieee(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    _matmul_body(a_ptr, b_ptr, c_ptr, M, N, K, BM, BN, BK, "ieee")


@triton.jit
def matmul_bf16(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    _matmul_body(a_ptr, b_ptr, c_ptr, M, N, K, BM, BN, BK, "ieee")


# ---- row-wise ops, one program per row of BLOCK columns ----


@triton.jit
def _softmax_row_body(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs)
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, 0))


# The whole 16384-column row in 2 warps: 256 values per thread, more than the register file
# holds, so Triton spills them to local memory.
@triton.jit
def softmax_row_nw2(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    _softmax_row_body(x_ptr, y_ptr, cols, BLOCK)


@triton.jit
def softmax_row_nw16(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    _softmax_row_body(x_ptr, y_ptr, cols, BLOCK)


@triton.jit
def _rowsum_body(x_ptr, out_ptr, rows, cols, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for row in range(tl.program_id(0), rows, tl.num_programs(0)):
        x = tl.load(x_ptr + row.to(tl.int64) * cols + offs)
        tl.store(out_ptr + row, tl.sum(x, 0))


# A persistent grid-stride row sum: the same code launched on 16 programs, or on a full wave.
@triton.jit
def rowsum_grid16(x_ptr, out_ptr, rows, cols, BLOCK: tl.constexpr):
    _rowsum_body(x_ptr, out_ptr, rows, cols, BLOCK)


@triton.jit
def rowsum_grid_full(x_ptr, out_ptr, rows, cols, BLOCK: tl.constexpr):
    _rowsum_body(x_ptr, out_ptr, rows, cols, BLOCK)


@triton.jit
def layernorm_rows(x_ptr, w_ptr, b_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs)
    mean = tl.sum(x, 0) / cols
    d = x - mean
    rstd = tl.rsqrt(tl.sum(d * d, 0) / cols + eps)
    y = d * rstd * tl.load(w_ptr + offs) + tl.load(b_ptr + offs)
    tl.store(y_ptr + row * cols + offs, y)


# ---- CuPy (NVRTC): a branch on the data's sign, K steps of the accurate sinf (a range
# reduction and a polynomial on the FMA pipe, no MUFU) or K dependent FMAs. Random signs split
# every warp; the same values grouped by sign do not. The runner compiles the source twice, under
# two names, so each launch has a name of its own. ----

SIGN_BRANCH = r"""
extern "C" __global__ void KERNEL(const float* x, float* y, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    if (v > 0.0f) {
        float s = 0.0f, t = v;
        for (int j = 0; j < k; ++j) { s += sinf(t); t += 1e-3f; }
        y[i] = s;
    } else {
        float a = v;
        for (int j = 0; j < k; ++j) a = fmaf(a, 0.999f, 1e-3f);
        y[i] = a;
    }
}
"""


# Each kernel's compile-time constants and launch options.
CONFIG = {
    "copy_unaligned_input": {"BLOCK": 1024, "num_warps": 4},
    "copy_aligned": {"BLOCK": 1024, "num_warps": 4},
    "gather_stride8": {"BLOCK": 1024, "num_warps": 4},
    "atomic_add_one_word": {"BLOCK": 1024, "num_warps": 4},
    "atomic_add_per_program": {"BLOCK": 4096, "num_warps": 8},
    "matmul_fp32_ieee": {"BM": 128, "BN": 128, "BK": 32, "num_warps": 8, "num_stages": 3},
    "matmul_bf16": {"BM": 128, "BN": 128, "BK": 64, "num_warps": 8, "num_stages": 3},
    "softmax_row_nw2": {"BLOCK": 16384, "num_warps": 2},
    "softmax_row_nw16": {"BLOCK": 16384, "num_warps": 16},
    "rowsum_grid16": {"BLOCK": 4096, "num_warps": 4},
    "rowsum_grid_full": {"BLOCK": 4096, "num_warps": 4},
    "layernorm_rows": {"BLOCK": 4096, "num_warps": 8},
}
