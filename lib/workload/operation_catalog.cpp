#include "lib/workload/operation_catalog.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/json/parse.hpp"

namespace kibench::detail {
namespace fs = std::filesystem;

namespace {

// Absolute and free of "." / ".." so that "is inside the root" is a prefix
// test on path components.
fs::path normalized(const fs::path &path) {
  std::error_code error;
  fs::path absolute = fs::weakly_canonical(fs::absolute(path), error);
  return error ? fs::absolute(path).lexically_normal() : absolute;
}

bool is_within(const fs::path &path, const fs::path &root) {
  const auto mismatch = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return mismatch.first == root.end();
}

} // namespace

std::vector<fs::path> operation_search_dirs(const fs::path &workload_file, const fs::path &workloads_root) {
  const fs::path root = normalized(workloads_root);
  fs::path dir = normalized(workload_file).parent_path();

  std::vector<fs::path> candidates{dir / "operations"};
  if (is_within(dir, root)) {
    while (dir != root && dir.has_parent_path() && dir.parent_path() != dir) {
      dir = dir.parent_path();
      candidates.push_back(dir / "operations");
    }
  }
  candidates.push_back(root / "operations");

  std::vector<fs::path> dirs;
  for (const fs::path &candidate : candidates) {
    std::error_code error;
    if (fs::is_directory(candidate, error) && std::find(dirs.begin(), dirs.end(), candidate) == dirs.end()) {
      dirs.push_back(candidate);
    }
  }
  return dirs;
}

std::optional<json::Value> find_operation(std::string_view digest, const std::vector<fs::path> &dirs) {
  for (const fs::path &dir : dirs) {
    std::vector<fs::path> files;
    for (const fs::directory_entry &entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path &file : files) {
      json::Value manifest = json::parse_file(file, io::file_kinds::workload);
      const json::Value *kind = manifest.find("kind");
      if (kind == nullptr || !kind->is_string() || kind->as_string() != "OperationSpec") continue;
      std::string file_digest;
      try {
        file_digest = manifest_digest(manifest);
      } catch (const InputError &e) {
        throw InputError(fmt::format("{}: {}", file.string(), e.what()));
      }
      if (file_digest == digest) return manifest;
    }
  }
  return std::nullopt;
}

} // namespace kibench::detail
