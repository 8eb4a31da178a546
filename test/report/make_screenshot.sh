#!/usr/bin/env bash
# Regenerates docs/report-screenshot.png: a report of the given runs,
# rendered by headless Chromium at 1280 px wide.
#
#   test/report/make_screenshot.sh KIBENCH RUN... [-- HEIGHT]
#
# KIBENCH is the kibench binary (build/kibench); RUN are run directories as
# `kibench report` takes them. HEIGHT (default 2000) is the height of the
# captured window in pixels: the page's top, where the first cohort's
# charts are. The report goes to a temporary folder, removed afterwards.
set -euo pipefail

if (($# < 2)); then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
kibench=$1
shift
runs=()
height=2000
while (($# > 0)); do
  if [[ "$1" == "--" ]]; then
    height=${2:?HEIGHT after --}
    break
  fi
  runs+=("$1")
  shift
done

chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$chromium" ]]; then
  echo "make_screenshot: chromium is not installed (scripts/setup.sh --test installs it)" >&2
  exit 2
fi

repository=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$kibench" report "${runs[@]}" --out "$work/report.html"
# As root (containers) Chromium needs --no-sandbox; a fresh profile leaves
# the user's alone.
"$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --hide-scrollbars \
  --user-data-dir="$work/profile" --window-size="1280,$height" \
  --screenshot="$repository/docs/report-screenshot.png" "file://$work/report.html" 2>/dev/null
echo "written: $repository/docs/report-screenshot.png"
