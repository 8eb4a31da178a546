#!/usr/bin/env bash
# Configures and builds kibench into build/ (or $KIBENCH_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KIBENCH_BUILD_DIR:-$root/build}"
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
# KIBENCH_CUDA_ARCHITECTURES picks the GPU target (default 90a: Hopper,
# which the fused kernels' clusters and wgmma need).
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${KIBENCH_CUDA_ARCHITECTURES:-90a}" >/dev/null
cmake --build "$build" -j "$(nproc)"
