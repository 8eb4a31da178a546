// Where a [gpu] test finds what the build made when the build travelled to
// a GPU machine (scripts/package_for_device.sh): beside the test binary
// there, else where the build put it; and workloads from the checkout the
// tests run in (the repository root), else the source tree.
#pragma once

#include <filesystem>

#include "test/source_tree.hpp"

namespace kibench::test {

inline std::filesystem::path beside_tests(const std::filesystem::path &built) {
  const std::filesystem::path here =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / built.filename();
  return std::filesystem::exists(here) ? here : built;
}

// `name` under workloads/.
inline std::filesystem::path workload_file(const std::filesystem::path &name) {
  const std::filesystem::path local = std::filesystem::path("workloads") / name;
  return std::filesystem::exists(local) ? local : source_dir() / "workloads" / name;
}

} // namespace kibench::test
