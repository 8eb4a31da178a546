#include "importers/record_writer.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "io/atomic_write.hpp"
#include "json/canonical.hpp"

namespace kibench::importers {
namespace fs = std::filesystem;

void check_targets_free(const fs::path &root, const std::vector<RecordDirectory> &records) {
  std::error_code error;
  if (fs::exists(root, error) && !fs::is_directory(root, error))
    throw InputError(fmt::format("{}: exists and is not a directory", root.string()));
  for (const RecordDirectory &record : records) {
    const fs::path target = root / record.name;
    if (fs::exists(fs::symlink_status(target, error)))
      throw InputError(
          fmt::format("{}: already exists (an import never overwrites; remove it or choose another "
                      "--out)",
                      target.string()));
  }
}

void write_record_directories(const fs::path &root, const std::vector<RecordDirectory> &records) {
  check_targets_free(root, records);
  std::error_code error;
  const bool root_existed = fs::exists(root, error);
  // Placed directories, removed again if a later one fails; they did not
  // exist before this call, so nothing of anyone else's is touched.
  std::vector<fs::path> placed;
  try {
    for (const RecordDirectory &record : records) {
      io::StagedDirectory directory(root / record.name);
      for (const auto &[file, manifest] : record.files) directory.write(file, json::pretty(manifest) + "\n");
      directory.commit();
      placed.push_back(directory.final_path());
    }
  } catch (...) {
    std::error_code ignored;
    for (const fs::path &path : placed) fs::remove_all(path, ignored);
    if (!root_existed) fs::remove(root, ignored); // only if empty: never someone else's files
    throw;
  }
}

} // namespace kibench::importers
