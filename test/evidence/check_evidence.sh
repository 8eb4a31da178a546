#!/usr/bin/env bash
# The archived run sets verify (scripts/evidence.sh verify: each archive's
# SHA-256, then `kibench digest --verify` on every run directory), and the
# check fails on an archive that differs from SHA256SUMS and on a run whose
# manifest was edited after its digests were taken.
#   test/evidence/check_evidence.sh SOURCE_DIR KIBENCH
set -euo pipefail
source_dir="$1"
kibench="$2"
script="$source_dir/scripts/evidence.sh"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

"$script" verify --kibench "$kibench"

# A byte appended to an archive: its SHA-256 no longer matches.
mkdir -p "$scratch/tampered"
cp "$source_dir/docs/evidence/h100-2026-12-06.tar.xz" "$source_dir/docs/evidence/SHA256SUMS" "$scratch/tampered/"
printf 'x' >>"$scratch/tampered/h100-2026-12-06.tar.xz"
if KIBENCH_EVIDENCE_DIR="$scratch/tampered" "$script" verify --kibench "$kibench" h100-2026-12-06 2>"$scratch/err"; then
  echo "check_evidence: an archive differing from SHA256SUMS verified" >&2
  exit 1
fi
grep -q "SHA-256 differs" "$scratch/err"

# A run's WorkloadCase edited, then packed again with a fresh SHA-256: the
# archive is intact, the run's digests are not.
mkdir -p "$scratch/runs" "$scratch/edited"
tar -xJf "$source_dir/docs/evidence/h200-2026-12-02.tar.xz" -C "$scratch/runs"
workloads="$(find "$scratch/runs" -name workload.json | sort)"
workload="${workloads%%$'\n'*}"
[[ -n "$workload" ]] || { echo "check_evidence: no workload.json in h200-2026-12-02" >&2; exit 1; }
sed -i 's/"tokens": \([0-9]*\)/"tokens": 1\1/' "$workload"
KIBENCH_RUNS_DIR="$scratch/runs" KIBENCH_EVIDENCE_DIR="$scratch/edited" "$script" pack h200-2026-12-02 >/dev/null
if KIBENCH_EVIDENCE_DIR="$scratch/edited" "$script" verify --kibench "$kibench" h200-2026-12-02 2>"$scratch/err"; then
  echo "check_evidence: a run with an edited WorkloadCase verified" >&2
  exit 1
fi
grep -q "^evidence: h200-2026-12-02/" "$scratch/err"
echo "check_evidence: the archives verify; a changed archive and an edited run are caught"
