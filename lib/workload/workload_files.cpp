// Finding workload files on disk: the default workloads folder and the
// workload files under a folder.
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "lib/error.hpp"
#include "lib/io/data_dir.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {
namespace fs = std::filesystem;

std::vector<fs::path> list_workload_files(const fs::path &dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error))
    throw InputError(fmt::format("{}: not a directory of workloads", dir.string()));

  std::vector<fs::path> files;
  auto it = fs::recursive_directory_iterator(dir, fs::directory_options::follow_directory_symlink);
  for (; it != fs::recursive_directory_iterator(); ++it) {
    // OperationSpecs live in operations/ folders, and KernelIndex's curated
    // manifests (the Liger import's tables) in kernelindex/: neither are
    // workloads.
    if (it->is_directory() &&
        (it->path().filename() == "operations" || it->path().filename() == "kernelindex")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

fs::path default_workloads_dir() {
  if (const char *env = std::getenv("KIBENCH_WORKLOADS"); env != nullptr && *env != '\0')
    return fs::path(env);
  std::error_code error;
  if (fs::is_directory("workloads", error)) return fs::path("workloads");
  if (const auto data = io::data_directory()) return *data / "workloads";
  // None found: where an installed kibench keeps them, so that the error
  // names a folder worth looking at.
  const auto candidates = io::data_directory_candidates();
  return candidates.empty() ? fs::path("workloads") : candidates.back() / "workloads";
}

} // namespace kibench
