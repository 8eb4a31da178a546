// Where the tests find the source tree (workloads/, test/data/, scripts) at
// run time: $KIBENCH_SOURCE_DIR (ctest sets it), else the nearest folder at
// or above the working directory that is a kibench tree, else the tree the
// build was configured from (KIBENCH_CONFIGURED_SOURCE_DIR), as a last resort.
// The library itself never looks here: it finds its data beside the binary
// (lib/io/data_dir.hpp).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>

#include <unistd.h>

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

// The dated run set `set` (docs/evidence/<set>.tar.xz, the archive
// scripts/evidence.sh packs) unpacked on first use into a temporary folder
// the process removes at exit; returns docs/runs/<set>/ there.
inline std::filesystem::path evidence_set(const std::string &set) {
  struct Unpacked {
    std::filesystem::path root;
    std::map<std::string, std::filesystem::path> sets;
    ~Unpacked() {
      std::error_code ignored;
      if (!root.empty()) std::filesystem::remove_all(root, ignored);
    }
  };
  static std::mutex mutex;
  static Unpacked unpacked;
  const std::lock_guard lock(mutex);
  if (const auto found = unpacked.sets.find(set); found != unpacked.sets.end()) return found->second;
  const std::filesystem::path archive = source_dir() / "docs" / "evidence" / (set + ".tar.xz");
  if (!std::filesystem::is_regular_file(archive))
    throw std::runtime_error(archive.string() + ": no such evidence archive");
  if (unpacked.root.empty()) {
    unpacked.root = std::filesystem::temp_directory_path() / ("kibench-evidence-" + std::to_string(::getpid()));
    std::filesystem::create_directories(unpacked.root);
  }
  const std::string command = "tar -xJf '" + archive.string() + "' -C '" + unpacked.root.string() + "'";
  if (std::system(command.c_str()) != 0) throw std::runtime_error(command + ": failed");
  return unpacked.sets[set] = unpacked.root / set;
}

} // namespace kibench::test
