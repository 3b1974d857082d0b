"""peers.py's orchestration, JSON schema and text table, with a fake timing backend (no torch).

Run: python3 -m unittest discover -s gpu/rows -p 'test_*.py'   (or python3 gpu/rows/test_peers.py)
"""

import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import peers
import report

# Device time of one launch at this fraction of the copy's bandwidth (the copy: 4000 GB/s).
COPY_GBPS = 4000.0
SPEED = {"copy": 1.0, "eager": 0.8, "compile": 0.7, "liger": 0.9, "triton": 0.85, "rust-llvm": 0.95, "rust-nvvm": 0.94}
# Each run's time is scaled by the next of these: the spread has something to measure.
JITTER = (1.0, 1.02, 0.99, 1.05, 1.0, 0.98)


class FakeCase:
    def __init__(self, backend, key):
        self.backend, self.key = backend, key
        self.runs = {}  # per implementation, so every one sees the same jitter sequence

    def prepare(self, impl):
        if impl in self.backend.prepare_errors:
            raise self.backend.prepare_errors[impl]
        return impl, 1e-7, 5.0

    def time_round(self, runners):
        self.backend.order += runners
        out = []
        for name in runners:
            if name in self.backend.timed_errors:
                out.append(self.backend.timed_errors[name])
                continue
            nbytes = peers.copy_bytes(*self.key[1:]) if name == "copy" else peers.op_bytes(*self.key)
            i = self.runs[name] = self.runs.get(name, -1) + 1
            us = nbytes / (COPY_GBPS * SPEED[name]) / 1e3 * JITTER[i % len(JITTER)]
            out.append((us + self.backend.fixed_us.get(name, 0.0), self.backend.host_us))
        return out


class FakeBackend:
    def __init__(self, prepare_errors=None, timed_errors=None, fail_case=None, host_us=20.0, fixed_us=None):
        self.host_us = host_us
        # Microseconds each launch of an implementation costs beyond its bytes.
        self.fixed_us = fixed_us or {}
        self.prepare_errors = prepare_errors or {}
        self.timed_errors = timed_errors or {}
        self.fail_case = fail_case
        self.order = []
        self.cases = 0
        self.not_run = set()

    def facts(self):
        return {
            "date": "2026-12-02T00:00:00Z",
            "device": {"name": "Fake H200", "driver_version": "580.0", "l2_bytes": 60 * 2**20},
            "versions": {"torch": "2.11.0", "triton": "3.6.0", "liger": "0.8.5"},
            "config": {"spin_us": 250.0},
        }

    def runs(self, impl, key):
        return impl not in self.not_run

    @contextlib.contextmanager
    def case(self, op, rows, cols, dtype, rtol, eps):
        self.cases += 1
        if self.cases == self.fail_case:
            raise KeyboardInterrupt
        yield FakeCase(self, (op, rows, cols, dtype))


def run(argv, backend):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "peers.json")
        args = peers.options([*argv, "--out", out])
        doc = peers.run(args, backend, "peers.py", log=io.StringIO())
        with open(out) as f:
            return doc, json.load(f)


def find(result_rows, implementation, **key):
    return next(
        r
        for r in result_rows
        if r["implementation"] == implementation and all(r[k] == v for k, v in key.items())
    )


class Schema(unittest.TestCase):
    def test_every_row_has_the_documented_keys_and_types(self):
        doc, on_disk = run(["--quick"], FakeBackend())
        self.assertEqual(on_disk, json.loads(json.dumps(doc)))
        self.assertEqual(doc["schema_version"], report.SCHEMA_VERSION)
        self.assertTrue(doc["complete"])
        for key in ("tool", "date", "command_line", "device", "versions", "config", "elapsed_s"):
            self.assertIn(key, doc)
        self.assertEqual(doc["config"]["spin_us"], 250.0)
        self.assertEqual(doc["config"]["rtol"], {"f32": 1e-5, "bf16": 1e-2})
        # 3 ops x 3 quick shapes x 2 dtypes, each with the copy and 4 peers.
        self.assertEqual(len(doc["rows"]), 3 * 3 * 2 * 5)
        for r in doc["rows"]:
            self.assertEqual(tuple(r), report.ROW_KEYS)
            self.assertIs(r["ok"], True)
            self.assertIsNone(r["error"])
            self.assertEqual(r["runs"], peers.MIN_REPS)
            self.assertLessEqual(r["min_us"], r["p10_us"])
            self.assertLessEqual(r["p10_us"], r["median_us"])
            self.assertLessEqual(r["median_us"], r["p90_us"])
            self.assertLessEqual(r["p90_us"], r["max_us"])

    def test_gbps_and_x_copy_come_from_the_same_rotation(self):
        doc, _ = run(["--quick", "--ops", "softmax", "--dtypes", "bf16"], FakeBackend())
        r = find(doc["rows"], "eager", rows=8192, cols=8192)
        self.assertEqual(r["bytes"], 2 * 8192 * 8192 * 2)
        self.assertAlmostEqual(r["gbps"], r["bytes"] / r["median_us"] / 1e3, delta=1e-3 * r["gbps"])
        self.assertAlmostEqual(r["x_copy"], SPEED["eager"], places=3)
        self.assertEqual(find(doc["rows"], "copy", rows=8192, cols=8192)["x_copy"], 1.0)

    def test_norm_bytes_count_the_weight_and_bias(self):
        self.assertEqual(peers.op_bytes("rmsnorm", 2, 8, "f32"), 2 * 16 * 4 + 8 * 4)
        self.assertEqual(peers.op_bytes("layernorm", 2, 8, "bf16"), 2 * 16 * 2 + 2 * 8 * 2)
        self.assertEqual(peers.copy_bytes(2, 8, "bf16"), 2 * 16 * 2)


class Errors(unittest.TestCase):
    def test_a_peer_that_raises_or_fails_its_check_is_an_error_row_not_timed(self):
        errors = {
            "liger": RuntimeError("Cannot launch Triton kernel since n = 131072 exceeds 65536.\nmore"),
            "compile": Exception("max error 0.5 > 1e-05 against the float64 reference"),
        }
        backend = FakeBackend(prepare_errors=errors)
        doc, _ = run(["--quick", "--ops", "rmsnorm", "--dtypes", "f32"], backend)
        liger = find(doc["rows"], "liger", rows=1024)
        self.assertFalse(liger["ok"])
        self.assertEqual(
            liger["error"], "RuntimeError: Cannot launch Triton kernel since n = 131072 exceeds 65536."
        )
        self.assertIsNone(liger["median_us"])
        self.assertIsNone(liger["x_copy"])
        self.assertNotIn("liger", backend.order)
        self.assertIn("max error 0.5", find(doc["rows"], "compile", rows=1024)["error"])
        table = report.text_table(doc)
        self.assertIn("errors:", table)
        self.assertIn("liger rmsnorm 1024x131072 f32: RuntimeError: Cannot launch", table)

    def test_a_peer_that_raises_while_timed_is_dropped_from_the_rotation(self):
        backend = FakeBackend(timed_errors={"triton": ValueError("bad launch")})
        doc, _ = run(["--quick", "--ops", "softmax", "--dtypes", "f32", "--shapes", "8x8"], backend)
        self.assertEqual(find(doc["rows"], "triton")["error"], "raised while timed: ValueError: bad launch")
        self.assertEqual(backend.order.count("triton"), 1)
        self.assertTrue(find(doc["rows"], "eager")["ok"])

    def test_an_interrupted_run_leaves_a_file_marked_incomplete(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "peers.json")
            args = peers.options(["--quick", "--out", out])
            with self.assertRaises(KeyboardInterrupt):
                peers.run(args, FakeBackend(fail_case=2), "peers.py", log=io.StringIO())
            with open(out) as f:
                doc = json.load(f)
        self.assertFalse(doc["complete"])
        self.assertEqual(len(doc["rows"]), 5)

    @unittest.skipIf(importlib.util.find_spec("torch") is not None, "torch is installed here")
    def test_without_torch_main_stops_with_one_line(self):
        with tempfile.TemporaryDirectory() as tmp, self.assertRaises(SystemExit) as stop:
            peers.main(["--out", os.path.join(tmp, "p.json")])
        self.assertRegex(str(stop.exception), r"^error: .*torch.*GPU machine\)$")


class Measurement(unittest.TestCase):
    def test_no_implementation_is_timed_right_after_itself(self):
        backend = FakeBackend()
        run(["--ops", "softmax", "--dtypes", "f32", "--shapes", "8x8,16x16"], backend)
        per_case = (peers.MIN_WARMUP + 30) * 5
        self.assertEqual(len(backend.order), 2 * per_case)
        for case in (backend.order[:per_case], backend.order[per_case:]):
            self.assertEqual([a for a, b in zip(case, case[1:]) if a == b], [])
            self.assertEqual({case.count(n) for n in (report.COPY, *report.IMPLEMENTATIONS)}, {peers.MIN_WARMUP + 30})

    def test_spread_takes_median_and_deciles(self):
        s = report.spread([float(v) for v in range(21, 0, -1)])
        self.assertEqual(
            (s["min_us"], s["p10_us"], s["median_us"], s["p90_us"], s["max_us"]), (1.0, 3.0, 11.0, 19.0, 21.0)
        )


class Options(unittest.TestCase):
    def parse_fails(self, argv):
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            peers.options(argv)

    def test_quick_and_filters(self):
        args = peers.options(["--quick", "--impls", "eager,triton", "--ops", "layernorm"])
        self.assertEqual(args.shapes, peers.QUICK_SHAPES)
        self.assertEqual(args.reps, peers.MIN_REPS)
        self.assertEqual(args.impls, ("eager", "triton"))
        self.assertEqual(peers.cases(args)[0], ("layernorm", 65536, 512, "f32"))
        self.assertEqual(len(peers.cases(peers.options([]))), 3 * 7 * 2)
        self.assertEqual(peers.options(["--shapes", "3x5,1x262144"]).shapes, ((3, 5), (1, 262144)))
        self.assertEqual(peers.options([]).l2, "dirty")
        self.assertEqual(peers.options(["--l2", "clean"]).l2, "clean")

    def test_bad_values_are_refused(self):
        for argv in (
            ["--reps", "10"],
            ["--warmup", "1"],
            ["--shapes", "8192"],
            ["--shapes", "0x4"],
            ["--ops", "gelu"],
            ["--impls", "cub"],
            ["--dtypes", "f16"],
            ["--l2", "cold"],
            ["--lab-schedule", "streamed"],
        ):
            with self.subTest(argv=argv):
                self.parse_fails(argv)


class Lab(unittest.TestCase):
    """The lab's Rust kernels in the peers' rotation (--lab)."""

    RECORD = {
        "op": "softmax", "rows": 8192, "cols": 8192, "dtype": "f32", "implementation": "rust-llvm",
        "entry": "softmax_block_f32", "schedule": "block", "chosen": True,
        "launch": {"blocks": 8192, "threads": 512, "cluster": 1, "shared_bytes": 1552},
    }  # fmt: skip

    def lab_file(self, tmp, rows):
        path = os.path.join(tmp, "rows-x.json")
        with open(path, "w") as f:
            json.dump({"rows": rows}, f)
        return path

    def test_the_rust_kernels_are_timed_in_the_rotation_and_never_the_best_peer(self):
        with tempfile.TemporaryDirectory() as tmp:
            lab = self.lab_file(tmp, [self.RECORD])
            argv = ["--ops", "softmax", "--dtypes", "f32", "--shapes", "8192x8192", "--lab", lab]
            self.assertEqual(peers.options(argv).impls[:2], ("rust-llvm", "rust-nvvm"))
            backend = FakeBackend()
            doc, _ = run(argv, backend)
        self.assertIn("rust-llvm", backend.order)
        self.assertAlmostEqual(find(doc["rows"], "rust-llvm")["x_copy"], 0.95, places=2)
        row = next(line for line in report.text_table(doc).splitlines() if line.startswith("softmax"))
        # rust-llvm is the fastest here, but the best peer is liger's.
        self.assertTrue(row.endswith("0.90 liger"), row)
        self.assertEqual(row.count("*"), 1)

    def test_the_schedule_of_the_rust_kernels_is_recorded_where_not_the_chosen_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            lab = self.lab_file(tmp, [self.RECORD])
            argv = ["--ops", "softmax", "--dtypes", "f32", "--shapes", "8192x8192", "--lab", lab]
            doc, _ = run([*argv, "--lab-schedule", "block"], FakeBackend())
            self.assertEqual(doc["config"]["lab_schedule"], "block")
            doc, _ = run(argv, FakeBackend())
            self.assertNotIn("lab_schedule", doc["config"])

    def test_a_rust_kernel_the_lab_did_not_run_is_left_out_not_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            lab = self.lab_file(tmp, [self.RECORD])
            backend = FakeBackend()
            backend.not_run = {"rust-nvvm"}
            doc, _ = run(["--ops", "softmax", "--dtypes", "f32", "--shapes", "8192x8192", "--lab", lab], backend)
        self.assertNotIn("rust-nvvm", backend.order)
        self.assertEqual([r for r in doc["rows"] if not r["ok"]], [])

    def test_the_launches_are_the_chosen_rows_of_the_lab_file(self):
        import lab_kernels

        other = {**self.RECORD, "entry": "softmax_wide_f32", "schedule": "wide", "chosen": False}
        nvcc = {**self.RECORD, "implementation": "nvcc"}
        plans = lab_kernels.recorded_launches(json.dumps({"rows": [self.RECORD, other, nvcc]}))
        self.assertEqual(
            plans, {("softmax", 8192, 8192, "f32", "rust-llvm"): ("softmax_block_f32", self.RECORD["launch"])}
        )
        # Or those of one schedule, chosen or not.
        rows = json.dumps({"rows": [self.RECORD, other, nvcc]})
        plans = lab_kernels.recorded_launches(rows, "wide")
        self.assertEqual(plans, {("softmax", 8192, 8192, "f32", "rust-llvm"): ("softmax_wide_f32", other["launch"])})
        with self.assertRaisesRegex(lab_kernels.LabError, "no row of the streamed schedule"):
            lab_kernels.recorded_launches(json.dumps({"rows": [self.RECORD]}), "streamed")
        # A file written before the launch was recorded: refused in one line.
        without = {k: v for k, v in self.RECORD.items() if k != "launch"}
        with self.assertRaisesRegex(lab_kernels.LabError, "no chosen row with its launch"):
            lab_kernels.recorded_launches(json.dumps({"rows": [without]}))

    def test_a_cluster_launch_sets_the_lab_s_size_and_placement(self):
        import lab_kernels

        self.assertEqual(lab_kernels.launch_attributes(self.RECORD["launch"]), [])
        cluster = {"blocks": 224, "threads": 512, "cluster": 16, "shared_bytes": 91664}
        # A record from before the placement policy: the size alone (the default placement).
        (size,) = lab_kernels.launch_attributes(cluster)
        self.assertEqual((size.id, size.value.cluster.x), (lab_kernels.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, 16))
        size, policy = lab_kernels.launch_attributes({**cluster, "balanced": True})
        self.assertEqual(
            (policy.id, policy.value.policy),
            (
                lab_kernels.CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
                lab_kernels.CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING,
            ),
        )
        self.assertEqual(len(lab_kernels.launch_attributes({**cluster, "balanced": False})), 1)

    def test_the_ptx_is_the_one_the_lab_loaded_unless_a_folder_is_given(self):
        import lab_kernels

        text = json.dumps({"ptx": {"llvm": "/repo/target/ptx/llvm/gpu_kernels.ptx"}, "rows": [self.RECORD]})
        self.assertEqual(lab_kernels.ptx_paths(text), {"llvm": "/repo/target/ptx/llvm/gpu_kernels.ptx"})
        self.assertEqual(
            lab_kernels.ptx_paths(text, "dist/ptx")["nvvm"], os.path.join("dist/ptx", "nvvm", "gpu_kernels.ptx.gz")
        )

    def test_a_missing_lab_file_is_refused(self):
        with contextlib.redirect_stderr(io.StringIO()) as err, self.assertRaises(SystemExit):
            peers.options(["--lab", "/nonexistent/rows.json"])
        self.assertIn("--lab /nonexistent/rows.json: no such file", err.getvalue())


class Table(unittest.TestCase):
    def test_best_peer_starred_and_named(self):
        doc, _ = run(["--quick", "--ops", "softmax", "--dtypes", "f32"], FakeBackend())
        lines = report.text_table(doc).splitlines()
        row = next(line for line in lines if line.startswith("softmax") and "8192 x 8192" in line)
        self.assertIn("0.90*", row)
        self.assertEqual(row.count("*"), 1)
        self.assertTrue(row.endswith("0.90 liger"))
        self.assertIn("copy GB/s", lines[2])

    def test_a_host_slower_than_the_spin_is_flagged(self):
        argv = ["--ops", "softmax", "--dtypes", "f32", "--shapes", "8x8", "--impls", "eager"]
        doc, _ = run(argv, FakeBackend(host_us=300.0))
        self.assertIn(
            "warning: eager softmax 8x8 f32: host 300 us per call > the 250 us GPU spin",
            report.text_table(doc),
        )
        doc, _ = run(argv, FakeBackend(host_us=200.0))
        self.assertNotIn("warning", report.text_table(doc))

    def test_tensors_near_the_l2_size_are_marked(self):
        doc, _ = run(
            ["--ops", "softmax", "--dtypes", "bf16", "--shapes", "65536x512,4096x32768"], FakeBackend()
        )
        table = report.text_table(doc)
        self.assertIn("65536 x 512 +", table)
        self.assertNotIn("32768 +", table)
        self.assertIn("+ tensor under 4x the L2 (60 MiB)", table)
        self.assertNotIn("L2 clean", table)

    def test_a_clean_l2_run_says_so_and_marks_no_tensor(self):
        argv = ["--ops", "softmax", "--dtypes", "bf16", "--shapes", "65536x512", "--l2", "clean"]
        doc, _ = run(argv, FakeBackend())
        self.assertEqual(doc["config"]["l2"], "clean")
        table = report.text_table(doc)
        self.assertIn("L2 clean at each launch (--l2 clean)", table)
        self.assertNotIn("65536 x 512 +", table)


class FixedAndRate(unittest.TestCase):
    def test_a_fixed_cost_and_a_rate_are_told_apart_over_row_counts(self):
        argv = ["--ops", "rmsnorm", "--dtypes", "f32", "--shapes", "1024x512,4096x512,16384x512"]
        doc, _ = run([*argv, "--impls", "compile"], FakeBackend(fixed_us={"compile": 3.0}))
        fits = {f["implementation"]: f for f in report.fixed_and_rate(doc["rows"])}
        self.assertEqual(fits["compile"]["row_counts"], [1024, 4096, 16384])
        # The medians are kept to 0.01 us (report.ROUNDING): the fit recovers to about that.
        self.assertAlmostEqual(fits["compile"]["fixed_us"], 3.0, delta=0.01)
        self.assertAlmostEqual(fits["compile"]["rate_gbps"] / (COPY_GBPS * SPEED["compile"]), 1.0, delta=1e-3)
        self.assertAlmostEqual(fits["copy"]["fixed_us"], 0.0, delta=0.01)
        table = report.text_table(doc)
        self.assertIn("fixed cost and rate", table)
        fits_table = table.split("fixed cost and rate")[1].splitlines()
        row = next(line for line in fits_table if "compile" in line).split()
        self.assertEqual(row[:4], ["rmsnorm", "512", "f32", "compile"])
        self.assertEqual(row[-2:], ["3.00", "2800"])

    def test_no_fit_below_three_row_counts(self):
        argv = ["--ops", "rmsnorm", "--dtypes", "f32", "--shapes", "1024x512,4096x512", "--impls", "compile"]
        doc, _ = run(argv, FakeBackend())
        self.assertEqual(report.fixed_and_rate(doc["rows"]), [])
        self.assertNotIn("fixed cost and rate", report.text_table(doc))


if __name__ == "__main__":
    unittest.main()
