"""The harness trusts no lane (docs/protocol.md, "What the harness checks"),
on the CPU: a lane whose timed outputs go wrong after its check, one that
writes into the shared inputs, and one that raises a BaseException in its
timed calls are each failed with a named reason, while cpu-reference and an
honest lane beside them in the same rounds pass and are measured.

With KIBENCH_UNTRUSTED_DEVICE=cuda the same lanes, written with torch on
kibench's device buffers (untrusted_torch_lanes.py), run beside the
reference and torch-eager on a GPU: the device copy of the inputs is the
one written into. KIBENCH_UNTRUSTED_ISOLATION sets --isolation (default
auto: every lane in a worker process); with in-process on a GPU the
classes only a worker process can survive or catch (a lane that ends its
process, one that segfaults, outputs computed for other inputs) are
skipped, saying so.

    test_untrusted_lanes.py SOURCE_DIR BUILD_DIR"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE, BUILD = (os.path.abspath(a) for a in sys.argv[1:3])
CAPI = os.path.join(BUILD, "libkibench_capi.so")
KIBENCH = os.path.join(BUILD, "kibench")
SMALL = os.path.join(SOURCE, "workloads", "small", "small-v1000-h64-t32.json")
ON_GPU = os.environ.get("KIBENCH_UNTRUSTED_DEVICE") == "cuda"
if ON_GPU:
    BASE, HONEST, INNOCENT, COPY = "reference", "torch-eager", ("reference", "torch-eager"), "device"
    UNTRUSTED = os.path.join(SOURCE, "test", "python", "untrusted_torch_lanes.py")
else:
    BASE, HONEST, INNOCENT, COPY = "cpu-reference", "py:" + os.path.join(
        SOURCE, "examples", "python", "numpy_jsd.py") + ":numpy_jsd", ("cpu-reference", "numpy-jsd"), "host"
    UNTRUSTED = os.path.join(SOURCE, "test", "python", "untrusted_lanes.py")
ISOLATION = os.environ.get("KIBENCH_UNTRUSTED_ISOLATION", "auto")
IN_WORKER = not ON_GPU or ISOLATION != "in-process"
QUICK = ["--isolation", ISOLATION, "--min-samples", "12", "--max-samples", "20", "--min-time", "0", "--warmup", "2"]


class UntrustedLanes(unittest.TestCase):
    def run_lanes(self, *lanes):
        tmp = tempfile.mkdtemp(prefix="kibench-untrusted-")
        out = os.path.join(tmp, "runs")
        impl = ",".join([BASE, *[f"py:{UNTRUSTED}:{lane}" for lane in lanes], HONEST])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [os.path.join(SOURCE, "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        python = "python3" if ON_GPU else "/usr/bin/python3"
        result = subprocess.run([python, "-m", "kibench", "run", SMALL, "--impl", impl, "--out", out,
                                 "--capi", CAPI, *QUICK], capture_output=True, text=True, env=env, cwd=tmp,
                                timeout=600)
        dirs = os.listdir(out) if os.path.isdir(out) else []
        self.assertEqual(len(dirs), 1, result.stdout + result.stderr)
        directory = os.path.join(out, dirs[0])

        def manifest(name):
            with open(os.path.join(directory, f"run.{name}.json")) as f:
                return json.load(f)

        return result, directory, manifest

    def assert_innocent_lanes_pass(self, manifest):
        for lane in INNOCENT:
            run = manifest(lane)
            self.assertEqual(run["spec"]["status"], "passed", lane)
            self.assertIn("timing", run["spec"], lane)
            self.assertIn("timed_checks", run["metadata"]["labels"], lane)

    def test_outputs_that_go_wrong_after_the_check_are_caught_in_the_timed_samples(self):
        result, directory, manifest = self.run_lanes("right_three_times")
        self.assertEqual(result.returncode, 1, result.stderr)
        run = manifest("right-three-times")
        self.assertEqual(run["spec"]["status"], "incorrect_numerical")
        self.assertNotIn("timing", run["spec"])
        self.assertIn("the outputs of timed sample 2 fail the check", run["metadata"]["description"])
        self.assertIn("grad_student", run["metadata"]["description"])
        self.assert_innocent_lanes_pass(manifest)
        verify = subprocess.run([KIBENCH, "digest", "--verify", directory], capture_output=True, text=True)
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)

    def test_a_lane_that_writes_into_the_shared_inputs_fails_and_its_neighbours_do_not(self):
        result, _, manifest = self.run_lanes("writes_teacher_weight")
        self.assertEqual(result.returncode, 1, result.stderr)
        run = manifest("writes-teacher-weight")
        self.assertEqual(run["spec"]["status"], "runtime_error")
        # In kibench's process (--isolation in-process) kibench's own copy
        # is written into during the check; in a worker process (the
        # default), the worker's copy during the call.
        self.assertRegex(run["metadata"]["description"],
                         rf"wrote into (its copy of )?the shared input teacher_weight \({COPY} copy\) during "
                         r"(its check|a call to run, in its worker process)")
        self.assert_innocent_lanes_pass(manifest)

    def test_a_base_exception_in_the_timed_calls_fails_the_lane_alone(self):
        result, _, manifest = self.run_lanes("exits_in_timed_calls")
        self.assertEqual(result.returncode, 1, result.stderr)
        run = manifest("exits-in-timed-calls")
        self.assertEqual(run["spec"]["status"], "runtime_error")
        self.assertIn("raised SystemExit", run["metadata"]["description"])
        self.assertNotIn("timing", run["spec"])
        self.assert_innocent_lanes_pass(manifest)

    @unittest.skipUnless(IN_WORKER, "GPU lanes in kibench's process: KIBENCH_UNTRUSTED_ISOLATION=in-process")
    def test_a_lane_that_ends_its_process_fails_alone(self):
        result, directory, manifest = self.run_lanes("ends_its_process")
        self.assertEqual(result.returncode, 1, result.stderr)
        run = manifest("ends-its-process")
        self.assertEqual(run["spec"]["status"], "runtime_error")
        self.assertIn("its worker process exited with code 0", run["metadata"]["description"])
        self.assertNotIn("timing", run["spec"])
        self.assert_innocent_lanes_pass(manifest)
        verify = subprocess.run([KIBENCH, "digest", "--verify", directory], capture_output=True, text=True)
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)

    @unittest.skipUnless(IN_WORKER, "GPU lanes in kibench's process: KIBENCH_UNTRUSTED_ISOLATION=in-process")
    def test_a_lane_that_segfaults_fails_alone(self):
        result, _, manifest = self.run_lanes("segfaults")
        self.assertEqual(result.returncode, 1, result.stderr)
        run = manifest("segfaults")
        self.assertEqual(run["spec"]["status"], "runtime_error")
        self.assertIn("was killed by signal 11 (SIGSEGV, a segmentation fault)", run["metadata"]["description"])
        self.assertNotIn("timing", run["spec"])
        self.assert_innocent_lanes_pass(manifest)

    @unittest.skipUnless(IN_WORKER, "GPU lanes in kibench's process: KIBENCH_UNTRUSTED_ISOLATION=in-process")
    def test_outputs_computed_for_other_inputs_fail(self):
        for lane, name in (("cached_in_prepare", "cached-in-prepare"),
                           ("cached_after_first_call", "cached-after-first-call")):
            with self.subTest(lane=lane):
                result, _, manifest = self.run_lanes(lane)
                self.assertEqual(result.returncode, 1, result.stderr)
                run = manifest(name)
                self.assertEqual(run["spec"]["status"], "incorrect_numerical")
                self.assertNotIn("timing", run["spec"])
                self.assertRegex(run["metadata"]["description"], r"the outputs of timed sample [12] fail the check")
                self.assert_innocent_lanes_pass(manifest)
                # The honest lane in a worker saw both input sets and says
                # so; kibench's own, in its process, kept the first.
                if not ON_GPU:
                    self.assertEqual(manifest("numpy-jsd")["metadata"]["labels"]["input_sets"],
                                     "2, alternating by timed sample (docs/protocol.md)")
                    self.assertNotIn("input_sets", manifest("cpu-reference")["metadata"]["labels"])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
