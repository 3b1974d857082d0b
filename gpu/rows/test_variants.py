"""variants.py against bench folders laid out as variants.sh writes them (no torch, no GPU)."""
import contextlib
import io
import json
import os
import tempfile
import unittest

import variants


def bench(root, build, rnd, rows):
    d = os.path.join(root, f"bench-{build}-{rnd}")
    os.makedirs(d)
    doc = {"rows": [
        {"entry": e, "implementation": i, "rows": 256, "cols": 262144, "x_copy": x}
        for e, i, x in rows
    ]}
    with open(os.path.join(d, "rows-nvidia-h200-custom-20261205T000000Z.json"), "w") as f:
        json.dump(doc, f)


class Variants(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        # Rounds alternate as variants.sh runs them: base, lp, then lp, base.
        bench(self.dir, "base", 1, [("layernorm_cluster_f32", "rust-llvm", 0.880),
                                    ("rmsnorm_cluster_f32", "rust-llvm", 0.960)])
        bench(self.dir, "lp", 1, [("layernorm_cluster_f32", "rust-llvm", 0.930),
                                  ("rmsnorm_cluster_f32", "rust-llvm", 0.962)])
        bench(self.dir, "lp", 2, [("layernorm_cluster_f32", "rust-llvm", 0.932),
                                  ("rmsnorm_cluster_f32", "rust-llvm", 0.957)])
        bench(self.dir, "base", 2, [("layernorm_cluster_f32", "rust-llvm", 0.884),
                                    ("rmsnorm_cluster_f32", "rust-llvm", 0.958),
                                    ("softmax_cluster_f32", "rust-llvm", None)])

    def test_builds_in_the_order_they_first_ran(self):
        _, builds = variants.read(self.dir)
        self.assertEqual(builds, ["base", "lp"])

    def test_change_and_spread(self):
        cells, builds = variants.read(self.dir)
        text = variants.table(cells, builds)
        ln = next(l for l in text.splitlines() if l.startswith("layernorm"))
        rms = next(l for l in text.splitlines() if l.startswith("rmsnorm"))
        # (0.931 / 0.882 - 1) = +5.6 %, every lp round above every base round.
        self.assertIn("0.880 0.884", ln)
        self.assertIn("+5.6 % outside", ln)
        # (0.9595 / 0.959 - 1) = +0.1 %, the rounds overlap.
        self.assertRegex(rms, r"\+0\.1 %$")
        # A row without a timing (x_copy null) is left out, not shown as zero.
        self.assertNotIn("softmax", text)

    def test_a_variant_that_did_not_run_is_named(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
            variants.main([self.dir, "--builds", "base,bo"])
        self.assertIn("no bench of bo", str(e.exception.code))

    def test_a_missing_round_is_a_dash(self):
        cells, builds = variants.read(self.dir)
        cells[("x_f32", "rust-nvvm", "1x1")]["base"][1] = 1.0
        row = next(l for l in variants.table(cells, builds).splitlines() if l.startswith("x_f32"))
        self.assertEqual(row.split()[-2:], ["-", "-"])


if __name__ == "__main__":
    unittest.main()
