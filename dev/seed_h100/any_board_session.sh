#!/usr/bin/env bash
# One device call for whichever Hopper board comes: on an H200 the H200
# half of the seed's reproduction first (trusted_session.sh's cohort and
# outside steps), then as much of policy_session.sh as the call allows; on
# an H100, policy_session.sh alone.
#   dev/seed_h100/any_board_session.sh ARCHIVE ARCHIVE_BEFORE
set -uo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
out="${OUT:-/tmp/out}"
mkdir -p "$out"
board=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "board: $board" | tee "$out/board.txt"
if [[ "$board" == *H200* ]]; then
  STEPS="cohort outside" OUT="$out/h200-seed" bash "$here/trusted_session.sh" "$@"
  STEPS="${POLICY_STEPS:-parallel baseline small jsd}" OUT="$out/policy" bash "$here/policy_session.sh" "$@"
else
  STEPS="${POLICY_STEPS:-parallel baseline small jsd reproduce}" OUT="$out/policy" bash "$here/policy_session.sh" "$@"
fi
