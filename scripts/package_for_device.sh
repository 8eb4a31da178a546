#!/usr/bin/env bash
# Copies a build's binaries and the Debian shared libraries they load (fmt,
# simdjson, sodium) into one folder, so they run on a GPU machine that has
# the CUDA runtime and driver but not those packages:
#   scripts/package_for_device.sh [BUILD_DIR] [DEST]
#   DEST/kibench, DEST/kibench_tests, DEST/kibench_dev (the dev/ studies),
#   DEST/libkibench_capi.so, DEST/kibench_capi_test, DEST/libkibench_example_plugin.so,
#   DEST/libkibench_test_plugin_untrusted_gpu.so (test_gpu_untrusted_plugin.cpp),
#   DEST/lib/*.so.*  (their RPATH is $ORIGIN/lib)
#   DEST/share/kibench/  the data (workloads, KernelIndex tables, LICENSE,
#                        NOTICE), where kibench and libkibench_capi.so look
#                        beside themselves (lib/io/data_dir.hpp): a carried
#                        build runs from any folder
# A DEST ending in .tar.xz is that folder as one xz archive instead (about a
# quarter of the size: the binaries' device code compresses well), for a
# machine that takes a limited number of bytes; unpack it there with
#   tar -xJf DEST -C DIR      (DIR/gpu/kibench, ...), or where xz is missing
#   python3 -c "import tarfile; tarfile.open('DEST').extractall('DIR', filter='data')"
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
dest="${2:-$root/.carry/gpu}"
if [[ "$dest" == *.tar.xz ]]; then
  archive="$(cd "$(dirname "$dest")" && pwd)/$(basename "$dest")"
  staging="$(mktemp -d)"
  trap 'rm -rf "$staging"' EXIT
  "${BASH_SOURCE[0]}" "$build" "$staging/gpu" > /dev/null
  rm -f "$archive"
  tar -C "$staging" -cJf "$archive" gpu
  du -h "$archive"
  exit 0
fi
rm -rf "$dest"
mkdir -p "$dest/lib"
cp "$build/kibench" "$dest/"
cp "$build/test/kibench_tests" "$build/dev/kibench_dev" "$dest/"
cp "$build/libkibench_capi.so" "$build/test/kibench_capi_test" "$dest/"
cp "$build/examples/plugin/libkibench_example_plugin.so" "$dest/"
cp "$build/test/plugins/libkibench_test_plugin_untrusted_gpu.so" "$dest/"
mkdir -p "$dest/share"
cp -r "$build/share/kibench" "$dest/share/"
for binary in "$dest/kibench" "$dest/kibench_tests" "$dest/kibench_dev" "$dest/libkibench_capi.so"; do
  ldd "$binary" | awk '/=> \// {print $3}' | while read -r library; do
    case "$(basename "$library")" in
      libfmt.so* | libsimdjson.so* | libsodium.so*)
        # Once: libkibench_capi.so already finds them in DEST/lib.
        [ -e "$dest/lib/$(basename "$library")" ] || cp -L "$library" "$dest/lib/" ;;
    esac
  done
done
du -sh "$dest"
