"""The Triton kernels against the float64 references, at peers.py's tolerances, on odd shapes and
on both paths (whole row, looped). Needs torch and triton: on a CUDA device the kernels run
there, elsewhere in Triton's interpreter on the CPU; without torch every test is skipped.

Run: python3 -m unittest discover -s gpu/rows -p 'test_*.py'
"""

import importlib.util
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

HAVE_TORCH = all(importlib.util.find_spec(m) is not None for m in ("torch", "triton"))
if HAVE_TORCH:
    import torch

    if not torch.cuda.is_available():
        # Before triton is imported: the kernels then run in the interpreter.
        os.environ.setdefault("TRITON_INTERPRET", "1")
    import peers
    import torch_peers
    import triton_rows

    DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

# Odd lengths: 1, under a warp, not a multiple of 4 or 32, just past a power of two.
SHAPES = ((3, 1), (4, 7), (5, 33), (2, 100), (3, 1000), (2, 1025), (2, 5000))


@unittest.skipUnless(HAVE_TORCH, "needs torch and triton")
class TritonRows(unittest.TestCase):
    def check(self, op, x, w=None, b=None):
        dtype = "f32" if x.dtype == torch.float32 else "bf16"
        eps = peers.EPS.get(op)
        fn = torch_peers.plain_triton(op, eps)
        err = torch_peers.max_error(fn(x, w, b), torch_peers.reference(op, x, w, b, eps))
        self.assertLessEqual(err, peers.RTOL[dtype], f"{op} {tuple(x.shape)} {dtype}")

    def cases(self):
        g = torch.Generator(device=DEVICE).manual_seed(1)
        for rows, cols in SHAPES:
            for dt in (torch.float32, torch.bfloat16):
                x = torch.randn(rows, cols, generator=g, device=DEVICE).to(dt)
                w = torch.randn(cols, generator=g, device=DEVICE).to(dt)
                b = torch.randn(cols, generator=g, device=DEVICE).to(dt)
                yield x, w, b

    def check_all(self):
        for x, w, b in self.cases():
            with self.subTest(shape=tuple(x.shape), dtype=x.dtype):
                self.check("softmax", x)
                self.check("softmax", x * 1000)  # exp would overflow without the max
                self.check("rmsnorm", x, w)
                self.check("layernorm", x, w, b)

    def test_whole_row_kernels(self):
        self.check_all()

    def test_looped_kernels(self):
        saved = triton_rows.ROW_MAX_BLOCK, triton_rows.LOOP_BLOCK
        # Every row longer than 16 columns takes the looped path, in chunks of 64.
        triton_rows.ROW_MAX_BLOCK, triton_rows.LOOP_BLOCK = 16, 64
        try:
            self.check_all()
        finally:
            triton_rows.ROW_MAX_BLOCK, triton_rows.LOOP_BLOCK = saved

    def test_softmax_of_minus_infinity_is_zero(self):
        x = torch.randn(2, 100, device=DEVICE)
        x[:, ::3] = float("-inf")
        y = triton_rows.softmax(x)
        self.assertTrue(torch.all(y[:, ::3] == 0))
        self.check("softmax", x)

    def test_bad_inputs_are_refused(self):
        x = torch.randn(4, 8, device=DEVICE)
        with self.assertRaisesRegex(ValueError, "contiguous 2-D"):
            triton_rows.softmax(x.t())
        with self.assertRaisesRegex(ValueError, "vector of 8"):
            triton_rows.rms_norm(x, torch.ones(7, device=DEVICE), 1e-6)


if __name__ == "__main__":
    unittest.main()
