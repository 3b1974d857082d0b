"""variants.py against bench folders laid out as variants.sh writes them, variants.sh and
rotation.sh in trees of their own with fake tools (no torch, no GPU)."""
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import textwrap
import unittest

import variants


def bench(root, build, rnd, rows, date=""):
    d = os.path.join(root, f"bench-{build}-{rnd}")
    os.makedirs(d)
    doc = {"date": date, "rows": [
        {"entry": e, "implementation": i, "rows": 256, "cols": 262144, "x_copy": x,
         "dtype": e.rsplit("_", 1)[-1]}
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

    def test_builds_by_the_date_they_ran_not_by_name(self):
        # base, then lp, then bo in the first round: not the names' order (bo before lp).
        root = tempfile.mkdtemp()
        for build, date in (("base", "T1"), ("lp", "T2"), ("bo", "T3")):
            bench(root, build, 1, [("x_f32", "rust-llvm", 0.9)], date=f"2026-12-05{date}")
        self.assertEqual(variants.read(root)[1], ["base", "lp", "bo"])

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

    def test_a_variant_whose_benches_failed_is_named_and_shown_as_dashes(self):
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            variants.main([self.dir, "--builds", "base,lp,bo"])
        self.assertIn("no bench of bo", err.getvalue())
        ln = next(l for l in out.getvalue().splitlines() if l.startswith("layernorm"))
        # base, lp, bo, lp / base, bo / base
        self.assertEqual(re.split(r"\s{2,}", ln)[3:], ["0.880 0.884", "0.930 0.932", "-",
                                                        "+5.6 % outside", "-"])

    def test_no_bench_at_all_is_an_error(self):
        with self.assertRaises(SystemExit) as e:
            variants.main([tempfile.mkdtemp()])
        self.assertIn("no bench-BUILD-ROUND", str(e.exception.code))

    def test_one_round_a_side_has_no_spread_to_be_outside(self):
        self.assertEqual(variants.change([0.90], [0.95])[1], False)
        self.assertEqual(variants.change([0.90, 0.91], [0.95])[1], False)
        self.assertEqual(variants.change([0.90, 0.91], [0.95, 0.96])[1], True)

    def test_a_round_of_a_noisy_copy_is_marked_and_left_out_of_the_change(self):
        # As the H100 gave it (results/rows/18d5d0a/experiments): base's first copy of the
        # matrix noisy, its ratio 1.185; without that round, tc is 2.4 % behind base, not 10.9.
        root = tempfile.mkdtemp()
        row = [("rmsnorm_block_bf16", "rust-llvm", 1.185)]
        for build, rnd, x in (("base", 1, 1.185), ("tc", 1, 0.973), ("tc", 2, 0.971),
                              ("base", 2, 0.996)):
            bench(root, build, rnd, [(row[0][0], row[0][1], x)], date=f"T{rnd}{build}")
        results = {"rows": [{"kernel": "d2d_copy", "size": "256x262144", "dtype": "bf16",
                             "noisy": True}]}
        with open(os.path.join(root, "bench-base-1", "nvidia-h100-custom.json"), "w") as f:
            json.dump(results, f)
        text = variants.table(*variants.read(root))
        ln = next(l for l in text.splitlines() if l.startswith("rmsnorm"))
        self.assertIn("1.185! 0.996", ln)
        self.assertRegex(ln, r"-2\.4 %$")
        self.assertIn("! = that round's D2D copy was noisy", text)
        # Another matrix's noisy copy marks nothing here.
        results["rows"][0]["size"] = "16384x4096"
        with open(os.path.join(root, "bench-base-1", "nvidia-h100-custom.json"), "w") as f:
            json.dump(results, f)
        self.assertNotIn("!", variants.table(*variants.read(root)))

    def test_a_missing_round_is_a_dash(self):
        cells, builds = variants.read(self.dir)
        cells[("x_f32", "rust-nvvm", "1x1")]["base"][1] = 1.0
        row = next(l for l in variants.table(cells, builds).splitlines() if l.startswith("x_f32"))
        self.assertEqual(row.split()[-2:], ["-", "-"])


HERE = os.path.dirname(os.path.abspath(__file__))

# A lab that checks nothing and times nothing: `run` fails for the build named in $FAIL_RUN;
# `bench --out DIR` writes one row, x copy 0.90 for dist/'s lab and 0.93 for a variant's, and
# appends its build to $ORDER.
FAKE_LAB = textwrap.dedent("""\
    #!/bin/bash
    name=$(basename "$(dirname "$0")"); cmd=$1; shift
    if [[ $cmd == run ]]; then
        [[ $name == "$FAIL_RUN" ]] && { echo FAILED; exit 1; }
        echo "ok $*"; exit 0
    fi
    while [[ $# -gt 0 ]]; do [[ $1 == --out ]] && out=$2; shift; done
    echo "$name" >> "$ORDER"
    x=0.93; [[ $name == dist ]] && x=0.90
    mkdir -p "$out"
    echo '{"rows": [{"entry": "layernorm_cluster_f32", "implementation": "rust-llvm",' \
         '"rows": 256, "cols": 262144, "x_copy": '$x'}]}' > "$out/rows-x.json"
""")


class VariantsScript(unittest.TestCase):
    """variants.sh itself, in a tree of its own with a fake lab, nvidia-smi and sanitizer."""

    def setUp(self):
        self.root = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.root, "gpu/rows"))
        for f in ("variants.sh", "variants.py", "peer_kernels.py"):
            shutil.copy(os.path.join(HERE, f), os.path.join(self.root, "gpu/rows", f))
        self.bin = os.path.join(self.root, "bin")
        os.makedirs(self.bin)
        tools = {"nvidia-smi": "echo 'NVIDIA H200, 580.00'",
                 "compute-sanitizer": 'shift 4; "$@"'}
        for name, body in tools.items():
            self.write(os.path.join(self.bin, name), "#!/bin/bash\n" + body + "\n")
        # lp changes the host (a lab of its own), bo the kernels alone (its PTX, no lab).
        for d in ("dist", "dist/variant/lp"):
            self.write(os.path.join(self.root, d, "lab"), FAKE_LAB)
        for d in ("dist", "dist/variant/lp", "dist/variant/bo"):
            self.write(os.path.join(self.root, d, "ptx/llvm/gpu_kernels.ptx.gz"), "")
        self.write(os.path.join(self.root, "dist/MANIFEST.txt"), "commit abc\n")

    def write(self, path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)

    def run_script(self, *args, fail_run=""):
        out = os.path.join(self.root, "out")
        env = dict(os.environ, PATH=self.bin + os.pathsep + os.environ["PATH"], OUT=out,
                   FAIL_RUN=fail_run, ORDER=os.path.join(self.root, "order"))
        p = subprocess.run(["bash", "gpu/rows/variants.sh", *args], cwd=self.root, env=env,
                           capture_output=True, text=True, timeout=60)
        return p, out

    def test_checks_then_rounds_in_alternating_order(self):
        p, out = self.run_script("--kernel", "layernorm_cluster", "--shape", "256x262144",
                                 "--check", "3x131072", "--sanitize", "racecheck",
                                 "--rounds", "2", "lp", "bo", fail_run="bo")
        self.assertEqual(p.returncode, 0, p.stderr)
        # bo failed its check: only base and lp are timed, the second round reversed.
        with open(os.path.join(self.root, "order")) as f:
            self.assertEqual(f.read().split(), ["dist", "lp", "lp", "dist"])
        self.assertIn("bo dropped", p.stdout)
        # bo, PTX alone, was checked by dist/'s lab, copied beside its PTX.
        self.assertTrue(os.access(os.path.join(self.root, "dist/variant/bo/lab"), os.X_OK))
        row = r"layernorm_cluster_f32 .* 0\.900 0\.900 +0\.930 0\.930 +\+3\.3 % outside"
        self.assertRegex(p.stdout, row)
        with tarfile.open(os.path.join(out, "variants-lp-bo.tgz")) as t:
            names = {os.path.normpath(n) for n in t.getnames()}
        for name in ("steps.log", "variants.txt", "run-bo.txt", "sanitize-lp-racecheck.txt",
                     "bench-base-1/rows-x.json", "bench-lp-2/rows-x.json"):
            self.assertIn(name, names)

    def test_a_variant_not_built_is_refused_before_anything_runs(self):
        p, out = self.run_script("--kernel", "layernorm_cluster", "--shape", "256x262144", "nb")
        self.assertEqual(p.returncode, 2)
        self.assertIn("no dist/variant/nb/ptx", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.root, "order")))


FAKE_PEERS = textwrap.dedent("""\
    #!/bin/bash
    # peers.sh as rotation.sh calls it: records the PTX it was given, writes a table row.
    while [[ $# -gt 0 ]]; do
        case $1 in --ptx) ptx=$2; shift ;; --lab) lab=$2; shift ;; esac; shift
    done
    echo "$ptx $(basename "$lab")" >> "$ORDER"
    mkdir -p "$OUT"
    printf 'op  rows x cols\nrmsnorm  4096 x 32768  f32  %s\n' "$ptx" > "$OUT/peers.txt"
""")


class RotationScript(unittest.TestCase):
    """rotation.sh in a tree of its own with a fake peers.sh and a variants.sh tgz."""

    def setUp(self):
        self.root = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.root, "gpu/rows"))
        shutil.copy(os.path.join(HERE, "rotation.sh"), os.path.join(self.root, "gpu/rows"))
        with open(os.path.join(self.root, "gpu/rows/peers.sh"), "w") as f:
            f.write(FAKE_PEERS)

    def variants_tgz(self, *builds):
        """A variants.sh archive whose first round benched `builds`."""
        src = tempfile.mkdtemp()
        for b in builds:
            bench(src, b, 1, [("rmsnorm_wide_f32", "rust-llvm", 0.96)])
        path = os.path.join(self.root, "variants-t.tgz")
        with tarfile.open(path, "w:gz") as t:
            t.add(src, arcname=".")
        return path

    def run_script(self, *args):
        out = os.path.join(self.root, "out")
        env = dict(os.environ, OUT=out, ORDER=os.path.join(self.root, "order"))
        p = subprocess.run(["bash", "gpu/rows/rotation.sh", *args], cwd=self.root, env=env,
                           capture_output=True, text=True, timeout=60)
        return p, out

    def test_base_and_the_variants_that_passed_then_in_reverse(self):
        tgz = self.variants_tgz("base", "rr")
        p, out = self.run_script("--from", tgz, "--tag", "t", "rr", "rn", "--",
                                 "--ops", "rmsnorm")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.root, "order")) as f:
            runs = [line.split() for line in f]
        # rn has no bench (it failed its checks): left out; every run with base's launches.
        self.assertEqual([r[0] for r in runs], ["dist/ptx", "dist/variant/rr/ptx",
                                                "dist/variant/rr/ptx", "dist/ptx"])
        self.assertTrue(all(r[1].startswith("rows-") for r in runs))
        self.assertEqual(len(re.findall(r"^rmsnorm ", p.stdout, re.M)), 4)
        with tarfile.open(os.path.join(out, "t-rotation.tgz")) as t:
            names = {os.path.normpath(n) for n in t.getnames()}
        for name in ("steps.log", "peers-1-base/peers.txt", "peers-4-base/peers.txt"):
            self.assertIn(name, names)

    def test_no_rotation_without_a_variant_that_passed(self):
        p, _ = self.run_script("--from", self.variants_tgz("base"), "--tag", "t", "rr", "--")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("no variant of rr passed its checks", p.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.root, "order")))


if __name__ == "__main__":
    unittest.main()
