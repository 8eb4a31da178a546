#!/usr/bin/env bash
# Builds kibench's libFuzzer targets with clang++-14 (AddressSanitizer +
# UndefinedBehaviorSanitizer) and runs each for SECONDS, seeded with the
# shipped workloads, the malformed corpus and the target's own corpus in
# test/fuzz/corpus/<target>/ (inputs that once broke it, kept so that they
# are run again every time). Exits non-zero when a target crashes, trips a
# sanitizer or breaks one of its checks; the input that did it is left in
# BUILD_DIR/artifacts/.
#
#   usage: test/fuzz/run_fuzz.sh BUILD_DIR [SECONDS]      (default 20)
#   ctest: registered as fuzz_parsers (test/CMakeLists.txt)
#
# Reproduce a crash: BUILD_DIR/fuzz_workload BUILD_DIR/artifacts/crash-...
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 BUILD_DIR [SECONDS]" >&2
  exit 2
fi
build_dir=$1
seconds=${2:-20}
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "$0: SECONDS must be a positive integer, got '$seconds'" >&2
  exit 2
fi

source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cxx=${KIBENCH_FUZZ_CXX:-clang++-14}
if ! command -v "$cxx" >/dev/null; then
  echo "$0: $cxx not found (set KIBENCH_FUZZ_CXX)" >&2
  exit 2
fi

mkdir -p "$build_dir/obj" "$build_dir/artifacts"
build_dir=$(cd "$build_dir" && pwd)

# The library sources the targets reach: JSON (and the file reading it
# uses), digests, workloads and the operations they bind to.
cd "$source_dir"
library_sources=(lib/json/*.cpp lib/io/input_file.cpp lib/io/data_dir.cpp lib/io/text_rules.cpp lib/digest/digest.cpp lib/workload/*.cpp
  lib/operations/*.cpp lib/operations/*/*.cpp)
compile_flags=(
  -std=c++20 -g -O1 -fno-omit-frame-pointer
  "-fsanitize=fuzzer-no-link,address,undefined" -fno-sanitize-recover=all
  -I"$source_dir"
  "-DKIBENCH_SOURCE_DIR=\"$source_dir\""
)
link_flags=("-fsanitize=fuzzer,address,undefined" -lfmt -lsimdjson -lsodium -ldl)

objects=()
for source in "${library_sources[@]}"; do
  object="$build_dir/obj/${source//\//_}.o"
  # Recompile when the source or any library header is newer.
  if [[ ! -f $object || $source -nt $object || -n $(find lib -name '*.hpp' -newer "$object" -print -quit) ]]; then
    "$cxx" "${compile_flags[@]}" -c "$source" -o "$object"
  fi
  objects+=("$object")
done

# Seeds: every workload and OperationSpec, and every malformed file.
mapfile -t seeds < <(find "$source_dir/workloads" "$source_dir/test/data/malformed" -name '*.json' | sort)

status=0
for target in fuzz_workload fuzz_manifest; do
  "$cxx" "${compile_flags[@]}" "test/fuzz/$target.cpp" "${objects[@]}" "${link_flags[@]}" \
    -o "$build_dir/$target"

  # A fresh copy of the seeds each run, so the corpus stays small and the
  # result depends on this tree, not on what an earlier run found.
  corpus="$build_dir/corpus/$target"
  rm -rf "$corpus"
  mkdir -p "$corpus"
  cp "${seeds[@]}" "$corpus/"
  if [[ -d "$source_dir/test/fuzz/corpus/$target" ]]; then
    cp "$source_dir/test/fuzz/corpus/$target/"* "$corpus/"
  fi

  echo "== $target: fuzzing for ${seconds}s"
  if ! "$build_dir/$target" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    -dict="$source_dir/test/fuzz/json.dict" -artifact_prefix="$build_dir/artifacts/$target-" \
    -print_final_stats=1 "$corpus"; then
    echo "== $target: FAILED (input saved under $build_dir/artifacts/)" >&2
    status=1
  fi
done
exit "$status"
