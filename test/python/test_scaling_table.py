"""scripts/scaling_table.py on run directories shaped as `kibench run --gpus N`
writes them: the efficiency and the collectives' share computed from the
same run's medians, rows in GPU-count order, and a directory that is no
such run refused with exit 2 and its name.

    test_scaling_table.py SOURCE_DIR"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.path.abspath(sys.argv[1])
SCRIPT = os.path.join(SOURCE, "scripts", "scaling_table.py")


def write_run(root, name, family, lanes):
    path = os.path.join(root, name)
    os.makedirs(path)
    with open(os.path.join(path, "protocol.json"), "w") as f:
        json.dump({"spec": {"comparability": {"family": family}}}, f)
    with open(os.path.join(path, "summary.json"), "w") as f:
        json.dump({"workload": "seed", "implementations": [
            dict({"implementation": impl, "medianMs": ms}, **extra) for impl, ms, extra in lanes]}, f)
    return path


def table(*dirs):
    return subprocess.run([sys.executable, SCRIPT, *dirs], capture_output=True, text=True, timeout=60)


class ScalingTable(unittest.TestCase):
    def test_rows_in_gpu_order_with_same_run_ratios(self):
        with tempfile.TemporaryDirectory() as root:
            passed = {"status": "passed", "errors": {"loss": {"relL2": 1e-7}, "grad_student_input": {"relL2": 2e-3}}}
            eight = write_run(root, "eight", "kibench_cuda_events_cold_full_gpus8",
                              [("fused", 32.0, {}), ("fused-vocab-parallel", 5.0, passed),
                               ("fused-vocab-parallel-compute-only", 4.0, {"status": "incomplete_evidence"})])
            two = write_run(root, "two", "kibench_cuda_events_cold_full_gpus2",
                            [("fused", 34.0, {}), ("fused-vocab-parallel", 20.0, passed)])
            result = table(eight, two)
            self.assertEqual(result.returncode, 0, result.stderr)
            rows = [line for line in result.stdout.splitlines() if line.startswith("| ") and line[2].isdigit()]
            self.assertEqual(len(rows), 2)
            # 2 GPUs: ideal 17, efficiency 17 / 20 = 85 %, no compute-only lane.
            self.assertEqual(rows[0], "| 2 | 34.00 | 17.00 | 20.00 | 85.0 % | – | – | passed (max rel L2 2.0e-03) |")
            # 8 GPUs: ideal 4, efficiency 80 %, collectives 1 - 4/5 = 20 %.
            self.assertEqual(rows[1], "| 8 | 32.00 | 4.00 | 5.00 | 80.0 % | 4.00 | 20.0 % | passed (max rel L2 2.0e-03) |")

    def test_not_a_run_is_refused_naming_it(self):
        with tempfile.TemporaryDirectory() as root:
            result = table(root)
            self.assertEqual(result.returncode, 2)
            self.assertIn(os.path.join(root, "summary.json"), result.stderr)
            self.assertEqual(result.stdout, "")

    def test_a_run_without_the_sharded_lane_is_refused(self):
        with tempfile.TemporaryDirectory() as root:
            run = write_run(root, "one", "kibench_cuda_events_cold_full", [("fused", 32.0, {})])
            result = table(run)
            self.assertEqual(result.returncode, 2)
            self.assertIn("no fused-vocab-parallel", result.stderr)
            self.assertIn(os.path.join(run, "summary.json"), result.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
