#!/usr/bin/env bash
# Set-up, build, and every test (README command b; .ci/run calls this).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh" --test
"$root/scripts/build.sh"
build="${KIBENCH_BUILD_DIR:-$root/build}"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
