#!/usr/bin/env bash
# One session on a machine with several GPUs and the packaged binaries
# (package_for_device.sh): the vocabulary-parallel [gpu] tests on every GPU
# count present, then the seed workload with fused (GPU 0),
# fused-vocab-parallel and its compute-only twin over 2, 4 and 8 GPUs (as
# many as there are), one kibench run per count so every ratio is a
# same-run ratio, digest verification, the strong-scaling table
# (scaling_table.py), and the runs under $OUT (or ./multi-gpu-session).
#   scripts/multi_gpu_session.sh BIN_DIR [SECONDS_PER_IMPLEMENTATION]
set -uo pipefail
bin="$(cd "${1:?usage: multi_gpu_session.sh BIN_DIR [SECONDS]}" && pwd)"
timeout_s="${2:-20}"
out="${OUT:-$PWD/multi-gpu-session}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NCCL_NVLS_ENABLE=0
# The NCCL that PyTorch installed, wherever its Python keeps it.
if [[ -z "${KIBENCH_NCCL_LIBRARY:-}" ]]; then
  nccl="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)"
  [[ -f "$nccl" ]] && export KIBENCH_NCCL_LIBRARY="$nccl"
fi
runs="$PWD/runs-multi-gpu"
rm -rf "$runs"
seed="workloads/seed-distill-jsd-h4096-t8192-v128256.json"

step() {
  echo "== $*" | tee -a "$out/session.log"
  "$@" 2>&1 | tee -a "$out/session.log"
  local status=${PIPESTATUS[0]}
  echo "== exit $status" | tee -a "$out/session.log"
}

gpus="$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)"
nvidia-smi topo -m | tee "$out/topology.txt"
step "$bin/kibench_tests" "[gpu][vocab_parallel]"
for n in 2 4 8; do
  (( n <= gpus )) || continue
  step "$bin/kibench" run "$seed" --gpus "$n" --impl fused,fused-vocab-parallel,fused-vocab-parallel-compute-only \
    --timeout "$timeout_s" --out "$runs/gpus$n"
done
step "$bin/kibench" digest --verify "$runs"/*/*/
step python3 "$(dirname "${BASH_SOURCE[0]}")/scaling_table.py" "$runs"/*/*/
tar -C "$runs" -czf "$out/runs.tar.gz" .
