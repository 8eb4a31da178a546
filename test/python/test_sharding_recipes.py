"""The sharding recipes of examples/ci (docs/guide.md, "Sharding a run"):
the Kubernetes Indexed Job parses, is Indexed, and passes kibench --shards
equal to its completions; the Actions workflow's matrix has one entry per
shard, 0 to SHARDS - 1, and a merge job that needs them; the Slurm script is
an array whose tasks all run the same `kibench run`.
    python3 test/python/test_sharding_recipes.py SOURCE_DIR"""

import os
import re
import sys
import unittest

import yaml

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
CI = os.path.join(ROOT, "examples", "ci")


class ShardingRecipes(unittest.TestCase):
    def test_kubernetes_indexed_job(self):
        with open(os.path.join(CI, "kibench-indexed-job.yaml"), encoding="utf-8") as f:
            job = yaml.safe_load(f)
        self.assertEqual((job["apiVersion"], job["kind"]), ("batch/v1", "Job"))
        spec = job["spec"]
        self.assertEqual(spec["completionMode"], "Indexed")
        command = spec["template"]["spec"]["containers"][0]["command"]
        self.assertEqual(command[:2], ["kibench", "run"])
        self.assertEqual(int(command[command.index("--shards") + 1]), spec["completions"])
        self.assertNotIn("--shard", command)

    def test_actions_matrix(self):
        with open(os.path.join(CI, "kibench-sharded.yml"), encoding="utf-8") as f:
            workflow = yaml.safe_load(f)
        shards = int(workflow["env"]["SHARDS"])
        jobs = workflow["jobs"]
        self.assertEqual(jobs["shard"]["strategy"]["matrix"]["shard"], list(range(shards)))
        self.assertEqual(jobs["merge"]["needs"], "shard")
        run_step = [s for s in jobs["shard"]["steps"] if s.get("name") == "Run this shard"][0]
        self.assertIn('--shard "${{ matrix.shard }}/$SHARDS"', run_step["run"])
        merge_step = [s for s in jobs["merge"]["steps"] if s.get("name") == "Merge, verify and report"][0]
        self.assertIn("kibench merge", merge_step["run"])

    def test_slurm_array(self):
        with open(os.path.join(CI, "kibench-slurm-array.sh"), encoding="utf-8") as f:
            script = f.read()
        self.assertRegex(script, r"(?m)^#SBATCH --array=0-\d+$")
        runs = re.findall(r'"\$kibench" run ', script)
        self.assertEqual(len(runs), 1)
        self.assertNotIn("--shard ", script.split('"$kibench" run ')[1].split("\n\n")[0])
        self.assertIn("merge", script)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
