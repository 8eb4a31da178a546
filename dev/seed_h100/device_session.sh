#!/usr/bin/env bash
# The seed on the board at hand, in one device call: the torch-eager and
# liger lanes' functions timed outside kibench, then `python -m kibench run`
# of the seed with the default cohort and the Python lanes, then (where the
# build has it) `kibench reproduce` of the seed record. Logs and the run
# folders (as one archive) go to $OUT.
#   dev/seed_h100/device_session.sh [ARCHIVE] [IMPLS]
# ARCHIVE: a package_for_device.sh archive (default .carry/gpu.tar.xz); the
# liger-kernel wheel in .whl/ is installed to /tmp/site.
set -uo pipefail
archive="${1:-.carry/gpu.tar.xz}"
impls="${2:-reference,fused,cublas-floor,torch-eager,liger}"
out="${OUT:-/tmp/out}"
mkdir -p "$out" /tmp/k
tar -xJf "$archive" -C /tmp/k
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="$PWD/python:/tmp/site" LD_LIBRARY_PATH="/tmp/k/gpu/lib" PYTHONUNBUFFERED=1
seed=workloads/seed-distill-jsd-h4096-t8192-v128256.json
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$out/gpu.txt"
for impl in torch-eager liger; do
  python3 scripts/time_outside_kibench.py --impl "$impl" 2>&1 | tail -n 3 | tee -a "$out/outside.txt"
done
python3 -m kibench run "$seed" --impl "$impls" --capi /tmp/k/gpu/libkibench_capi.so --out "$out/runs" \
  2>&1 | tee "$out/run.txt"
if [[ -n "${KIBENCH_REPRODUCE:-}" ]]; then
  python3 -m kibench reproduce test/data/seed/seed-record.json --capi /tmp/k/gpu/libkibench_capi.so \
    --out "$out/reproduce" 2>&1 | tee "$out/reproduce.txt"
fi
tar -czf "$out/runs.tgz" -C "$out" runs $([[ -d "$out/reproduce" ]] && echo reproduce) && rm -rf "$out/runs" "$out/reproduce"
