#!/usr/bin/env bash
# control case: seed cohort (fused, eager, liger) with SM clock locked at base
set -u
B=$PWD/.carry/gpu; export LD_LIBRARY_PATH=$B/lib
O=$OUT; exec > >(tee -a $O/exp2.log) 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/liger_kernel-*.whl . 2>&1 | tail -3
export PYTHONPATH=/tmp/site
W=workloads/seed-distill-jsd-h4096-t8192-v128256.json
for k in a b; do
  date; echo "== locked-base $k"
  timeout 170 python3 -m kibench run $W --impl fused,torch-eager,liger --lock-clocks base --max-samples 60 --timeout 25 \
     --capi $B/libkibench_capi.so --out $O/runs/locked-$k 2>&1 | grep -v '^\[' | tail -14
  d=$(ls -d $O/runs/locked-$k/*/ | tail -1)
  $B/kibench compare $d --baseline torch-eager 2>&1 | tail -25
  python3 - "$d" <<'PY'
import json,glob,sys,statistics
for f in sorted(glob.glob(sys.argv[1]+'/samples.*.json')):
    try: d=json.load(open(f))
    except Exception as e: continue
    s=d.get('samples') or d.get('spec',{}).get('samples') or []
    if not s: continue
    c=[x.get('smClockMHz') for x in s if x.get('smClockMHz')]; p=[x.get('boardPowerW') for x in s if x.get('boardPowerW')]
    print(f.split('/')[-1][:60], 'n',len(s),'clock med',statistics.median(c) if c else None,'power med',statistics.median(p) if p else None)
PY
done
date
