"""The Python implementations shipped in python/kibench/lanes.py (PyTorch
eager, torch.compile and Liger-Kernel, for distill_jsd_loss, jsd and
fused_linear_jsd) held to kibench's fp64 oracle on the CPU: each runs,
unchanged, as a CPU lane (cpu_lanes.py) through `python -m kibench run`,
its outputs checked by kibench's gate under the workload's policy, on every
small workload of its operation (beta 0, 0.5 and 1, tau 0.5 and 2, ignored
tokens, every token ignored, V odd, T = 1, biases) and on test/data/lanes/
(loss weights, beta, tau and ignore_index none of them at their defaults,
two of Liger's chunks), for the full pass, and the forward and backward
passes on test/data/lanes/. Liger's Triton kernels (LigerJSD,
LigerFusedLinearJSD) run in Triton's interpreter (TRITON_INTERPRET=1).
Two lanes wired wrongly on purpose must fail the gate on test/data/lanes/.

    test_lanes_cpu.py SOURCE_DIR BUILD_DIR

The lanes run under the Python named by $KIBENCH_LANES_PYTHON (default: the
one running this file). Where torch is not installed there the whole test
is skipped, saying so; where liger-kernel or triton is not, the Liger lanes
are."""

import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE, BUILD = (os.path.abspath(a) for a in sys.argv[1:3])
CAPI = os.path.join(BUILD, "libkibench_capi.so")
LANES_MODULE = os.path.join(SOURCE, "test", "python", "cpu_lanes.py")
PYTHON = os.environ.get("KIBENCH_LANES_PYTHON") or sys.executable
QUICK = ["--min-samples", "2", "--max-samples", "2", "--min-time", "0", "--warmup", "0"]


def small(folder, pattern="*.json"):
    return sorted(glob.glob(os.path.join(SOURCE, folder, pattern)))


LANES_DATA = {
    "distill_jsd_loss": os.path.join(SOURCE, "test", "data", "lanes",
                                     "distill-jsd-lanes-weights-ignore-index-bias-two-chunks.json"),
    "jsd": os.path.join(SOURCE, "test", "data", "lanes", "jsd-lanes-beta07-ignore-index.json"),
    "fused_linear_jsd": os.path.join(SOURCE, "test", "data", "lanes",
                                     "fused-linear-jsd-lanes-beta07-tau07-ignore-index.json"),
}
# operation: (its small workloads, its torch lanes, its Liger lanes), by cpu_lanes.py attribute.
OPERATIONS = {
    "distill_jsd_loss": (small("workloads/small"), ["torch_eager", "torch_compile"], ["liger"]),
    "jsd": (small("workloads/jsd/small"), ["torch_eager_jsd", "torch_eager_jsd_script"],
            ["liger_jsd", "liger_jsd_script"]),
    "fused_linear_jsd": (small("workloads/fused_linear_jsd/small"), ["torch_eager_fused_linear_jsd"],
                         ["liger_fused_linear_jsd"]),
}


def importable(*modules):
    check = "import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None for m in sys.argv[1:]))"
    return subprocess.run([PYTHON, "-c", check, *modules], capture_output=True).returncode == 0


def lane_name(attribute):
    return attribute.replace("_", "-") + "-cpu" if attribute not in ("weights_swapped", "student_teacher_swapped") \
        else attribute.replace("_", "-")


class ShippedLanesOnTheCpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not importable("torch"):
            raise unittest.SkipTest(f"torch is not installed for {PYTHON}: the shipped PyTorch and Liger-Kernel "
                                    "lanes are checked where it is (pip install torch, and liger-kernel and triton "
                                    "for the Liger lanes; KIBENCH_LANES_PYTHON names that Python)")
        cls.liger = importable("liger_kernel", "triton")
        if not cls.liger:
            print(f"note: liger-kernel or triton is not installed for {PYTHON}: the Liger lanes are skipped",
                  file=sys.stderr)
        cls.tmp = tempfile.TemporaryDirectory(prefix="kibench-lanes-")
        cls.env = dict(os.environ, TRITON_INTERPRET="1",
                       PYTHONPATH=os.pathsep.join(filter(None, [os.path.join(SOURCE, "python"),
                                                                os.environ.get("PYTHONPATH")])))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_lanes(self, tag, workloads, attributes, *flags):
        """Runs the lanes on the workloads; returns {(workload name, lane): run manifest}."""
        out = os.path.join(self.tmp.name, tag)
        impl = ",".join(f"py:{LANES_MODULE}:{a}" for a in attributes)
        result = subprocess.run([PYTHON, "-m", "kibench", "run", *workloads, "--impl", impl, "--capi", CAPI,
                                 "--out", out, *QUICK, *flags], capture_output=True, text=True, env=self.env,
                                cwd=self.tmp.name, timeout=1500)
        self.assertIn(result.returncode, (0, 1), result.stderr[-4000:])
        manifests = {}
        for directory in sorted(os.listdir(out)):
            with open(os.path.join(out, directory, "workload.json")) as f:
                name = json.load(f)["metadata"]["name"]
            for path in glob.glob(os.path.join(out, directory, "run.*.json")):
                with open(path) as f:
                    manifest = json.load(f)
                manifests[(name, os.path.basename(path)[len("run."):-len(".json")])] = manifest
        return manifests, result

    def lanes_of(self, operation):
        _, torch_lanes, liger_lanes = OPERATIONS[operation]
        return torch_lanes + (liger_lanes if self.liger else [])

    def assert_all_passed(self, manifests, result, workloads, attributes):
        names = []
        for path in workloads:
            with open(path) as f:
                names.append(json.load(f)["metadata"]["name"])
        for name in names:
            for attribute in attributes:
                lane = lane_name(attribute)
                with self.subTest(workload=name, lane=lane):
                    manifest = manifests.get((name, lane))
                    self.assertIsNotNone(manifest, f"no run of {lane} on {name}: {result.stderr[-2000:]}")
                    self.assertEqual(manifest["spec"]["status"], "passed", manifest["metadata"].get("description"))

    def check_operation(self, operation):
        workloads = OPERATIONS[operation][0] + [LANES_DATA[operation]]
        attributes = self.lanes_of(operation)
        manifests, result = self.run_lanes(operation, workloads, attributes)
        self.assert_all_passed(manifests, result, workloads, attributes)

    def test_distill_jsd_loss_lanes_match_the_oracle(self):
        self.check_operation("distill_jsd_loss")

    def test_jsd_lanes_match_the_oracle(self):
        self.check_operation("jsd")

    def test_fused_linear_jsd_lanes_match_the_oracle(self):
        self.check_operation("fused_linear_jsd")

    def test_forward_and_backward_passes_match_the_oracle(self):
        workloads = list(LANES_DATA.values())
        attributes = sum((self.lanes_of(operation) for operation in OPERATIONS), [])
        for pass_ in ("forward", "backward"):
            manifests, result = self.run_lanes(f"pass-{pass_}", workloads, attributes, "--pass", pass_)
            for (name, lane), manifest in manifests.items():
                with self.subTest(pass_=pass_, workload=name, lane=lane):
                    self.assertEqual(manifest["spec"]["status"], "passed", manifest["metadata"].get("description"))
            ran = {lane for _, lane in manifests}
            self.assertEqual(ran, {lane_name(a) for a in attributes}, result.stderr[-2000:])

    def test_lanes_wired_wrongly_fail_the_gate(self):
        manifests, result = self.run_lanes("miswired", [LANES_DATA["distill_jsd_loss"], LANES_DATA["jsd"]],
                                           ["weights_swapped", "student_teacher_swapped"])
        self.assertEqual(result.returncode, 1, result.stderr[-2000:])
        statuses = {lane: manifest["spec"]["status"] for (_, lane), manifest in manifests.items()}
        self.assertEqual(statuses, {"weights-swapped": "incorrect_numerical",
                                    "student-teacher-swapped": "incorrect_numerical"})


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
