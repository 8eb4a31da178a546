#!/usr/bin/env bash
# One GPU session on a machine with the packaged binaries (see
# package_for_device.sh): the [gpu] tests, then kibench run on the seed
# workload (full pass twice, for the run-to-run spread, and forward once),
# the floors and fused with a 5 s sustained phase (power-limited steady
# state), digest verification and comparisons. Logs and run directories go
# to $OUT (or ./gpu-session).
#   scripts/gpu_session.sh BIN_DIR
set -uo pipefail
bin="$(cd "${1:?usage: gpu_session.sh BIN_DIR}" && pwd)"
out="${OUT:-$PWD/gpu-session}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
runs="$PWD/runs-gpu"
rm -rf "$runs"

step() {
  echo "== $*" | tee -a "$out/session.log"
  "$@" 2>&1 | tee -a "$out/session.log"
  local status=${PIPESTATUS[0]}
  echo "== exit $status" | tee -a "$out/session.log"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,\
enforced.power.limit,power.default_limit,power.max_limit --format=csv | tee "$out/session.log"
step "$bin/kibench_tests" "[gpu]"
step "$bin/kibench" env
step "$bin/kibench" run --out "$runs/full-a"
step "$bin/kibench" run --out "$runs/full-b"
step "$bin/kibench" run --pass forward --out "$runs/forward"
step "$bin/kibench" run --impl fused,cublas-floor,wgmma-floor --sustained 5 --out "$runs/sustained"
step "$bin/kibench" digest --verify "$runs"/*/*/
step "$bin/kibench" compare "$runs"/full-a/*/ "$runs"/full-b/*/
tar -C "$runs" -czf "$out/runs.tar.gz" .
