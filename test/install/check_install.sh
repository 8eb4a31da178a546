#!/usr/bin/env bash
# Installs a build into a temporary prefix and runs the installed kibench
# as a user would: from a folder outside the source and build trees, with
# no override of where its data is ($KIBENCH_WORKLOADS, $KIBENCH_LIGER_DATA
# unset, no ./workloads). Every command must find what it needs in the
# prefix alone: list (the installed workloads), import liger (the
# KernelIndex tables in share/kibench/workloads/kernelindex), run (a small
# workload on the CPU, its OperationSpec found in share/kibench); and
# python -m kibench list over the installed libkibench_capi.so.
#   test/install/check_install.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir="$(cd "${1:?usage: check_install.sh SOURCE_DIR BUILD_DIR}" && pwd)"
build_dir="$(cd "${2:?usage: check_install.sh SOURCE_DIR BUILD_DIR}" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kibench-install-XXXXXX")"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
unset KIBENCH_WORKLOADS KIBENCH_LIGER_DATA KIBENCH_SOURCE_DIR

fail() {
  echo "install_relocatable: $*" >&2
  exit 1
}

cmake --install "$build_dir" --prefix "$prefix" > "$work/install.log" || {
  cat "$work/install.log" >&2
  fail "cmake --install failed"
}
for file in bin/kibench lib/libkibench_capi.so include/kibench/kibench.h include/kibench/kibench_plugin.h \
  share/kibench/LICENSE share/kibench/NOTICE share/kibench/workloads/operations/distill_jsd_loss.json \
  share/kibench/workloads/small/small-v1000-h64-t32.json \
  share/kibench/workloads/kernelindex/liger/operation-distill_jsd_loss.json; do
  [ -f "$prefix/$file" ] || fail "$file is not installed"
done
cmp -s "$source_dir/LICENSE" "$prefix/share/kibench/LICENSE" || fail "share/kibench/LICENSE differs from LICENSE"

# A folder outside both trees, holding only a copy of the CSV sample.
elsewhere="$work/elsewhere"
mkdir -p "$elsewhere"
cp "$source_dir/test/data/liger/jsd-family-rows.csv" "$elsewhere/"
cd "$elsewhere"
kibench="$prefix/bin/kibench"

"$kibench" list > list.txt 2>&1 || {
  cat list.txt >&2
  fail "kibench list failed"
}
grep -q "^workloads in $prefix/share/kibench/workloads:" list.txt || {
  cat list.txt >&2
  fail "kibench list did not list the installed workloads"
}
grep -q "small/small-v1000-h64-t32.json" list.txt || fail "kibench list did not list small-v1000-h64-t32.json"
if grep -q "INVALID" list.txt; then
  cat list.txt >&2
  fail "kibench list found an installed workload invalid"
fi

"$kibench" import liger jsd-family-rows.csv --out imported > import.txt 2>&1 || {
  cat import.txt >&2
  fail "kibench import liger failed"
}
# The seed row (its name is cut at 100 characters, as KernelIndex cuts it).
seed_row="imported/liger-distill-jsd-loss-full-torch-nvidia-h100-80gb-hbm3-hidden4096-tokens8192-vocab128256-bf16-2024-"
[ -d "$seed_row" ] || {
  ls imported >&2 || true
  fail "kibench import liger did not write the seed row's record"
}
"$kibench" digest --verify "$seed_row" > verify.txt 2>&1 || {
  cat verify.txt >&2
  fail "kibench digest --verify of the imported seed row failed"
}

"$kibench" run "$prefix/share/kibench/workloads/small/small-v1000-h64-t32.json" --impl cpu-reference \
  --out runs --min-samples 3 --max-samples 3 --min-time 0 --warmup 0 > run.txt 2>&1 || {
  cat run.txt >&2
  fail "kibench run failed"
}
compgen -G "runs/*/run.cpu-reference.json" > /dev/null || {
  cat run.txt >&2
  fail "kibench run wrote no run.cpu-reference.json"
}
# The Python package through the installed C library (PREFIX/lib, found
# from kibench on PATH), which finds the data beside itself too.
PATH="$prefix/bin:$PATH" PYTHONPATH="$source_dir/python" KIBENCH_CAPI="" \
  python3 -m kibench list > python-list.txt 2>&1 || {
  cat python-list.txt >&2
  fail "python -m kibench list over the installed libkibench_capi.so failed"
}
grep -q "^workloads in $prefix/share/kibench/workloads:" python-list.txt || {
  cat python-list.txt >&2
  fail "python -m kibench list did not list the installed workloads"
}
echo "installed kibench ran list, import liger and run from $elsewhere, and python -m kibench list"
