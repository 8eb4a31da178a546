#!/usr/bin/env bash
# One device call for the trusted harness and the seed's reproduction:
#   0. the torch-eager and liger lanes' functions timed outside kibench
#      (scripts/time_outside_kibench.py);
#   1. what the checks cost: `kibench run SEED --impl fused,cublas-floor`
#      with the build before the checks (ARCHIVE_BEFORE) and after (ARCHIVE),
#      wall time of each;
#   2. the default cohort with the Python lanes (memory groups, checks);
#   3. test/python/test_untrusted_lanes.py with torch lanes on the GPU;
#   4. `kibench reproduce` of the seed record and of the H100 liger record
#      of Liger's table (test/data/liger), each attestation.json validated
#      against KernelIndex's request schema;
#   5. the [gpu] test suite, as far as the call's time allows.
# Logs, and the run folders as one archive, go to $OUT.
#   [STEPS="outside overhead cohort untrusted reproduce tests"] dev/seed_h100/trusted_session.sh ARCHIVE ARCHIVE_BEFORE
default_steps="outside overhead cohort untrusted reproduce tests"
source "$(dirname "${BASH_SOURCE[0]}")/session_setup.sh"
log="$out/session.txt"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$log"

want outside && for impl in torch-eager liger; do
  python3 scripts/time_outside_kibench.py --impl "$impl" 2>&1 | tail -n 2 | tee -a "$log"
done

want overhead && for build in before after; do
  start=$(date +%s%N)
  "$work/$build/gpu/kibench" run "$seed" --impl fused,cublas-floor --out "$work/runs/overhead-$build" 2>&1 \
    | grep -E "^(fused|cublas-floor) |written|FAILED|failed" | tee -a "$log"
  echo "overhead $build: wall $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$log"
done

want cohort && python3 -m kibench run "$seed" --impl reference,fused,cublas-floor,torch-eager,liger --capi "$bin/libkibench_capi.so" \
  --out "$work/runs/cohort" 2>&1 | grep -vE " · [0-9]+/~|warm-up|checking|computing|back to back" | tee -a "$log"

want untrusted && KIBENCH_WORKLOADS="$PWD/workloads" KIBENCH_UNTRUSTED_DEVICE=cuda python3 test/python/test_untrusted_lanes.py "$PWD" "$bin" 2>&1 | tail -n 12 | tee -a "$log"

if want reproduce; then
python3 -m kibench reproduce test/data/seed/seed-record.json --capi "$bin/libkibench_capi.so" \
  --out "$work/runs/reproduce-seed" 2>&1 | grep -vE " · [0-9]+/~|warm-up|back to back" | tee -a "$log"
"$bin/kibench" import liger test/data/liger/jsd-family-rows.csv --out "$work/imported" > /dev/null 2>&1
record=$(ls -d "$work"/imported/liger-distill-jsd-loss-full-liger-nvidia-h100-80gb-hbm3-hidden4096-tokens8192-* | head -n 1)
python3 -m kibench reproduce "$record" --capi "$bin/libkibench_capi.so" --out "$work/runs/reproduce-liger" 2>&1 \
  | grep -vE " · [0-9]+/~|warm-up|back to back" | tee -a "$log"
python3 test/schema/validate_attestation.py test/schema/kernelindex-attestation-request.schema.json \
  "$work"/runs/reproduce-seed/*/ "$work"/runs/reproduce-liger/*/ 2>&1 | tee -a "$log"
echo "validate_attestation exit $?" | tee -a "$log"
fi

tar -czf "$out/runs.tgz" -C "$work" runs
want tests && timeout 150 "$bin/kibench_tests" "[gpu]" 2>&1 | tail -n 30 | tee "$out/gpu_tests.txt"
