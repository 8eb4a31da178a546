#!/usr/bin/env bash
# One device call for the trusted harness on a GPU (docs/protocol.md, "What
# the harness checks"), after trusted_session.sh has unpacked the builds
# into /tmp/trusted (or unpacking them itself):
#   isolation    the seed's Python lanes and the example CUDA plugin timed in
#                a worker process (--isolation process) and in kibench's
#                (in-process), same call, medians side by side;
#   untrusted    test/python/test_untrusted_lanes.py with torch lanes on the
#                GPU, in kibench's process and in worker processes;
#   plugin       the [untrusted] case: CUDA plugin lanes that break the rules;
#   calibration  the sentinels: 6 quiet runs make a history, 2 more are judged
#                against it, then one under a co-running GEMM load;
#   overhead     `kibench run SEED --impl fused,cublas-floor` with the build
#                before the checks and after, wall time and medians of each;
#   tests        the [gpu] suite, as far as the call's time allows.
# Logs go to $OUT/harness.txt, the run folders to $OUT/harness-runs.tgz.
# SEED_ISOLATIONS="process" times the seed in a worker only (where a
# cohort run in the same call gives the in-process figures), "" not at all;
# OVERHEAD_ORDER="before after" runs each build once; OVERHEAD_ARGS adds
# flags to both (--min-samples 300 --max-samples 300 --min-time 0: the
# same samples, so the wall times differ only by what the build does).
#   [STEPS="isolation untrusted plugin calibration overhead tests"] [SEED_ISOLATIONS=...]
#     dev/seed_h100/harness_session.sh ARCHIVE ARCHIVE_BEFORE
default_steps="isolation untrusted plugin calibration overhead tests"
source "$(dirname "${BASH_SOURCE[0]}")/session_setup.sh"
gpt2=workloads/distill-jsd-h1024-t1000-v50257.json
log="$out/harness.txt"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee -a "$log"
quiet='( · [0-9]+/~| · [0-9]+/[0-9]+ samples|warm-up|checking|computing|back to back)'

if want isolation; then
  for isolation in ${SEED_ISOLATIONS-process in-process}; do
    echo "== isolation $isolation: seed" | tee -a "$log"
    timeout 240 python3 -m kibench run "$seed" --impl fused,cublas-floor,torch-eager,liger --isolation "$isolation" \
      --capi "$bin/libkibench_capi.so" --out "$work/runs/isolation-seed-$isolation" 2>&1 | grep -vE "$quiet" | tee -a "$log"
  done
  for isolation in auto in-process; do
    echo "== isolation $isolation: example-cuda-simt, GPT-2 shape" | tee -a "$log"
    timeout 120 "$bin/kibench" run "$gpt2" --plugin "$bin/libkibench_example_plugin.so" \
      --impl fused,example-cuda-simt --isolation "$isolation" --out "$work/runs/isolation-simt-$isolation" 2>&1 \
      | grep -vE "$quiet" | tee -a "$log"
  done
fi

if want untrusted; then
  for isolation in auto process; do
    echo "== untrusted torch lanes, --isolation $isolation" | tee -a "$log"
    KIBENCH_WORKLOADS="$PWD/workloads" KIBENCH_UNTRUSTED_DEVICE=cuda KIBENCH_UNTRUSTED_ISOLATION=$isolation \
      timeout 300 python3 test/python/test_untrusted_lanes.py "$PWD" "$bin" 2>&1 | tail -n 16 | tee -a "$log"
  done
fi

want plugin && timeout 120 "$bin/kibench_tests" "[untrusted]" > "$out/plugin.txt" 2>&1
want plugin && tail -n 40 "$out/plugin.txt" | tee -a "$log"

if want calibration; then
  export KIBENCH_CALIBRATION_DIR=/tmp/calibration
  rm -rf "$KIBENCH_CALIBRATION_DIR"
  small=workloads/small/small-v1000-h64-t32.json
  for k in 1 2 3 4 5 6 7 8; do
    "$bin/kibench" run "$small" --impl fused --out "$work/runs/calibration-$k" --min-samples 10 --max-samples 20 \
      --min-time 0 --sustained 0 > /dev/null 2>&1
    echo "calibration run $k: exit $?" | tee -a "$log"
  done
  # A co-running load: bf16 GEMMs back to back on the same GPU.
  python3 -c "
import time, torch
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16)
end = time.time() + 40
while time.time() < end:
    for _ in range(20): a @ a
    torch.cuda.synchronize()
" &
  load=$!
  sleep 8
  "$bin/kibench" run "$small" --impl fused --out "$work/runs/calibration-loaded" --min-samples 10 --max-samples 20 \
    --min-time 0 --sustained 0 --strict-calibration > "$work/runs/calibration-loaded.txt" 2>&1
  echo "calibration under load: exit $? (1: --strict-calibration refused it)" | tee -a "$log"
  kill "$load" 2> /dev/null
  wait "$load" 2> /dev/null
  for run in "$work"/runs/calibration-*/*/run.fused.json; do
    python3 - "$run" << 'EOF' | tee -a "$log"
import json, sys
labels = json.load(open(sys.argv[1]))["metadata"]["labels"]
print(sys.argv[1].split("/runs/")[1].split("/")[0], "|", labels.get("calibration_start"), "|",
      labels.get("calibration_end"), "|", labels.get("calibration_basis"), "|", labels.get("calibration_caveat", "no caveat"))
EOF
  done
  cat "$KIBENCH_CALIBRATION_DIR"/* | tail -n 3 >> "$log"
  unset KIBENCH_CALIBRATION_DIR
fi

if want overhead; then
  for build in ${OVERHEAD_ORDER:-before after after before}; do
    start=$(date +%s%N)
    timeout 200 "$work/$build/gpu/kibench" run "$seed" --impl fused,cublas-floor --out "$work/runs/overhead-$build" \
      ${OVERHEAD_ARGS:-} 2>&1 \
      | grep -E "^(fused|cublas-floor) |written|FAILED|failed" | tee -a "$log"
    echo "overhead $build: wall $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$log"
  done
fi

tar -czf "$out/harness-runs.tgz" -C "$work" runs
want tests && timeout 150 "$bin/kibench_tests" "[gpu]" 2>&1 | tail -n 30 | tee "$out/gpu_tests.txt"
exit 0
