#!/usr/bin/env bash
# A Slurm job array that runs one kibench sweep as N shards, one GPU each,
# then (as a job that waits for the whole array) merges and reports them.
# Each task reads its shard from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT
# (less SLURM_ARRAY_TASK_MIN), so every task runs the same command
# (docs/guide.md, "Sharding a run").
#   sbatch examples/ci/kibench-slurm-array.sh
# ADJUST: the partition, the array size, the sweep and where kibench is.
#SBATCH --job-name=kibench-sweep
#SBATCH --array=0-7
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --time=02:00:00
#SBATCH --output=kibench-%A-%a.log
set -euo pipefail

kibench="${KIBENCH:-kibench/build/kibench}"
out="${KIBENCH_OUT:-runs/sweep-${SLURM_ARRAY_JOB_ID:-local}}"

# Every task writes into one shared folder: run directories are named by
# their start time and workload, and the run set file is the same for all.
"$kibench" run workloads/seed-distill-jsd-h4096-t8192-v128256.json \
  --axis tokens=1024:8192:pow2 --axis vocab=32000,128256 \
  --impl fused,cublas-floor --out "$out"

# The last task to start submits the merge, to run once every task has
# ended (afterany: a failed shard leaves its points missing, which merge
# lists).
if [[ "${SLURM_ARRAY_TASK_ID:-0}" == "${SLURM_ARRAY_TASK_MAX:-0}" ]]; then
  sbatch --dependency="afterany:${SLURM_ARRAY_JOB_ID}" --job-name=kibench-merge --time=00:20:00 \
    --wrap="'$kibench' merge '$out' --out '$out-merged' && '$kibench' report '$out-merged' --out '$out.html'"
fi
