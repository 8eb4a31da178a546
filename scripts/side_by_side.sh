#!/usr/bin/env bash
# kibench's fused and the cuBLAS floor beside PyTorch eager, torch.compile
# and Liger-Kernel in one `kibench run` on a GPU machine (docs/side-by-side.md):
# the Python package's lanes run on kibench's inputs and stream, interleaved
# with the built-ins in the same rounds, then digest verification and a
# comparison with paired intervals.
#   scripts/side_by_side.sh BIN_DIR [WORKLOAD] [OUT]
# BIN_DIR holds kibench and libkibench_capi.so (a build folder, or the folder
# package_for_device.sh fills). Needs PyTorch (and liger-kernel for `liger`;
# a lane whose library is missing is skipped, saying why). KIBENCH_SBS_IMPLS
# changes the implementations.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${1:?usage: side_by_side.sh BIN_DIR [WORKLOAD] [OUT]}" && pwd)"
workload="${2:-$root/workloads/seed-distill-jsd-h4096-t8192-v128256.json}"
out="${3:-$PWD/runs/side-by-side}"
export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$out"

PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" python3 -m kibench run "$workload" \
  --impl "${KIBENCH_SBS_IMPLS:-fused,cublas-floor,torch-eager,torch-compile,liger}" \
  --capi "$bin/libkibench_capi.so" --out "$out/runs" || echo "side_by_side: kibench run exited $?" >&2
run_dir="$(find "$out/runs" -mindepth 1 -maxdepth 1 -type d | sort | tail -n 1)"
"$bin/kibench" digest --verify "$run_dir"
"$bin/kibench" compare "$run_dir" --baseline torch-eager | tee "$out/compare.txt"
"$bin/kibench" compare "$run_dir" --baseline torch-eager --format markdown > "$out/compare.md"
