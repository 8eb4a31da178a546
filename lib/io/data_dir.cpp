#include "lib/io/data_dir.hpp"

#include <dlfcn.h>
#include <link.h>

namespace kibench::io {
namespace fs = std::filesystem;
namespace {

// An address inside this module: dladdr names the module that maps it.
const char kAnchor = 0;

fs::path find_module_directory() {
  std::error_code error;
  fs::path file;
  Dl_info info{};
  link_map *map = nullptr;
  // The main program's link map has an empty name (dladdr would then give
  // argv[0], which need not be a path); a shared library's is the path it
  // was loaded from.
  if (dladdr1(&kAnchor, &info, reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP) != 0 && map != nullptr &&
      map->l_name != nullptr && map->l_name[0] != '\0')
    file = map->l_name;
  else
    file = fs::read_symlink("/proc/self/exe", error);
  if (file.empty() || error) return {};
  const fs::path resolved = fs::weakly_canonical(fs::absolute(file, error), error);
  return error ? fs::path{} : resolved.parent_path();
}

} // namespace

const fs::path &module_directory() {
  static const fs::path directory = find_module_directory();
  return directory;
}

std::vector<fs::path> data_directory_candidates() {
  const fs::path &module = module_directory();
  if (module.empty()) return {};
  return {module / "share" / "kibench", (module.parent_path() / "share" / "kibench").lexically_normal()};
}

std::optional<fs::path> data_directory() {
  for (const fs::path &candidate : data_directory_candidates()) {
    std::error_code error;
    if (fs::is_directory(candidate / "workloads", error)) return candidate;
  }
  return std::nullopt;
}

} // namespace kibench::io
