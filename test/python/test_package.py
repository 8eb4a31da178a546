"""The kibench Python package end to end, on the CPU: installed with pip into
a fresh virtual environment (offline), `python -m kibench run` times a
numpy implementation beside cpu-reference through the oracle gate and the
timer into one run directory that `kibench digest --verify` accepts and
`kibench compare` ranks in one cohort; each way a Python implementation
can fail is recorded for it alone, and what can be refused before work is
refused (exit 2). A numpy implementation of jsd runs on jsd workloads the
same way; one of another operation is skipped with the reason; the shipped
jsd lanes say what they need where torch is missing. The package declares
kibench's licence and the shipped lanes those of the projects they time;
a user's lane that declares none keeps the export's note. A lane's
revision changes when a module it imports is edited (tree digest, git
commit and a dirty label), a numpy lane's host memory is measured, the
README's Python examples run as written, and `run --help` explains the
Python lanes.

    test_package.py SOURCE_DIR BUILD_DIR"""

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE, BUILD = (os.path.abspath(a) for a in sys.argv[1:3])
CAPI = os.path.join(BUILD, "libkibench_capi.so")
KIBENCH = os.path.join(BUILD, "kibench")
SMALL = os.path.join(SOURCE, "workloads", "small", "small-v1000-h64-t32.json")
EXAMPLE = os.path.join(SOURCE, "examples", "python", "numpy_jsd.py")
BAD = os.path.join(SOURCE, "test", "python", "bad_lanes.py")
BAD_OPERATIONS = os.path.join(SOURCE, "test", "python", "bad_operations.py")
JSD_EXAMPLE = os.path.join(SOURCE, "examples", "python", "numpy_log_prob_jsd.py")
JSD_SMALL = os.path.join(SOURCE, "workloads", "jsd", "small", "jsd-small-t32-v1000.json")
JSD_IGNORED = os.path.join(SOURCE, "workloads", "jsd", "small", "jsd-small-t32-v1000-ignore25.json")
JSD_BETA0 = os.path.join(SOURCE, "workloads", "jsd", "small", "jsd-small-t32-v1000-beta0-forward-kl.json")
JSD_OPERATION = "sha256:eccbf4150e60ad41ce52a4bd06fa582b8b4d5ed394fcd096f069b08eadf420e6"
QUICK = ["--min-samples", "5", "--max-samples", "10", "--min-time", "0", "--warmup", "1"]


# A lane in a folder of its own that imports the module beside it (the
# example numpy implementation, copied there) and keeps a workspace of
# known size.
WRAPPED_LANE = """import numpy

import kibench
import neighbour


@kibench.implementation(device="cpu", tensors="numpy", version="1.0.0")
def wrapped_jsd(inputs):
    held = numpy.ones(2_000_000, dtype=numpy.float32)  # 8 MB kept from prepare to release
    run = neighbour.numpy_jsd(inputs)

    def timed(pass_):
        held[0] = 1.0
        return run(pass_)

    return timed
"""
HELD_BYTES = 8_000_000
# README commands that cannot run on a CPU machine, with why.
README_NEEDS_GPU = {"python -m kibench reproduce test/data/seed/seed-record.json":
                    "the seed's implementation is torch-eager on CUDA"}


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)


class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kibench-package-")
        venv = os.path.join(cls.tmp.name, "venv")
        # numpy comes from the system (python3-numpy); the package from the tree, offline.
        made = run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv])
        assert made.returncode == 0, made.stderr
        installed = run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--no-index",
                         "--disable-pip-version-check", "-q", SOURCE])
        assert installed.returncode == 0, installed.stdout + installed.stderr
        cls.python = os.path.join(venv, "bin", "python")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def kibench_py(self, *args, env=None):
        # Run from a folder outside the tree: the installed package is what runs.
        return run([self.python, "-m", "kibench", *args], cwd=self.tmp.name, env=env)

    def run_dir(self, out):
        dirs = os.listdir(out)
        self.assertEqual(len(dirs), 1, dirs)
        return os.path.join(out, dirs[0])

    def test_installed_package_is_the_copy_in_the_venv(self):
        where = run([self.python, "-c", "import kibench, kibench._source as s; print(kibench.__file__); "
                                        "print(s.SOURCE_TREE)"], cwd=self.tmp.name)
        file, tree = where.stdout.split()
        self.assertTrue(file.startswith(self.tmp.name), file)
        self.assertEqual(os.path.realpath(tree), os.path.realpath(SOURCE))

    def test_python_lane_beside_a_builtin_in_one_run(self):
        out = os.path.join(self.tmp.name, "runs-good")
        result = self.kibench_py("run", SMALL, "--impl", f"cpu-reference,py:{EXAMPLE}:numpy_jsd", "--out", out,
                                 "--capi", CAPI, *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)
        directory = self.run_dir(out)
        with open(os.path.join(directory, "run.numpy-jsd.json")) as f:
            manifest = json.load(f)
        self.assertEqual(manifest["spec"]["status"], "passed")
        self.assertIn("timing", manifest["spec"])
        with open(os.path.join(directory, "samples.numpy-jsd.json")) as f:
            self.assertGreaterEqual(len(json.load(f)["samples"]), 5)
        with open(os.path.join(directory, "implementation.numpy-jsd.json")) as f:
            revision = json.load(f)
        self.assertEqual(revision["metadata"]["name"], "example-numpy-jsd")
        self.assertEqual(revision["spec"]["callable"]["language"], "python")
        self.assertEqual(revision["spec"]["projectRevision"]["version"], "1.0.0")
        self.assertEqual(revision["spec"]["source"]["fileName"], "numpy_jsd.py")
        self.assertIn("numpy", revision["spec"]["buildVariants"][0]["requirements"])
        verify = run([KIBENCH, "digest", "--verify", directory])
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)
        compare = run([KIBENCH, "compare", directory, "--baseline", "cpu-reference"])
        self.assertEqual(compare.returncode, 0, compare.stderr)
        self.assertIn("2 runs in 1 cohort", compare.stdout)
        self.assertIn("paired", compare.stdout)
        # The built-in declares kibench's licence; the example declares none, and keeps the note.
        bundle = os.path.join(self.tmp.name, "bundle-good.yaml")
        exported = run([KIBENCH, "export", directory, "--format", "kernelindex-submission", "--out", bundle])
        self.assertEqual(exported.returncode, 0, exported.stderr)
        notes = [line for line in exported.stderr.splitlines() if "licence" in line]
        self.assertEqual(len(notes), 1, exported.stderr)
        self.assertIn("implementation example-numpy-jsd (sha256:", notes[0])
        with open(bundle) as f:
            header = f.read()
        self.assertIn("#   kibench-cpu-reference: Apache-2.0\n", header)
        self.assertIn("#   example-numpy-jsd: none declared", header)

    def test_the_package_and_the_shipped_lanes_declare_their_licences(self):
        # kibench's own metadata, and LICENSE and NOTICE in the installed .dist-info; each shipped lane the
        # licence of the project it times (PyTorch BSD-3-Clause, Liger-Kernel BSD-2-Clause).
        script = ("import json, os, importlib.metadata as m, kibench.lanes as lanes\n"
                  "d = m.distribution('kibench')\n"
                  "files = sorted(os.path.basename(str(f)) for f in d.files if '.dist-info/' in str(f))\n"
                  "declared = {n: getattr(lanes, a).__kibench__ for n, a in lanes.SHIPPED.items()}\n"
                  "print(json.dumps({'license': d.metadata['License'], 'files': files,\n"
                  "                  'lanes': {n: [f['name'], f['licence']] for n, f in declared.items()}}))\n")
        result = run([self.python, "-c", script], cwd=self.tmp.name)
        self.assertEqual(result.returncode, 0, result.stderr)
        facts = json.loads(result.stdout)
        self.assertEqual(facts["license"], "Apache-2.0")
        self.assertIn("LICENSE", facts["files"])
        self.assertIn("NOTICE", facts["files"])
        self.assertEqual(facts["lanes"], {
            "torch-eager": ["torch-eager", "BSD-3-Clause"],
            "torch-compile": ["torch-compile", "BSD-3-Clause"],
            "torch-eager-jsd": ["torch-eager-jsd", "BSD-3-Clause"],
            "torch-eager-jsd-script": ["torch-eager-jsd-script", "BSD-3-Clause"],
            "torch-eager-fused-linear-jsd": ["torch-eager-fused-linear-jsd", "BSD-3-Clause"],
            "liger": ["liger", "BSD-2-Clause"],
            "liger-jsd": ["liger-jsd", "BSD-2-Clause"],
            "liger-jsd-script": ["liger-jsd-script", "BSD-2-Clause"],
            "liger-fused-linear-jsd": ["liger-fused-linear-jsd", "BSD-2-Clause"]})

    def test_capi_from_the_environment_and_its_absence(self):
        env = dict(os.environ, KIBENCH_CAPI=CAPI)
        listed = self.kibench_py("list", env=env)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertIn("torch-eager", listed.stdout)
        env["KIBENCH_CAPI"] = os.path.join(self.tmp.name, "nowhere.so")
        missing = self.kibench_py("list", env=env)
        self.assertEqual(missing.returncode, 2)
        self.assertIn("libkibench_capi.so not found; tried " + env["KIBENCH_CAPI"], missing.stderr)

    def test_each_failing_lane_is_recorded_and_the_others_measured(self):
        out = os.path.join(self.tmp.name, "runs-bad")
        lanes = ["raises", "raises_in_prepare", "wrong_shape", "wrong_dtype", "nan", "never_finishes"]
        impl = ",".join(["cpu-reference"] + [f"py:{BAD}:{name}" for name in lanes] + [f"py:{EXAMPLE}:numpy_jsd"])
        result = self.kibench_py("run", SMALL, "--impl", impl, "--out", out, "--capi", CAPI, "--timeout", "2",
                                 *QUICK)
        self.assertEqual(result.returncode, 1, result.stderr)
        directory = self.run_dir(out)
        expected = {
            "raises": ("runtime_error", "raises: run: ValueError: deliberate failure"),
            "raises-in-prepare": ("runtime_error", "raises-in-prepare: prepare: RuntimeError: no state"),
            "wrong-shape": ("incorrect_shape", "grad_student_weight has shape [1000, 31], the workload's is"),
            "wrong-dtype": ("incorrect_dtype", "grad_student_input is float16; kibench compares float32 or float64"),
            "never-finishes": ("timeout", "never-finishes: run: did not finish within 2 s (--timeout)"),
        }
        for lane, (status, reason) in expected.items():
            with open(os.path.join(directory, f"run.{lane}.json")) as f:
                manifest = json.load(f)
            self.assertEqual(manifest["spec"]["status"], status, lane)
            self.assertIn(reason, manifest["metadata"]["description"])
            self.assertNotIn("timing", manifest["spec"])
            self.assertIn(f"{lane} failed ({status})", result.stderr)
        with open(os.path.join(directory, "run.nan.json")) as f:
            self.assertEqual(json.load(f)["spec"]["status"], "incorrect_numerical")
        for lane in ("cpu-reference", "numpy-jsd"):
            with open(os.path.join(directory, f"run.{lane}.json")) as f:
                self.assertEqual(json.load(f)["spec"]["status"], "passed", lane)
        verify = run([KIBENCH, "digest", "--verify", directory])
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)

    def test_backward_is_refused_with_a_reason_unless_declared(self):
        out = os.path.join(self.tmp.name, "runs-backward")
        result = self.kibench_py("run", SMALL, "--impl", f"cpu-reference,py:{EXAMPLE}:numpy_jsd", "--pass",
                                 "backward", "--out", out, "--capi", CAPI, *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("numpy-jsd skipped: cannot time the backward pass (it declares passes: full, forward)",
                      result.stderr)

    def test_refused_before_any_work(self):
        out = os.path.join(self.tmp.name, "runs-refused")
        cases = {
            "py:no_such_module_here:fn": "cannot import no_such_module_here: ModuleNotFoundError",
            f"py:{BAD}:nope": "has no attribute 'nope'",
            f"py:{BAD}:not_callable": "not_callable is a int, not callable",
            "py:nocolon": "expected py:MODULE:CALLABLE",
        }
        for impl, reason in cases.items():
            result = self.kibench_py("run", SMALL, "--impl", f"cpu-reference,{impl}", "--out", out, "--capi", CAPI)
            self.assertEqual(result.returncode, 2, impl)
            self.assertIn(reason, result.stderr)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
            self.assertFalse(os.path.exists(out))

    def test_builtins_and_files_that_are_not_python_are_refused_in_one_line(self):
        out = os.path.join(self.tmp.name, "runs-not-python")
        cases = {
            "py:builtins:print": "print is a built-in or compiled builtin_function_or_method, not a Python",
            "py:math:sqrt": "sqrt is a built-in or compiled",
            "py:../../etc/passwd:fn": "../../etc/passwd is not a .py file",
        }
        for impl, reason in cases.items():
            result = self.kibench_py("run", SMALL, "--impl", f"cpu-reference,{impl}", "--out", out, "--capi", CAPI)
            self.assertEqual(result.returncode, 2, impl + result.stderr)
            self.assertIn(reason, result.stderr)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
            self.assertNotIn("Traceback", result.stderr)
            self.assertFalse(os.path.exists(out))

    def test_a_loss_given_as_text_is_an_incorrect_dtype(self):
        out = os.path.join(self.tmp.name, "runs-text-loss")
        result = self.kibench_py("run", SMALL, "--impl", f"cpu-reference,py:{BAD}:loss_as_text", "--out", out,
                                 "--capi", CAPI, *QUICK)
        self.assertEqual(result.returncode, 1, result.stderr)
        with open(os.path.join(self.run_dir(out), "run.loss-as-text.json")) as f:
            manifest = json.load(f)
        self.assertEqual(manifest["spec"]["status"], "incorrect_dtype")
        self.assertIn("loss is a str; a run returns a number", manifest["metadata"]["description"])

    def test_an_undeclared_callable_that_cannot_run_here_is_refused_with_the_fix(self):
        probe = run([self.python, "-c", "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"])
        if probe.returncode == 0:
            self.skipTest("torch sees a CUDA device: the undeclared (CUDA) callable can run here")
        out = os.path.join(self.tmp.name, "runs-undeclared")
        result = self.kibench_py("run", SMALL, "--impl", f"cpu-reference,py:{BAD}:undeclared", "--out", out,
                                 "--capi", CAPI, *QUICK)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("declared device=cuda (the default), and that cannot run here", result.stderr)
        self.assertIn('add @kibench.implementation(device="cpu", tensors="numpy")', result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertFalse(os.path.exists(out))

    def test_a_jsd_lane_runs_on_jsd_workloads_through_the_gate_and_the_timer(self):
        out = os.path.join(self.tmp.name, "runs-jsd")
        result = self.kibench_py("run", JSD_SMALL, JSD_IGNORED, JSD_BETA0, "--impl",
                                 f"cpu-reference,py:{JSD_EXAMPLE}:numpy_log_prob_jsd", "--out", out, "--capi", CAPI,
                                 *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)
        directories = [os.path.join(out, d) for d in sorted(os.listdir(out))]
        self.assertEqual(len(directories), 3, directories)
        for directory in directories:
            with open(os.path.join(directory, "run.numpy-log-prob-jsd.json")) as f:
                manifest = json.load(f)
            self.assertEqual(manifest["spec"]["status"], "passed", directory)
            self.assertIn("timing", manifest["spec"])
            with open(os.path.join(directory, "samples.numpy-log-prob-jsd.json")) as f:
                self.assertGreaterEqual(len(json.load(f)["samples"]), 5)
            with open(os.path.join(directory, "implementation.numpy-log-prob-jsd.json")) as f:
                revision = json.load(f)
            self.assertEqual(revision["metadata"]["name"], "example-numpy-log-prob-jsd")
            self.assertIn(JSD_OPERATION, json.dumps(revision["spec"]["operation"]))
            verify = run([KIBENCH, "digest", "--verify", directory])
            self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)
        compare = run([KIBENCH, "compare", directories[0], "--baseline", "cpu-reference"])
        self.assertEqual(compare.returncode, 0, compare.stderr)
        self.assertIn("2 runs in 1 cohort", compare.stdout)

    def test_a_wrong_jsd_gradient_fails_the_gate(self):
        out = os.path.join(self.tmp.name, "runs-jsd-wrong")
        result = self.kibench_py("run", JSD_SMALL, "--impl", f"cpu-reference,py:{BAD}:jsd_wrong_gradient",
                                 "--out", out, "--capi", CAPI, *QUICK)
        self.assertEqual(result.returncode, 1, result.stderr)
        with open(os.path.join(self.run_dir(out), "run.jsd-wrong-gradient.json")) as f:
            self.assertEqual(json.load(f)["spec"]["status"], "incorrect_numerical")

    def test_a_lane_of_another_operation_is_skipped_with_the_reason(self):
        out = os.path.join(self.tmp.name, "runs-other-operation")
        result = self.kibench_py("run", SMALL, JSD_SMALL, "--impl",
                                 f"cpu-reference,py:{EXAMPLE}:numpy_jsd,py:{JSD_EXAMPLE}:numpy_log_prob_jsd",
                                 "--out", out, "--capi", CAPI, *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("numpy-log-prob-jsd skipped: numpy-log-prob-jsd does not compute distill_jsd_loss",
                      result.stderr)
        self.assertIn("numpy-jsd skipped: numpy-jsd does not compute jsd", result.stderr)
        passed = []
        for directory in os.listdir(out):
            for lane in ("numpy-jsd", "numpy-log-prob-jsd"):
                path = os.path.join(out, directory, f"run.{lane}.json")
                if os.path.exists(path):
                    with open(path) as f:
                        passed.append((lane, json.load(f)["spec"]["status"]))
        self.assertEqual(sorted(passed), [("numpy-jsd", "passed"), ("numpy-log-prob-jsd", "passed")])

    def test_an_unknown_operation_is_refused_before_any_work(self):
        out = os.path.join(self.tmp.name, "runs-bad-operation")
        result = self.kibench_py("run", JSD_SMALL, "--impl", f"cpu-reference,py:{BAD_OPERATIONS}:unknown_operation",
                                 "--out", out, "--capi", CAPI)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("unknown_operation: operations ['jsd', 'softmax']: each one of distill_jsd_loss, jsd, "
                      "fused_linear_jsd, at least one", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertFalse(os.path.exists(out))

    def test_declarations_are_checked_where_they_are_made(self):
        check = ("import kibench\n"
                 "for operations in [(), ('jsd', 'jsd'), ('softmax',)]:\n"
                 "    try:\n"
                 "        kibench.implementation(lambda inputs: None, operations=operations)\n"
                 "    except ValueError as error:\n"
                 "        print(error)\n")
        result = run([self.python, "-c", check], cwd=self.tmp.name)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 3, result.stdout)
        self.assertIn("operations []: each one of", lines[0])
        self.assertIn("operations ['jsd', 'jsd']: an operation listed twice", lines[1])
        self.assertIn("operations ['softmax']: each one of", lines[2])

    @unittest.skipIf(importlib.util.find_spec("torch") is not None, "torch is installed here")
    def test_a_shipped_lane_named_where_its_library_is_missing_is_refused_with_what_to_install(self):
        if importlib.util.find_spec("torch") is not None:
            self.skipTest("torch is installed here: torch-eager-jsd can run")
        out = os.path.join(self.tmp.name, "runs-missing")
        result = self.kibench_py("run", JSD_SMALL, "--impl", "torch-eager-jsd", "--out", out, "--capi", CAPI)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stderr.strip(),
                         "kibench: --impl torch-eager-jsd: cannot run here: it needs torch (pip install torch)")
        self.assertFalse(os.path.exists(out))

    def test_the_shipped_jsd_lanes_say_what_they_need(self):
        env = dict(os.environ, KIBENCH_CAPI=CAPI)
        listed = self.kibench_py("list", env=env)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        needs = {"torch-eager-jsd": "needs torch (pip install torch)",
                 "torch-eager-fused-linear-jsd": "needs torch (pip install torch)",
                 "liger-jsd": "needs torch, triton, liger-kernel (pip install torch triton liger-kernel)",
                 "torch-eager-jsd-script": "needs torch (pip install torch)",
                 "liger-jsd-script": "needs torch, triton, liger-kernel (pip install torch triton liger-kernel)",
                 "liger-fused-linear-jsd": "needs torch, triton, liger-kernel (pip install torch triton liger-kernel)"}
        lines = listed.stdout.splitlines()
        for lane, reason in needs.items():
            line = [l for l in lines if l.split() and l.split()[0] == lane]
            self.assertEqual(len(line), 1, listed.stdout)
            self.assertIn(f"[skipped here: {reason}]", line[0])

    def lane_folder(self, name):
        folder = os.path.join(self.tmp.name, name)
        os.makedirs(folder)
        shutil.copy(EXAMPLE, os.path.join(folder, "neighbour.py"))
        with open(os.path.join(folder, "kernel.py"), "w") as f:
            f.write(WRAPPED_LANE)
        return folder

    def run_lane(self, folder, out):
        result = self.kibench_py("run", SMALL, "--impl", f"py:{folder}/kernel.py:wrapped_jsd", "--out", out,
                                 "--capi", CAPI, *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)
        directory = self.run_dir(out)
        manifests = {}
        for kind in ("implementation", "run"):
            with open(os.path.join(directory, f"{kind}.wrapped-jsd.json")) as f:
                manifests[kind] = json.load(f)
        return manifests

    def test_an_edit_to_an_imported_module_makes_a_new_revision(self):
        folder = self.lane_folder("lane-edited")
        git = shutil.which("git")
        if git:
            for command in (["init", "-q"], ["add", "."],
                            ["-c", "user.name=kibench test", "-c", "user.email=test@kibench.invalid", "commit",
                             "-q", "-m", "a lane"]):
                made = run([git, "-C", folder, *command])
                self.assertEqual(made.returncode, 0, made.stderr)
            head = run([git, "-C", folder, "rev-parse", "HEAD"]).stdout.strip()
        before = self.run_lane(folder, os.path.join(self.tmp.name, "runs-before-edit"))
        revision = before["implementation"]
        self.assertEqual(before["run"]["spec"]["status"], "passed")
        self.assertRegex(revision["spec"]["projectRevision"]["treeDigest"], r"^sha256:[0-9a-f]{64}$")
        self.assertEqual(revision["metadata"]["labels"]["local_imports"], "neighbour.py")
        self.assertEqual(revision["spec"]["source"]["fileName"], "kernel.py")
        self.assertEqual(revision["spec"]["buildVariants"][0]["install"]["package"], "kernel")
        if git:
            self.assertEqual(revision["spec"]["projectRevision"]["commit"], head)
            self.assertEqual(revision["spec"]["callable"]["path"], "kernel.py")
            self.assertNotIn("source_tree", revision["metadata"]["labels"])

        with open(os.path.join(folder, "neighbour.py"), "a") as f:
            f.write("\n# an edit to the imported module only\n")
        after = self.run_lane(folder, os.path.join(self.tmp.name, "runs-after-edit"))
        edited = after["implementation"]
        self.assertEqual(edited["spec"]["source"], revision["spec"]["source"])  # kernel.py itself is unchanged
        self.assertNotEqual(edited["spec"]["projectRevision"]["treeDigest"],
                            revision["spec"]["projectRevision"]["treeDigest"])
        self.assertNotEqual(after["run"]["spec"]["implementationDigest"],
                            before["run"]["spec"]["implementationDigest"])
        if git:
            self.assertEqual(edited["spec"]["projectRevision"]["commit"], head)
            self.assertEqual(edited["metadata"]["labels"]["source_tree"], "differs from its commit")

    def test_a_numpy_lane_reports_the_host_memory_it_allocates(self):
        measured = self.run_lane(self.lane_folder("lane-memory"), os.path.join(self.tmp.name, "runs-memory"))
        memory = {m["metric"]: m["value"] for m in measured["run"]["spec"]["measurements"]
                  if m["metric"] in ("peak_memory", "workspace_memory")}
        self.assertGreaterEqual(memory["workspace_memory"], HELD_BYTES, memory)
        self.assertGreater(memory["peak_memory"], memory["workspace_memory"], memory)

    def readme_commands(self):
        """Every `pip install` and `python -m kibench` command of the
        README's code blocks, continuation lines joined, comments cut."""
        with open(os.path.join(SOURCE, "README.md")) as f:
            lines = f.read().splitlines()
        commands, k = [], 0
        while k < len(lines):
            line = lines[k].strip()
            k += 1
            if not lines[k - 1].startswith("    ") or not re.match(r"(python -m kibench|pip install) ", line):
                continue
            while line.endswith("\\") and k < len(lines):
                line = line[:-1].rstrip() + " " + lines[k].strip()
                k += 1
            commands.append(line.split("  #")[0].strip())
        return commands

    def test_the_readme_python_examples_run_as_written(self):
        commands = self.readme_commands()
        self.assertIn("pip install .", commands)  # what setUpClass ran, offline
        ran = 0
        # The README's relative paths, from a folder that is not the source tree.
        folder = os.path.join(self.tmp.name, "readme")
        os.makedirs(folder)
        for name in ("workloads", "examples", "test"):
            os.symlink(os.path.join(SOURCE, name), os.path.join(folder, name))
        for command in commands:
            if command.startswith("pip install") or command in README_NEEDS_GPU:
                continue
            words = shlex.split(command)
            self.assertEqual(words[:3], ["python", "-m", "kibench"], command)
            result = run([self.python, *words[1:]], cwd=folder, env=dict(os.environ, KIBENCH_CAPI=CAPI))
            self.assertEqual(result.returncode, 0, f"{command}\n{result.stdout}\n{result.stderr}")
            ran += 1
        self.assertGreaterEqual(ran, 1, commands)
        for command in README_NEEDS_GPU:
            self.assertIn(command, commands, "a README command this test skips is no longer in the README")
            for word in shlex.split(command):
                if "/" in word:
                    self.assertTrue(os.path.exists(os.path.join(SOURCE, word)), word)

    def test_run_help_explains_the_python_lanes(self):
        result = self.kibench_py("run", "--help", "--capi", CAPI)
        self.assertEqual(result.returncode, 0, result.stderr)
        text = result.stdout
        # kibench's own flags first, from the C library, then the Python lanes'.
        self.assertIn("--impl TEXT", text)
        self.assertLess(text.index("--impl TEXT"), text.index("Python implementations (python -m kibench run)"))
        for phrase in ("py:MODULE:CALLABLE", "py:path/to/file.py:CALLABLE", "--capi PATH", "$KIBENCH_CAPI",
                       "needs numpy in this Python", "docs/extending.md"):
            self.assertIn(phrase, text)
        lines = text.splitlines()
        for lane in ("torch-eager", "torch-compile", "liger", "torch-eager-jsd", "liger-jsd",
                     "torch-eager-jsd-script", "liger-jsd-script", "torch-eager-fused-linear-jsd",
                     "liger-fused-linear-jsd"):
            self.assertTrue(any(l.split()[:1] == [lane] for l in lines), lane)
        self.assertNotIn("Traceback", result.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
