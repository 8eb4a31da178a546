# shellcheck shell=bash disable=SC2034
# Sourced by trusted_session.sh and harness_session.sh, after they set
# `default_steps`: the steps to run ($STEPS, else the default), the two
# builds unpacked under /tmp/trusted (once per machine), the wheels
# installed, and the paths every step uses.
#   ARCHIVE (after) and ARCHIVE_BEFORE are the script's two arguments.
set -uo pipefail
steps=" ${STEPS:-$default_steps} "
want() { [[ "$steps" == *" $1 "* ]]; }
archive="${1:?archive}"
before="${2:?archive before}"
out="${OUT:-/tmp/out}"
work=/tmp/trusted
mkdir -p "$out" "$work/after" "$work/before" "$work/runs"
# A machine kept warm between calls keeps /tmp: an archive is unpacked
# again where it differs from the one unpacked there before.
unpack() { # ARCHIVE DIR
  local sum; sum=$(sha256sum "$1" | cut -d' ' -f1)
  if [ ! -x "$2/gpu/kibench" ] || [ "$(cat "$2/.archive" 2>/dev/null)" != "$sum" ]; then
    rm -rf "$2/gpu" && tar -xJf "$1" -C "$2" && echo "$sum" > "$2/.archive"
  fi
}
unpack "$archive" "$work/after"
unpack "$before" "$work/before"
[ -d /tmp/site ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl
export PYTHONPATH="$PWD/python:/tmp/site" LD_LIBRARY_PATH="$work/after/gpu/lib" PYTHONUNBUFFERED=1
bin="$work/after/gpu"
seed=workloads/seed-distill-jsd-h4096-t8192-v128256.json
