// Where kibench's data is: workloads/ (with the Liger import's KernelIndex
// tables in workloads/kernelindex/), LICENSE and NOTICE. It is found
// relative to the code that runs, so that an installed or carried build
// works from any folder: an installed tree keeps it in
// <prefix>/share/kibench beside <prefix>/bin and <prefix>/lib; a build tree
// (CMake mirrors the source's data into <build>/share/kibench) and a build
// carried by scripts/package_for_device.sh keep it in share/kibench beside
// the binaries. The overrides ($KIBENCH_WORKLOADS, $KIBENCH_LIGER_DATA,
// ./workloads) are applied by the callers (lib/workload, lib/importers).
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

namespace kibench::io {

// The folder of the module this code is linked into: the executable
// (kibench, a test binary) or libkibench_capi.so when Python loads it,
// symlinks resolved. Empty when the system cannot say.
[[nodiscard]] const std::filesystem::path &module_directory();

// Where the data is looked for, in order: <module>/share/kibench (a build
// tree or a carried build), <module>/../share/kibench (an installed tree;
// also a test binary one folder down a build tree).
[[nodiscard]] std::vector<std::filesystem::path> data_directory_candidates();

// The first candidate that holds workloads/, if any.
[[nodiscard]] std::optional<std::filesystem::path> data_directory();

} // namespace kibench::io
