#!/usr/bin/env bash
# Installs what kibench needs from Debian, and nothing when all is there.
#   scripts/setup.sh          build dependencies
#   scripts/setup.sh --test   plus what the test suite uses
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config libcli11-dev libfmt-dev libsimdjson-dev catch2 libsodium-dev)
if [[ "${1:-}" == "--test" ]]; then
  packages+=(python3 python3-jsonschema python3-yaml python3-numpy python3-pandas python3-venv python3-pip clang-14 libclang-rt-14-dev yamllint shellcheck chromium openssl xz-utils)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: the CUDA toolkit (nvcc, cuBLASLt) is required; install CUDA 13 and put nvcc on PATH" >&2
  exit 1
fi
