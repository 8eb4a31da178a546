// Where the tests find the source tree (workloads/, test/data/, scripts) at
// run time: $KIBENCH_SOURCE_DIR (ctest sets it), else the nearest folder at
// or above the working directory that is a kibench tree, else the tree the
// build was configured from (KIBENCH_CONFIGURED_SOURCE_DIR), as a last resort.
// The library itself never looks here: it finds its data beside the binary
// (lib/io/data_dir.hpp).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace kibench::test {

// A kibench tree: its workloads, its test data and the C API's header.
inline bool is_source_tree(const std::filesystem::path &dir) {
  std::error_code error;
  return std::filesystem::is_directory(dir / "workloads", error) &&
         std::filesystem::is_directory(dir / "test" / "data", error) &&
         std::filesystem::is_regular_file(dir / "include" / "kibench" / "kibench.h", error);
}

inline std::filesystem::path find_source_dir() {
  if (const char *env = std::getenv("KIBENCH_SOURCE_DIR"); env != nullptr && *env != '\0')
    return std::filesystem::path(env);
  std::error_code error;
  std::filesystem::path dir = std::filesystem::current_path(error);
  for (; !error && !dir.empty(); dir = dir.parent_path()) {
    if (is_source_tree(dir)) return dir;
    if (dir == dir.parent_path()) break;
  }
  return std::filesystem::path(KIBENCH_CONFIGURED_SOURCE_DIR);
}

inline const std::filesystem::path &source_dir() {
  static const std::filesystem::path dir = find_source_dir();
  return dir;
}

inline const std::filesystem::path &test_data_dir() {
  static const std::filesystem::path dir = source_dir() / "test" / "data";
  return dir;
}

} // namespace kibench::test
