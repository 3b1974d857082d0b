"""Softmax, RMSNorm and LayerNorm forward in Triton: the plain baseline the peers table times.

One program per row. A row of at most ROW_MAX_BLOCK columns is held whole in registers
(BLOCK = the next power of two of its length): one read of x, one write of y. A longer row is
walked in LOOP_BLOCK chunks twice: a first pass for the statistics (online max and sum for
softmax, sums of squares for the norms), a second to write y, so it reads x twice.

Every op accumulates in f32 and rounds once to the output dtype (f32 or bf16), as PyTorch
defines them: softmax over the last dim; RMSNorm y = x / sqrt(mean(x^2) + eps) * w;
LayerNorm y = (x - mean) / sqrt(var + eps) * w + b with the biased variance.
"""

import torch
import triton
import triton.language as tl

# Rows up to this many columns stay in registers (32 f32 values a thread at 32 warps).
ROW_MAX_BLOCK = 32768
# A long row's chunk: 16 values a thread at 32 warps, so each pass keeps loads in flight.
LOOP_BLOCK = 16384
LOOP_WARPS = 32


def row_warps(block):
    """Warps for a whole-row program: 8 values a thread (one 16-byte bf16 load, two f32 ones),
    at most 32 warps."""
    return min(32, max(1, block // 256))


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_looped_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    # Online softmax: the running max m and the sum d of exp(x - m), rescaled when m grows.
    m = tl.full((), -float("inf"), tl.float32)
    d = tl.full((), 0.0, tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    inv_d = 1.0 / d
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - m) * inv_d
        tl.store(y_row + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rms_norm_row_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * n_cols + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rms_norm_looped_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    squares = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
        squares += x * x
    rstd = tl.rsqrt(tl.sum(squares, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + offs, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layer_norm_row_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    # The row is in registers: the variance of the centred values, no cancellation.
    centred = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(centred * centred, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = centred * rstd * w + b
    tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layer_norm_looped_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    # Sums of x - shift, shift = the row's first value: one pass for mean and variance
    # without the cancellation of E[x^2] - E[x]^2 when |mean| >> std.
    shift = tl.load(x_row).to(tl.float32)
    sums = tl.zeros((BLOCK,), tl.float32)
    squares = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        shifted = tl.where(mask, x - shift, 0.0)
        sums += shifted
        squares += shifted * shifted
    mean_shifted = tl.sum(sums, axis=0) / n_cols
    var = tl.maximum(tl.sum(squares, axis=0) / n_cols - mean_shifted * mean_shifted, 0.0)
    mean = shift + mean_shifted
    rstd = tl.rsqrt(var + eps)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_row + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _launch(x, row_kernel, looped_kernel, params=(), scalars=()):
    """One program per row of x: the whole-row kernel when the row fits, else the looped one.
    Every kernel takes (x, *params, y, n_cols, *scalars); params are per-column vectors.
    Returns the new output y (same shape and dtype as x)."""
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError(f"expected a contiguous 2-D tensor, got shape {tuple(x.shape)}")
    rows, cols = x.shape
    for p in params:
        if tuple(p.shape) != (cols,) or not p.is_contiguous():
            raise ValueError(f"expected a contiguous vector of {cols}, got shape {tuple(p.shape)}")
    y = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    if block <= ROW_MAX_BLOCK:
        row_kernel[(rows,)](x, *params, y, cols, *scalars, BLOCK=block, num_warps=row_warps(block))
    else:
        looped_kernel[(rows,)](x, *params, y, cols, *scalars, BLOCK=LOOP_BLOCK, num_warps=LOOP_WARPS)
    return y


def softmax(x):
    """Softmax over the last dim of a contiguous 2-D tensor."""
    return _launch(x, softmax_row_kernel, softmax_looped_kernel)


def rms_norm(x, w, eps):
    """RMSNorm over the last dim with weight w (one value per column)."""
    return _launch(x, rms_norm_row_kernel, rms_norm_looped_kernel, (w,), (float(eps),))


def layer_norm(x, w, b, eps):
    """LayerNorm over the last dim with weight w and bias b (one value per column each)."""
    return _launch(x, layer_norm_row_kernel, layer_norm_looped_kernel, (w, b), (float(eps),))
