#!/usr/bin/env bash
# The dated run sets behind docs/ (docs/perf.md, docs/guide.md, …) are kept
# as one archive each in docs/evidence/, with their SHA-256 in
# docs/evidence/SHA256SUMS; docs name their files as docs/runs/<set>/…,
# which `unpack` recreates (docs/runs/ is not tracked).
#   scripts/evidence.sh unpack [SET…]           docs/evidence/SET.tar.xz → docs/runs/SET/
#   scripts/evidence.sh verify [--kibench BIN] [SET…]
#       checks each archive's SHA-256, unpacks it into a temporary folder
#       and runs `kibench digest --verify` on every run directory in it
#   scripts/evidence.sh pack SET                docs/runs/SET/ → docs/evidence/SET.tar.xz
# Archives are reproducible: names sorted, owner 0, mtime 0, xz -9.
# KIBENCH_EVIDENCE_DIR and KIBENCH_RUNS_DIR move the two folders (tests).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
evidence="${KIBENCH_EVIDENCE_DIR:-$root/docs/evidence}"
runs="${KIBENCH_RUNS_DIR:-$root/docs/runs}"

die() { echo "evidence: $*" >&2; exit 2; }

sets_given() {
  if (($# > 0)); then printf '%s\n' "$@"; return; fi
  for archive in "$evidence"/*.tar.xz; do basename "$archive" .tar.xz; done
}

check_sum() {
  (cd "$evidence" && grep " $1.tar.xz\$" SHA256SUMS | sha256sum --check --quiet) ||
    { echo "evidence: docs/evidence/$1.tar.xz: SHA-256 differs from docs/evidence/SHA256SUMS" >&2; return 1; }
}

command="${1:-}"
shift || true
case "$command" in
  pack)
    (($# == 1)) || die "pack takes one SET (a folder of docs/runs/)"
    [[ -d "$runs/$1" ]] || die "docs/runs/$1: no such folder"
    mkdir -p "$evidence"
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$runs" -cf - "$1" | xz -9 -T1 >"$evidence/$1.tar.xz.tmp"
    mv "$evidence/$1.tar.xz.tmp" "$evidence/$1.tar.xz"
    (cd "$evidence" && { grep -v " $1.tar.xz\$" SHA256SUMS 2>/dev/null || true; sha256sum "$1.tar.xz"; } | sort -k2 >SHA256SUMS.tmp &&
      mv SHA256SUMS.tmp SHA256SUMS)
    echo "docs/evidence/$1.tar.xz: $(git -C "$root" ls-files "docs/runs/$1" 2>/dev/null | wc -l) tracked files before, $(tar -tJf "$evidence/$1.tar.xz" | wc -l) entries"
    ;;
  unpack)
    mkdir -p "$runs"
    while read -r set; do
      [[ -f "$evidence/$set.tar.xz" ]] || die "docs/evidence/$set.tar.xz: no such archive"
      check_sum "$set" || exit 1
      tar -xJf "$evidence/$set.tar.xz" -C "$runs"
      echo "docs/runs/$set"
    done < <(sets_given "$@")
    ;;
  verify)
    kibench="${KIBENCH:-$root/build/kibench}"
    if [[ "${1:-}" == "--kibench" ]]; then kibench="$2"; shift 2; fi
    [[ -x "$kibench" ]] || die "$kibench: no kibench executable (build it, or give --kibench BIN)"
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    failures=0 verified=0
    while read -r set; do
      [[ -f "$evidence/$set.tar.xz" ]] || die "docs/evidence/$set.tar.xz: no such archive"
      check_sum "$set" || { failures=$((failures + 1)); continue; }
      tar -xJf "$evidence/$set.tar.xz" -C "$scratch"
      count=0
      while IFS= read -r -d '' summary; do
        run="$(dirname "$summary")"
        if ! "$kibench" digest --verify "$run" >"$scratch/verify.log" 2>&1; then
          echo "evidence: ${run#"$scratch"/}: $(tail -n 1 "$scratch/verify.log")" >&2
          failures=$((failures + 1))
        fi
        count=$((count + 1))
      done < <(find "$scratch/$set" -name summary.json -print0 | sort -z)
      echo "$set: $count run directories checked"
      verified=$((verified + count))
    done < <(sets_given "$@")
    echo "evidence: $verified run directories, $failures failures"
    ((failures == 0)) || exit 1
    ;;
  *)
    die "usage: scripts/evidence.sh pack SET | unpack [SET…] | verify [--kibench BIN] [SET…]"
    ;;
esac
