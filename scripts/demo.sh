#!/usr/bin/env bash
# Set-up, build, and `kibench run` on the default workload (README command a).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$root"
"${KIBENCH_BUILD_DIR:-$root/build}/kibench" run "$@"
