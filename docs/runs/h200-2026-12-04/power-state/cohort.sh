# cohort NAME FLAGS... : seed cohort fused,torch-eager,liger with FLAGS; compare vs eager and liger
cohort() {
  local name=$1; shift
  echo "== cohort $name: $*"; date
  timeout 170 python3 -m kibench run $W --impl ${IMPLS:-fused,torch-eager,liger} "$@" --capi $B/libkibench_capi.so --out $O/runs/$name 2>&1 | grep -v '^\[' | grep -v '^$' | tail -12
  local d=$(ls -d $O/runs/$name/*/ | tail -1)
  $B/kibench compare $d --baseline torch-eager 2>&1 | grep -E '^ +[0-9] |caveat' | head -12
  $B/kibench compare $d --baseline liger 2>&1 | grep -E '^ +[0-9] |caveat' | head -12
  python3 - "$d" <<'PY'
import json,glob,sys,statistics as st
for f in sorted(glob.glob(sys.argv[1]+'/samples.*.json')):
    s=json.load(open(f))['samples']
    c=[x['smClockMHz'] for x in s if x.get('smClockMHz')]; p=[x['boardPowerW'] for x in s if x.get('boardPowerW')]
    w=[x['restWaitMs'] for x in s if x.get('restWaitMs') is not None]
    print(' ', f.split('/')[-1], 'n', len(s), 'rounds', len({x['round'] for x in s}), 'clock', st.median(c) if c else None, 'power', round(st.median(p)) if p else None, 'restwait med', st.median(w) if w else None)
PY
}
