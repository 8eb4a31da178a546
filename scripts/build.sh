#!/usr/bin/env bash
# Configures and builds kibench into build/ (or $KIBENCH_BUILD_DIR):
#   scripts/build.sh          everything: kibench, libkibench_capi, the tests,
#                             the sanitizer copy, dev/ and the example plugin
#   scripts/build.sh --cli    kibench and libkibench_capi only (KIBENCH_CLI_ONLY)
set -euo pipefail
cli_only=OFF
case "${1:-}" in
  "") ;;
  --cli) cli_only=ON ;;
  *)
    echo "scripts/build.sh: unknown argument ${1} (--cli builds the CLI and the C library only)" >&2
    exit 2
    ;;
esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KIBENCH_BUILD_DIR:-$root/build}"
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
# KIBENCH_CUDA_ARCHITECTURES picks the GPU target (default 90a: Hopper,
# which the fused kernels' clusters and wgmma need).
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${KIBENCH_CUDA_ARCHITECTURES:-90a}" -DKIBENCH_CLI_ONLY="$cli_only" >/dev/null
cmake --build "$build" -j "$(nproc)"
