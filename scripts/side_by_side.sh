#!/usr/bin/env bash
# The side-by-side proof in one invocation on a GPU machine: kibench run on
# the workload (reference, fused, cublas-floor), then scripts/side_by_side.py
# times kibench's fused, PyTorch eager and Liger-Kernel in one process on
# kibench's inputs, checks all three against the fp64 oracle, and its
# samples are imported and compared beside the kibench run.
#   scripts/side_by_side.sh BIN_DIR [WORKLOAD] [OUT]
# BIN_DIR holds kibench and libkibench_capi.so (a build folder, or the
# folder package_for_device.sh fills). Needs PyTorch and liger-kernel.
# KIBENCH_RUN_IMPLS changes step 1's implementations (default
# reference,fused,cublas-floor).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${1:?usage: side_by_side.sh BIN_DIR [WORKLOAD] [OUT]}" && pwd)"
workload="${2:-$root/workloads/seed-distill-jsd-h4096-t8192-v128256.json}"
out="${3:-$PWD/runs/side-by-side}"
export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$out"

"$bin/kibench" run "$workload" --impl "${KIBENCH_RUN_IMPLS:-reference,fused,cublas-floor}" --out "$out/kibench"
run_dir="$(find "$out/kibench" -mindepth 1 -maxdepth 1 -type d | sort | tail -n 1)"
python3 "$root/scripts/side_by_side.py" "$workload" --like "$run_dir" --capi "$bin/libkibench_capi.so" \
  --out "$out/side-by-side.json"
"$bin/kibench" import external "$out/side-by-side.json" --like "$run_dir" --out "$out/imported"
imported="$(find "$out/imported" -mindepth 1 -maxdepth 1 -type d | sort | tail -n 1)"
"$bin/kibench" digest --verify "$imported"
"$bin/kibench" compare "$run_dir" "$imported" --baseline torch-eager | tee "$out/compare.txt"
"$bin/kibench" compare "$run_dir" "$imported" --baseline torch-eager --format markdown > "$out/compare.md"
