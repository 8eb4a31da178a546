#!/usr/bin/env bash
# One device call for the per-output correctness policy and the Liger-way
# jsd lanes:
#   baseline   `kibench run` with every default (the seed, the default
#              lanes), the CI gate's baseline for this board (.github/
#              workflows/gpu.yml), written to $OUT/baseline;
#   small      every GPU and Python lane checked once (--check-only) on
#              the small workloads of all three operations, under the
#              shipped policy;
#   jsd        liger-jsd, liger-jsd-script, torch-eager-jsd and
#              torch-eager-jsd-script timed on jsd T 8192 V 128256;
#   reproduce  `kibench reproduce` of Liger's H100 (PCIe) jsd records at
#              T 8192, V 131072 (liger and torch), which run the -script
#              lanes;
#   parallel   `kibench run --parallel-gpus` of a small workload on this
#              one-GPU machine (one worker, said so), then its merge (first:
#              it is short);
#   refactor   kibench's own GPU lanes --check-only on the small workloads
#              of all three operations;
#   seed       the seed's fused and cublas-floor timed;
#   ab         the same with the build before (ARCHIVE_BEFORE), then after;
#   rows       row-v6 (dev/fused/row_loss_v6.cu): its check against the
#              shipped row kernel, the row kernels alone on a seed chunk, and
#              each stage of `fused` with row-v3 and row-v6 on the seed,
#              the H = 1024 sweep and the GPT-2 case;
#   tests      the [gpu] suite, as far as the call's time allows;
#   vp         the vocabulary-parallel cases of the [gpu] suite alone
#              (kibench_tests "[vocab_parallel]");
#   fp8fast    the FP8 teacher with fast accumulation: its error under the
#              seed's policy and its time (kibench_dev "[gpu-fp8-fast]");
#   ways       liger-jsd-script taken apart outside kibench
#              (dev/liger_jsd/script_ways.py), then the lane timed by
#              kibench alone, with and without input rotation;
#   fp8seed    the seed's fused-fp8-teacher (fast accumulation, as
#              registered), fused and cublas-floor timed;
#   fwdrows    each stage of the seed's forward pass with row-v3 and row-v6
#              (fused, fused-lean, fused-fp8-teacher; the row kernel reads
#              and writes no G' there, where row-v6 alone was 15-20 %
#              faster), and the GPT-2 case's full pass the same way;
#   promote    row-v6 shipped for passes without G': the [gpu] suite but
#              the vocabulary-parallel cases, the seed's forward pass
#              (fused, fused-fp8-teacher, cublas-floor), the GPT-2 case (its
#              sustained power), and each stage of the seed's forward pass
#              shipped against row-v3 in every pass;
#   fullrows   each stage of full passes with row-v3 and row-v6 (shipped)
#              in clusters of 2 and 4, all lanes in interleaved rounds: the
#              seed, the GPT-2 case, the two derived shapes and the H = 1024
#              sweep shape (fused, fused-lean, and fused-rowstats: the GEMMs'
#              row statistics where the rule of fused leaves them off);
#   energy     cuBLASLt's candidates for the seed's grad GEMMs, cold and at
#              the power cap (kibench_dev "[gpu-perf-gemm-energy]");
#   overlap    the row kernel beside the next chunk's logit GEMMs on SMs
#              of its own, cold and at the cap (kibench_dev
#              "[gpu-perf-overlap]"): the seed, the GPT-2 case and the
#              H = 1024 sweep shape;
#   singles    row-v6 with a row to one CTA (v6c-1x1024): its check
#              against row-v3 ([dev-row-kernels]), then each stage of full
#              passes of `fused` (singles where row_loss_v6_singles_pay),
#              of it with pairs (v6c-2x1024) and singles everywhere, and
#              with the small kernels in line, not beside the GEMMs: the
#              GPT-2 case and the two derived shapes (with SINGLES_LARGE=1
#              also the seed and the H = 1024 sweep shape, and the seed's
#              forward pass with pairs);
#   fwdsingles the seed's forward pass, each stage: `fused` (singles
#              without a shared-memory cache, as row_loss_v6_singles_pay
#              now allows where a pass reads each vector once), pairs
#              without the cache (v6c-2x1024) and pairs with the write-only
#              cache the pass kept before (v6-2x1024); fused-lean and
#              fused-fp8-teacher beside them (FWD_VARIANTS: other lanes);
#   schedule   the row kernel's schedule knobs (RowLossV6Limits: odd
#              clusters started late, the compact load sweep's slot-by-slot
#              waits): their check against row-v3 ([dev-row-kernels]), the
#              row kernel alone on one chunk of the GPT-2 case and of the
#              seed ("[gpu-perf-rows-schedule]"), then each stage of full
#              passes of the GPT-2 case and the two derived shapes with the
#              knobs of SCHEDULES ("stagger_us,staged ..."; default
#              "0,1 6,0 6,1"), and of singles with 2 or 3 of each vector's
#              8 exponentials on the FMA pipe (ex2_fma);
#   twoper     two rows in flight an SM: CTAs of 512 threads, two an SM,
#              a row to one (v6c-1x512, part of the row re-read from L2)
#              or to a cluster of two (v6c-2x512): their check against
#              row-v3 ([dev-row-kernels]), the row kernel alone on one
#              chunk of the GPT-2 case, then each stage of full passes of
#              the GPT-2 case and the two derived shapes beside singles,
#              and of the seed's forward pass (1x512: two rows an SM, no
#              cache);
#   gemmgpt2   kibench's logit GEMM (with and without row statistics)
#              beside cuBLASLt's at the GPT-2 case's K = 512 and 1024
#              (kibench_dev "[.gpu-perf-gemm]", KIBENCH_GEMM_CASE=gpt2);
#   profile    Nsight Compute (--set full) on one launch of the row kernel
#              as `fused` runs it: singles at the GPT-2 case (own
#              statistics, G') and pairs on a seed chunk (the GEMMs'
#              statistics, G'), each the first sample of its lane of
#              "[gpu-perf-rows-schedule]" (KIBENCH_ROWS_LANE), the reports as
#              text under $OUT, and v6c-1x512 at the GPT-2 case
#              (PROFILE_ONLY=gpt2-singles, gpt2-1x512 or seed-pairs: that
#              one alone);
#   targets    every shape of #42's done-when beside its floor: the seed
#              full (fused, fused-lean, fused-fp8-teacher) and forward,
#              fused_linear_jsd at T 8192, the GPT-2 case, and two shapes
#              derived from the seed here (T 777, V 32001, tau 0.7; T 8192,
#              V 50257, beta 0.9, tau 0.7), each run directory under runs/
#              (TARGETS="small forward" runs only those of small, fljsd,
#              seed and forward);
# Steps run in this script's order (vp, fp8fast, ways, fp8seed, fwdrows, promote, energy, fullrows, overlap, singles, fwdsingles, schedule, twoper, readonce, gpt2stats, gemmgpt2, profile, targets, parallel, rows, ab,
# refactor, seed, baseline, small, jsd, reproduce, tests), whatever order
# STEPS names them in.
#   [STEPS="baseline small jsd reproduce tests"] dev/seed_h100/policy_session.sh ARCHIVE ARCHIVE_BEFORE
default_steps="baseline small jsd reproduce tests"
source "$(dirname "${BASH_SOURCE[0]}")/session_setup.sh"
log="$out/session.txt"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$log"
quiet=" · [0-9]+/~|warm-up|back to back|checking|computing"

# The two derived shapes of #42's targets, under $work/targets: the seed's
# WorkloadCase with its token and vocabulary extents (and the target range)
# and scalars replaced.
derive_shapes() {
  python3 - "$seed" "$work/targets" <<'PY'
import copy, json, pathlib, sys
seed = json.loads(pathlib.Path(sys.argv[1]).read_text())
folder = pathlib.Path(sys.argv[2])
folder.mkdir(parents=True, exist_ok=True)
def derive(tokens, vocab, beta, temperature):
    case = copy.deepcopy(seed)
    spec = case["spec"]
    spec["axes"].update(tokens=tokens, vocab=vocab)
    tensors = spec["tensors"]
    for name in ("student_input", "teacher_input"): tensors[name]["shape"][0] = tokens
    for name in ("student_weight", "teacher_weight"): tensors[name]["shape"][0] = vocab
    tensors["target"]["shape"] = [tokens]
    tensors["target"]["data"]["parameters"]["high"] = vocab
    spec["scalars"]["beta"]["value"] = beta
    spec["scalars"]["temperature"]["value"] = temperature
    name = f"distill-jsd-loss-hidden{spec['axes']['hidden']}-tokens{tokens}-vocab{vocab}-beta{beta}-tau{temperature}-bf16".replace(".", "p")
    case["metadata"] = {"name": name, "title": f"The seed at T={tokens}, V={vocab}, beta={beta}, tau={temperature}",
                        "description": "Derived from the seed case by dev/seed_h100/policy_session.sh (step targets)."}
    (folder / f"{name}.json").write_text(json.dumps(case, indent=2) + "\n")
derive(777, 32001, 0.5, 0.7)
derive(8192, 50257, 0.9, 0.7)
PY
}

# The stage studies' small shapes, as KIBENCH_STAGE_WORKLOADS takes them:
# the GPT-2 case and the two derived shapes (derive_shapes first).
small_stage_workloads() {
  local list="$PWD/workloads/distill-jsd-h1024-t1000-v50257.json" f
  for f in "$work"/targets/*.json; do list+=":$f"; done
  echo "$list"
}

if want vp; then
  timeout 120 "$bin/kibench_tests" "[vocab_parallel]" --durations yes 2>&1 | tee "$out/vp_tests.txt" | tail -n 40 | tee -a "$log"
  # Where a crash comes, the last assertion before it.
  grep -q "FAILED" "$out/vp_tests.txt" && timeout 60 "$bin/kibench_tests" \
    "fused-vocab-parallel: labels, memory, and a timer over every GPU" -s 2>&1 | tail -n 30 | tee -a "$log"
fi

want fp8fast && timeout 150 "$bin/kibench_dev" "[gpu-fp8-fast]" 2>&1 | tail -n 40 | tee -a "$log"

if want ways; then
  timeout 150 python3 dev/liger_jsd/script_ways.py 2>&1 | grep -v "could not be imported" | tee -a "$log"
  # The lane in kibench, alone: with its inputs rotating (the default for a
  # worker lane: each sample regenerates the other 8.4 GB input set in the
  # worker) and without; the samples each takes in its 20 s say what a
  # sample's untimed work costs.
  jsd_workload=workloads/jsd/liger/jsd-t8192-v128256.json
  for rotate in auto off; do
    timeout 150 python3 -m kibench run "$jsd_workload" --impl liger-jsd-script --capi "$bin/libkibench_capi.so" \
      --timeout 20 --sustained 0 --rotate-inputs "$rotate" --out "$work/runs/ways-rotate-$rotate" 2>&1 \
      | grep -vE "$quiet|could not be imported" | tee -a "$log"
  done
fi

if want fp8seed; then
  "$bin/kibench" run "$seed" --impl fused-fp8-teacher,fused,cublas-floor --out "$work/runs/fp8seed" 2>&1 \
    | grep -vE "$quiet" | tee -a "$log"
fi

if want fwdrows; then
  variants="fused;fused, row-v6-*;fused-lean;fused-lean, row-v6-*;fused-fp8-teacher;fused-fp8-teacher, row-v6-*"
  KIBENCH_STAGE_PASS=forward KIBENCH_STAGE_WORKLOADS="$seed" KIBENCH_STAGE_VARIANTS="$variants" \
    timeout 200 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | tee -a "$log"
  KIBENCH_STAGE_WORKLOADS=workloads/distill-jsd-h1024-t1000-v50257.json KIBENCH_STAGE_VARIANTS="fused;fused, row-v6-*" \
    timeout 60 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | tee -a "$log"
fi

if want promote; then
  timeout 150 "$bin/kibench_tests" "[gpu]~[vocab_parallel]" --durations yes > "$out/gpu_tests.txt" 2>&1
  tail -n 4 "$out/gpu_tests.txt" | tee -a "$log"
  grep -B2 -A12 "FAILED" "$out/gpu_tests.txt" | head -n 60 | tee -a "$log"
  "$bin/kibench" run "$seed" --pass forward --impl fused,fused-fp8-teacher,cublas-floor --out "$work/runs/promote-forward" \
    2>&1 | grep -vE "$quiet" | tee -a "$log"
  "$bin/kibench" run workloads/distill-jsd-h1024-t1000-v50257.json --impl fused,cublas-floor --out "$work/runs/promote-gpt2" \
    2>&1 | grep -vE "$quiet" | tee -a "$log"
  KIBENCH_STAGE_PASS=forward KIBENCH_STAGE_WORKLOADS="$seed" \
    KIBENCH_STAGE_VARIANTS="fused;fused, row-v3;fused-fp8-teacher;fused-fp8-teacher, row-v3" \
    timeout 120 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | tee -a "$log"
fi

want energy && timeout 200 "$bin/kibench_dev" "[gpu-perf-gemm-energy]" 2>&1 | tee -a "$log"

if want fullrows; then
  derive_shapes
  stage_workloads="$PWD/$seed:$PWD/workloads/distill-jsd-h1024-t1000-v50257.json"
  for f in "$work"/targets/*.json; do stage_workloads="$stage_workloads:$f"; done
  stage_workloads="$stage_workloads:$PWD/workloads/sweeps/ragged/sweep-h1024-t8192-v128256.json"
  KIBENCH_STAGE_WORKLOADS="$stage_workloads" KIBENCH_STAGE_VARIANTS="fused;fused, row-v6-*;fused-lean;fused-lean, row-v6-*;fused-rowstats*" \
    timeout 240 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | tee -a "$log"
fi

if want overlap; then
  for f in "$seed" workloads/distill-jsd-h1024-t1000-v50257.json workloads/sweeps/ragged/sweep-h1024-t8192-v128256.json; do
    KIBENCH_ROWS_WORKLOAD="$f" timeout 150 "$bin/kibench_dev" "[gpu-perf-overlap]" 2>&1 | tee -a "$log"
  done
fi

if want singles; then
  derive_shapes
  timeout 120 "$bin/kibench_dev" "[dev-row-kernels]" 2>&1 | tail -n 25 | tee -a "$log"
  stage_workloads=$(small_stage_workloads)
  [[ -n "${SINGLES_LARGE:-}" ]] && stage_workloads+=":$PWD/$seed:$PWD/workloads/sweeps/ragged/sweep-h1024-t8192-v128256.json"
  KIBENCH_STAGE_WORKLOADS="$stage_workloads" \
    KIBENCH_STAGE_VARIANTS='fused;fused, row-v6c-2x1024;fused, row-v6c-1x1024;fused, small kernels in line' \
    timeout 300 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | tee -a "$log"
  [[ -n "${SINGLES_LARGE:-}" ]] && KIBENCH_STAGE_PASS=forward KIBENCH_STAGE_WORKLOADS="$PWD/$seed" \
    KIBENCH_STAGE_VARIANTS='fused;fused, row-v6c-2x1024' timeout 120 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | tee -a "$log"
fi

if want fwdsingles; then
  KIBENCH_STAGE_PASS=forward KIBENCH_STAGE_WORKLOADS="$PWD/$seed" \
    KIBENCH_STAGE_VARIANTS="${FWD_VARIANTS:-fused;fused, row-v6c-2x1024;fused, row-v6-2x1024;fused-lean;fused-fp8-teacher}" \
    timeout 150 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | tee -a "$log"
fi

if want schedule; then
  derive_shapes
  timeout 150 "$bin/kibench_dev" "[dev-row-kernels]" 2>&1 | tail -n 25 | tee -a "$log"
  for f in workloads/distill-jsd-h1024-t1000-v50257.json "$seed"; do
    KIBENCH_ROWS_WORKLOAD="$f" timeout 150 "$bin/kibench_dev" "[gpu-perf-rows-schedule]" 2>&1 | tee -a "$log"
  done
  stage_workloads=$(small_stage_workloads)
  KIBENCH_STAGE_WORKLOADS="$stage_workloads" KIBENCH_STAGE_VARIANTS='fused;fused, row-v6c-1x1024, fma ex2*' \
    timeout 150 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | grep -E "^[a-z].*json|^  [a-z]|row kernel|stages" | tee -a "$log"
  for knobs in ${SCHEDULES:-0,1 6,0 6,1}; do
    echo "schedule: stagger ${knobs%,*} us, staged wait ${knobs#*,}" | tee -a "$log"
    KIBENCH_ROW_STAGGER_US="${knobs%,*}" KIBENCH_ROW_STAGED_WAIT="${knobs#*,}" KIBENCH_STAGE_WORKLOADS="$stage_workloads" \
      KIBENCH_STAGE_VARIANTS='fused;fused, row schedule from the environment' \
      timeout 150 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | grep -E "^[a-z].*json|^  [a-z]|row kernel|stages" | tee -a "$log"
  done
fi

if want twoper; then
  derive_shapes
  timeout 150 "$bin/kibench_dev" "[dev-row-kernels]" 2>&1 | tail -n 25 | tee -a "$log"
  KIBENCH_ROWS_WORKLOAD=workloads/distill-jsd-h1024-t1000-v50257.json timeout 150 "$bin/kibench_dev" \
    "[gpu-perf-rows-schedule]" 2>&1 | grep -E "^[a-zA-Z]|stagger 0 us" | tee -a "$log"
  stage_workloads=$(small_stage_workloads)
  KIBENCH_STAGE_WORKLOADS="$stage_workloads" \
    KIBENCH_STAGE_VARIANTS='fused;fused, row-v6c-1x1024;fused, row-v6c-1x512;fused, row-v6c-2x512' \
    timeout 200 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | grep -E "^[a-z].*json|^  [a-z]|row kernel|stages" | tee -a "$log"
  # Every stage of the seed's forward pass (a faster row kernel once came
  # with a slower pass: the stages say where).
  KIBENCH_STAGE_PASS=forward KIBENCH_STAGE_WORKLOADS="$PWD/$seed" \
    KIBENCH_STAGE_VARIANTS='fused;fused, row-v6c-1x512' \
    timeout 120 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | tee -a "$log"
fi

# readonce: a forward pass with the GEMMs' statistics on singles of 512,
# 256 and 128 threads (2, 4 and 8 rows an SM): the candidates checked
# against row-v3, the row kernel alone on a chunk of the GPT-2 case and of
# the seed (the forward configuration's lanes only), then the seed's
# forward pass stage by stage (READONCE_VARIANTS).
if want readonce; then
  timeout 150 "$bin/kibench_dev" "[dev-row-kernels]" 2>&1 | tail -n 25 | tee -a "$log"
  for f in workloads/distill-jsd-h1024-t1000-v50257.json "$seed"; do
    echo "row kernel alone: $f" | tee -a "$log"
    KIBENCH_ROWS_WORKLOAD="$f" timeout 150 "$bin/kibench_dev" "[gpu-perf-rows-schedule]" 2>&1 \
      | sed -n '/^GEMM statistics, forward/,$p' | grep -E "^[A-Za-z]|stagger 0 us" | tee -a "$log"
  done
  KIBENCH_STAGE_PASS=forward KIBENCH_STAGE_WORKLOADS="$PWD/$seed" \
    KIBENCH_STAGE_VARIANTS="${READONCE_VARIANTS:-fused;fused, row-v6c-1x1024;fused, row-v6f-1x256;fused, row-v6f-1x128}" \
    timeout 150 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | tee -a "$log"
fi

# gpt2stats: whether the logit GEMMs' row statistics pay at the GPT-2 case
# (T 1000, Hs 1024) now that its row kernel is a single: statistics_pay
# turned them off below Hs 2048 and 1024 chunk rows with the row kernels
# of 2026-12-04. `kibench run` of fused, fused-rowstats and the floor, and
# each lane's stages.
if want gpt2stats; then
  "$bin/kibench" run workloads/distill-jsd-h1024-t1000-v50257.json --impl fused,fused-rowstats,cublas-floor \
    --out "$work/runs/gpt2stats" 2>&1 | grep -vE "$quiet" | tee -a "$log"
  KIBENCH_STAGE_WORKLOADS="$PWD/workloads/distill-jsd-h1024-t1000-v50257.json" \
    KIBENCH_STAGE_VARIANTS='fused;fused-rowstats' \
    timeout 120 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | tee -a "$log"
fi

# gemmgpt2: kibench's logit GEMM (with and without the row statistics)
# beside cuBLASLt's on the GPT-2 case's two logit shapes (K 512 and 1024),
# cold and sustained: whether its mainloop or its statistics warps are what
# lose at small K.
if want gemmgpt2; then
  KIBENCH_GEMM_CASE=gpt2 timeout 120 "$bin/kibench_dev" "[.gpu-perf-gemm]" 2>&1 | tee -a "$log"
fi

if want profile; then
  ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
  echo "ncu: ${ncu_bin:-none}" | tee -a "$log"
  # One lane of "[gpu-perf-rows-schedule]" each (KIBENCH_ROWS_LANE): its
  # first sample, after 3 warm-up launches.
  for target in "workloads/distill-jsd-h1024-t1000-v50257.json|own statistics, G': v6c-1x1024, wait all, stagger 0 us|gpt2-singles" \
    "workloads/distill-jsd-h1024-t1000-v50257.json|own statistics, G': v6c-1x512, wait all, stagger 0 us|gpt2-1x512" \
    "$seed|GEMM statistics, G': v6c-2x1024, wait all, stagger 0 us|seed-pairs"; do
    IFS='|' read -r file lane name <<< "$target"
    [[ -n "${PROFILE_ONLY:-}" && "$name" != "$PROFILE_ONLY" ]] && continue
    [[ -n "$ncu_bin" ]] && KIBENCH_ROWS_WORKLOAD="$file" KIBENCH_ROWS_LANE="$lane" timeout 240 "$ncu_bin" --set full -k regex:row_loss_v6 \
      --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active' \
      --launch-skip 3 --launch-count 1 "$bin/kibench_dev" "[gpu-perf-rows-schedule]" > "$out/ncu-$name.txt" 2>&1
    grep -E "row_loss_v6_kernel|Duration|Issue Slots Busy|Issued Ipc|No Eligible|Warp Cycles Per Issued|Stall|Pipe|Throughput|Registers|Achieved Occupancy|Theoretical Occupancy|issue_stalled|inst_executed_pipe" \
      "$out/ncu-$name.txt" | head -n 120 | tee -a "$log"
  done
fi

if want targets; then
  derive_shapes
  run_target() { # NAME, then kibench run's arguments; only the names in TARGETS, if set
    local name="$1"; shift
    [[ -n "${TARGETS:-}" && " $TARGETS " != *" $name "* ]] && return 0
    "$bin/kibench" run "$@" --out "$work/runs/targets-$name" 2>&1 | grep -vE "$quiet" | tee -a "$log"
  }
  # The shorter runs first: a call cut short keeps their lines in the log.
  run_target small workloads/distill-jsd-h1024-t1000-v50257.json "$work"/targets/*.json --impl fused,cublas-floor
  run_target fljsd workloads/fused_linear_jsd/liger/fused-linear-jsd-h4096-t8192-v128256.json --impl fused,cublas-floor
  run_target seed "$seed" --impl fused,fused-lean,fused-fp8-teacher,cublas-floor
  run_target forward "$seed" --pass forward --impl fused,fused-lean,fused-fp8-teacher,cublas-floor
fi

if want parallel; then
  "$bin/kibench" run workloads/small/small-v1000-h64-t32.json workloads/jsd/small/jsd-small-t32-v1000.json \
    --impl fused,reference --parallel-gpus --out "$work/runs/parallel" 2>&1 | tee -a "$log"
  cat "$work"/runs/parallel/parallel-gpus.*.log >> "$log"
  "$bin/kibench" merge "$work/runs/parallel" --out "$work/runs/parallel-merged" 2>&1 | tee -a "$log"
fi

if want rows; then
  timeout 120 "$bin/kibench_dev" "[dev-row-kernels]" 2>&1 | tail -n 25 | tee -a "$log"
  timeout 90 "$bin/kibench_dev" "[gpu-perf-rows]" 2>&1 | tee -a "$log"
  stage_workloads="$PWD/$seed:$PWD/workloads/sweeps/ragged/sweep-h1024-t8192-v128256.json"
  stage_workloads+=":$PWD/workloads/distill-jsd-h1024-t1000-v50257.json"
  KIBENCH_STAGE_WORKLOADS="$stage_workloads" KIBENCH_STAGE_VARIANTS='fused;fused, row-v6*;fused-lean*;fused-fp8-teacher*' \
    timeout 200 "$bin/kibench_dev" "[gpu-perf-stages]" 2>&1 | tee -a "$log"
fi

# ab: the seed's fused and cublas-floor with the build before (ARCHIVE_BEFORE)
# and the build after (ARCHIVE), one after the other in this call: whether
# fused's median moved beyond the noise between them. SEED_BEFORE: the seed
# as the build before reads it (an older build knows only the comparators
# of its day; the shapes and scalars are the same).
if want ab; then
  for build in before after; do
    workload="$seed"
    [[ "$build" == before && -n "${SEED_BEFORE:-}" ]] && workload="$SEED_BEFORE"
    "$work/$build/gpu/kibench" run "$workload" --impl fused,cublas-floor --out "$work/runs/ab-$build" 2>&1 \
      | grep -vE "$quiet" | sed "s/^/[$build] /" | tee -a "$log"
  done
fi

# refactor: kibench's own GPU lanes checked once on the small workloads of
# all three operations (the operation registry and the fused seam changed
# no verdict), then the seed's fused and cublas-floor timed (its median
# within noise of the baseline's).
if want refactor; then
  "$bin/kibench" run workloads/small/*.json workloads/jsd/small/*.json workloads/fused_linear_jsd/small/*.json \
    --impl fused,fused-rowstats,fused-cublaslt,fused-lean,fused-vp2-emulated,reference,cublas-floor,wgmma-floor,copy-floor \
    --check-only 2>&1 | grep -vE "$quiet" | tee -a "$log"
fi
if want seed; then
  "$bin/kibench" run "$seed" --impl fused,cublas-floor --out "$work/runs/seed" 2>&1 | grep -vE "$quiet" | tee -a "$log"
fi

if want baseline; then
  "$bin/kibench" run --out "$work/runs/baseline" 2>&1 | grep -vE "$quiet" | tee -a "$log"
  mkdir -p "$out/baseline" && cp -r "$work"/runs/baseline/*/ "$out/baseline/"
fi

if want small; then
  gpu_lanes=fused,fused-rowstats,fused-cublaslt,fused-lean,fused-fp8-teacher,fused-vp2-emulated,reference
  python3 -m kibench run workloads/small/*.json workloads/fused_linear_jsd/small/*.json \
    --impl "$gpu_lanes,torch-eager,torch-compile,liger,torch-eager-fused-linear-jsd,liger-fused-linear-jsd" \
    --capi "$bin/libkibench_capi.so" --check-only --isolation in-process 2>&1 | grep -vE "$quiet" | tee -a "$log"
  python3 -m kibench run workloads/jsd/small/*.json \
    --impl fused,reference,torch-eager-jsd,liger-jsd,torch-eager-jsd-script,liger-jsd-script \
    --capi "$bin/libkibench_capi.so" --check-only --isolation in-process 2>&1 | grep -vE "$quiet" | tee -a "$log"
fi

want jsd && python3 -m kibench run workloads/jsd/liger/jsd-t8192-v128256.json \
  --impl fused,liger-jsd,liger-jsd-script,torch-eager-jsd,torch-eager-jsd-script --capi "$bin/libkibench_capi.so" \
  --out "$work/runs/jsd" 2>&1 | grep -vE "$quiet" | tee -a "$log"

if want reproduce; then
  "$bin/kibench" import liger test/data/liger/jsd-family-rows.csv --out "$work/imported" > /dev/null 2>&1
  for provider in liger torch; do
    record=$(ls -d "$work"/imported/liger-jsd-full-"$provider"-nvidia-h100-*-tokens8192-vocab131072-* | head -n 1)
    echo "reproducing $record" | tee -a "$log"
    python3 -m kibench reproduce "$record" --capi "$bin/libkibench_capi.so" --timeout "${REPRODUCE_TIMEOUT_S:-30}" --out "$work/runs/reproduce-jsd-$provider" 2>&1 \
      | grep -vE "$quiet" | tee -a "$log"
  done
fi


tar -czf "$out/runs.tgz" -C "$work" runs
# Every test case's name and time, then the totals (the whole output in
# $OUT/gpu_tests.txt: a cut run still says which cases passed).
want tests && timeout "${TESTS_S:-200}" "$bin/kibench_tests" "${TESTS_SPEC:-[gpu]}" --durations yes > "$out/gpu_tests.txt" 2>&1
want tests && tail -n 30 "$out/gpu_tests.txt" | tee -a "$log"
