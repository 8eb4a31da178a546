#!/usr/bin/env bash
# On a GPU machine: everything of "benchmark your own kernel" that needs the
# device, with every step's output and exit status in LOG_DIR/byok.log:
# the [gpu] tests, the example plugin's CUDA lane beside fused (a mid-size
# workload, then the seed), the Python package installed offline and its
# lanes (PyTorch eager, torch.compile, Liger-Kernel) beside fused and the
# cuBLAS floor on the seed workload in one run, digest verification and
# compare of every run directory.
#   scripts/byok_device_check.sh BIN_DIR LOG_DIR
# BIN_DIR holds kibench, kibench_tests, libkibench_capi.so and
# libkibench_example_plugin.so (a build folder, or what
# package_for_device.sh fills). Run from the repository root.
set -uo pipefail
bin="$(cd "${1:?usage: byok_device_check.sh BIN_DIR LOG_DIR}" && pwd)"
log_dir="${2:?usage: byok_device_check.sh BIN_DIR LOG_DIR}"
mkdir -p "$log_dir"
log_dir="$(cd "$log_dir" && pwd)"
log="$log_dir/byok.log"
runs="$log_dir/runs"
export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KIBENCH_CAPI="$bin/libkibench_capi.so"
plugin="$bin/libkibench_example_plugin.so"
[ -e "$plugin" ] || plugin="$bin/examples/plugin/libkibench_example_plugin.so"
seed=workloads/seed-distill-jsd-h4096-t8192-v128256.json
: >"$log"

step() {
  echo "== $*" | tee -a "$log"
  "$@" 2>&1 | tee -a "$log"
  local status=${PIPESTATUS[0]}
  echo "== exit $status" | tee -a "$log"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,enforced.power.limit --format=csv | tee -a "$log"
tests="$bin/kibench_tests"
[ -e "$tests" ] || tests="$bin/test/kibench_tests"
step "$tests" "[gpu]"
step "$bin/kibench" run workloads/distill-jsd-h1024-t1000-v50257.json --plugin "$plugin" \
  --impl fused,example-cuda-simt --out "$runs/plugin-mid"
step "$bin/kibench" run "$seed" --plugin "$plugin" --impl fused,cublas-floor,example-cuda-simt \
  --min-samples 5 --sustained 0 --out "$runs/plugin-seed"
venv="$log_dir/venv"
step python3 -m venv --system-site-packages "$venv"
step "$venv/bin/pip" install --no-index .
step "$venv/bin/python" -m kibench list
step "$venv/bin/python" -m kibench run "$seed" --impl fused,cublas-floor,torch-eager,torch-compile,liger \
  --out "$runs/python-seed"
step "$bin/kibench" digest --verify "$runs"/*/*/
for dir in "$runs"/*/*/; do
  step "$bin/kibench" compare "$dir" --baseline fused
done
step "$bin/kibench" compare "$runs"/python-seed/*/ --baseline torch-eager
step "$bin/kibench" compare "$runs"/python-seed/*/ --baseline liger
tar -C "$runs" -czf "$log_dir/runs.tar.gz" .
