#!/usr/bin/env bash
# KIBENCH_CLI_ONLY (scripts/build.sh --cli): a configure of the source tree
# whose build has kibench and libkibench_capi and none of the tests, the
# sanitizer copy, dev/ or the example plugin.
#   test/install/check_cli_only.sh SOURCE_DIR
set -euo pipefail
source_dir="${1:?source dir}"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKIBENCH_CLI_ONLY=ON >/dev/null
targets="$(ninja -C "$build" -t targets all)"
for wanted in kibench libkibench_capi.so; do
  grep -q "^${wanted}: " <<<"$targets" || { echo "missing target $wanted" >&2; exit 1; }
done
for unwanted in kibench_tests kibench_tests_sanitized kibench_dev libkibench_example_plugin.so; do
  if grep -q "${unwanted}: " <<<"$targets"; then
    echo "unexpected target $unwanted in a --cli build" >&2
    exit 1
  fi
done
echo "KIBENCH_CLI_ONLY: kibench and libkibench_capi, no tests, dev/ or examples"
