"""peer_kernels.py against caches laid out as Inductor and Triton write them (no torch, no GPU).

Run: python3 -m unittest discover -s gpu/rows -p 'test_*.py'
"""

import contextlib
import io
import json
import os
import sys
import tarfile
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import peer_kernels

# A looped RMSNorm reduction as Inductor generates it for one fixed shape (trimmed).
LOOPED = """
import triton
import triton.language as tl

@triton_heuristics.reduction(
    size_hints={'x': 4096, 'r0_': 32768},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'in_ptr1': '*fp32', \
'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}},
    inductor_meta={'kernel_name': 'triton_red_fused__fused_rms_norm_0'}
)
@triton.jit
def triton_red_fused__fused_rms_norm_0(in_out_ptr0, in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, \
XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 4096
    r0_numel = 32768
    rnumel = r0_numel
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        tmp0 = tl.load(in_ptr0 + (r0_1 + 32768*x0), r0_mask, eviction_policy='evict_last', other=0.0)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        tmp7 = tl.load(in_ptr0 + (r0_1 + 32768*x0), r0_mask, eviction_policy='evict_first', other=0.0)
        tmp12 = tl.load(in_ptr1 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
"""

# A persistent LayerNorm reduction in bf16: one config, so no autotuning and no best_config.
PERSISTENT = """
@triton_heuristics.persistent_reduction(
    size_hints={'x': 65536, 'r0_': 512},
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'out_ptr2': '*bf16'}},
)
@triton.jit
def triton_per_fused_native_layer_norm_0(in_ptr0, in_ptr1, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 65536
    r0_numel = 512
    R0_BLOCK: tl.constexpr = 512
"""

# A pointwise kernel: an iteration space of one dimension.
POINTWISE = """
@triton_heuristics.pointwise(
    size_hints={'x': 67108864},
    triton_meta={'signature': {'in_ptr0': '*bf16', 'out_ptr0': '*bf16', 'xnumel': 'i32'}},
)
@triton.jit
def triton_poi_fused__softmax_1(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 67108864
"""

# Inductor's wrapper module for the graph quotes each kernel's source again.
WRAPPER = (
    f"triton_red_fused__fused_rms_norm_0 = async_compile.triton('triton_red_fused__fused_rms_norm_0', '''{LOOPED}''')\n"
)


def triton_entry(root, digest, name, warps, stages, shared, ptx=True, block=None, per_thread="4"):
    d = root / "triton" / digest
    d.mkdir(parents=True)
    if block is not None:
        (d / f"{name}.ttgir").write_text(
            f"#blocked = #ttg.blocked<{{sizePerThread = [{per_thread}], threadsPerWarp = [32], "
            f"warpsPerCTA = [{warps}], order = [0]}}>\n"
            f"%cols = tt.make_range {{end = {block} : i32, start = 0 : i32}} : tensor<{block}xi32>\n"
            "%r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>\n"
        )
    (d / f"{name}.json").write_text(
        json.dumps({"hash": "x", "num_warps": warps, "num_stages": stages, "shared": shared, "name": name})
    )
    (d / f"__grp__{name}.json").write_text(json.dumps({"child_paths": {}}))
    if ptx:
        (d / f"{name}.ptx").write_text(f"// {name} {warps} warps\n.version 8.7\n.target sm_90a\n")


def caches(root):
    ind = root / "inductor"
    (ind / "ab").mkdir(parents=True)
    (ind / "cd").mkdir()
    (ind / "ab" / "cabc.py").write_text(LOOPED)
    chosen = {"XBLOCK": 1, "R0_BLOCK": 2048, "num_warps": 16, "num_stages": 1, "triton_cache_hash": "CHOSEN"}
    # Named by a hash of its own beside the kernel's file, as PyTorch 2.11 writes it.
    (ind / "ab" / "7448d1bf.best_config").write_text(json.dumps(chosen))
    (ind / "cd" / "ccdd.py").write_text(PERSISTENT)
    (ind / "cd" / "cwrapper.py").write_text(WRAPPER)
    (ind / "cd" / "cpoi.py").write_text(POINTWISE)
    (ind / "cd" / "cpoi.best_config").write_text(
        json.dumps({"XBLOCK": 1024, "num_warps": 4, "triton_cache_hash": "POI"})
    )
    triton_entry(root, "POI", "triton_poi_fused__softmax_1", 4, 1, 0)
    triton_entry(root, "CHOSEN", "triton_red_fused__fused_rms_norm_0", 16, 1, 0, block=2048, per_thread="1, 4")
    triton_entry(root, "OTHER", "triton_red_fused__fused_rms_norm_0", 8, 1, 0)
    triton_entry(root, "PER", "triton_per_fused_native_layer_norm_0", 4, 1, 0)
    triton_entry(root, "LIGER1", "_rms_norm_forward_kernel", 8, 2, 16, block=4096, per_thread="8")
    triton_entry(root, "LIGER2", "_rms_norm_forward_kernel", 8, 2, 16, ptx=False, block=4096, per_thread="8")


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            peer_kernels.main(argv)
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


class PeerKernels(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name) / "kernels"
        caches(self.root)

    def tearDown(self):
        self.tmp.cleanup()

    def test_compile_kernels_by_case(self):
        ks = {k["kernel"]: k for k in peer_kernels.read(self.root)[0]}
        self.assertEqual(
            set(ks),
            {
                "triton_red_fused__fused_rms_norm_0",
                "triton_per_fused_native_layer_norm_0",
                "triton_poi_fused__softmax_1",
            },
        )
        poi = ks["triton_poi_fused__softmax_1"]
        self.assertEqual(
            (poi["op"], poi["kind"], poi["xnumel"], poi["r0_numel"]), ("softmax", "pointwise", 67108864, None)
        )
        red = ks["triton_red_fused__fused_rms_norm_0"]
        self.assertEqual((red["op"], red["xnumel"], red["r0_numel"], red["dtype"]), ("rmsnorm", 4096, 32768, "f32"))
        self.assertEqual((red["kind"], red["evict_last"], red["evict_first"]), ("looped", 2, 1))
        self.assertEqual((red["config"]["R0_BLOCK"], red["per_thread"]), (2048, "1x4"))
        # The autotuner's choice, not the other config compiled for the same kernel.
        self.assertEqual(red["ptx"].parent.name, "CHOSEN")
        per = ks["triton_per_fused_native_layer_norm_0"]
        self.assertEqual((per["op"], per["xnumel"], per["r0_numel"], per["dtype"]), ("layernorm", 65536, 512, "bf16"))
        self.assertEqual((per["kind"], per["config"], per["ptx"]), ("persistent", None, None))

    def test_a_hash_named_best_config_shared_by_two_kernels_is_nobody_s(self):
        # cd/ holds two kernels (persistent, pointwise): a best_config named by a hash there
        # could be either's, so the persistent one takes none; the pointwise keeps its own.
        (self.root / "inductor" / "cd" / "deadbeef.best_config").write_text(
            json.dumps({"XBLOCK": 1, "R0_BLOCK": 512, "triton_cache_hash": "PER"})
        )
        ks = {k["kernel"]: k for k in peer_kernels.read(self.root)[0]}
        self.assertIsNone(ks["triton_per_fused_native_layer_norm_0"]["config"])
        self.assertEqual(ks["triton_poi_fused__softmax_1"]["config"]["XBLOCK"], 1024)

    def test_tables_from_a_tgz(self):
        tgz = Path(self.tmp.name) / "peer-kernels.tgz"
        with tarfile.open(tgz, "w:gz") as t:
            for p in self.root.iterdir():
                t.add(p, arcname=p.name)
        code, out, _ = run([str(tgz), "--ptx", str(Path(self.tmp.name) / "ptx")])
        self.assertEqual(code, 0)
        lines = out.splitlines()
        red = next(line for line in lines if line.startswith("rmsnorm"))
        self.assertEqual(
            red.split()[:12], ["rmsnorm", "4096", "x", "32768", "f32", "looped", "1", "2048", "16", "1", "1x4", "2/1"]
        )
        per = next(line for line in lines if line.startswith("layernorm"))
        self.assertEqual(per.split()[5:11], ["persistent", "-", "-", "-", "-", "-"])
        liger = next(line for line in lines if line.startswith("_rms_norm_forward_kernel"))
        # The widest range is the kernel's BLOCK; two compiles of the same launch are one line.
        self.assertEqual(liger.split(), ["_rms_norm_forward_kernel", "4096", "8", "2", "8", "16", "2"])
        written = sorted(p.name for p in (Path(self.tmp.name) / "ptx").iterdir())
        # Inductor's unchosen configs (OTHER, PER) are not written; Liger's by BLOCK and warps.
        self.assertEqual(
            written,
            [
                "compile-triton_poi_fused__softmax_1-67108864-bf16.ptx",
                "compile-triton_red_fused__fused_rms_norm_0-4096x32768-f32.ptx",
                "triton-_rms_norm_forward_kernel-b4096-w8.ptx",
            ],
        )
        poi = next(line for line in lines if line.startswith("softmax"))
        self.assertEqual(poi.split()[:4], ["softmax", "67108864", "bf16", "pointwise"])

    def test_refusals(self):
        code, _, _ = run([str(Path(self.tmp.name) / "missing.tgz")])
        self.assertIn("no such file", code)
        empty = Path(self.tmp.name) / "empty"
        empty.mkdir()
        code, _, _ = run([str(empty)])
        self.assertIn("neither inductor/ nor triton/", code)
        bad = Path(self.tmp.name) / "bad.tgz"
        bad.write_text("not a tar")
        code, _, _ = run([str(bad)])
        self.assertIn("not a tar archive", code)
        (self.root / "inductor" / "ab" / "cabc.best_config").write_text("{")
        code, _, _ = run([str(self.root)])
        self.assertIn("cabc.best_config", code)
        (self.root / "triton" / "CHOSEN" / "triton_red_fused__fused_rms_norm_0.json").write_text("{")
        code, _, _ = run([str(self.root)])
        self.assertIn("CHOSEN", code)


if __name__ == "__main__":
    unittest.main()
