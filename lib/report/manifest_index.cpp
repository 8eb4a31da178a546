#include "lib/report/manifest_index.hpp"

#include <set>

namespace kibench::report {

ManifestIndex::ManifestIndex(const std::vector<compare::ComparedRun> &runs) {
  // compare has read (and checked) all of these already; files are visited
  // once however many runs name them.
  std::set<std::filesystem::path> files;
  for (const auto &run : runs) files.insert(run.file);
  for (const auto &file : files) set_.add_file(file);
  for (const auto &file : files) set_.add_beside(file);
  for (std::size_t i = 0; i < set_.entries().size(); ++i) by_digest_.emplace(set_.entries()[i].digest, i);
}

const json::Value *ManifestIndex::find(std::string_view digest, std::string_view kind) const {
  for (auto [it, end] = by_digest_.equal_range(digest); it != end; ++it) {
    const ManifestEntry &entry = set_.entries()[it->second];
    if (entry.kind == kind) return &entry.manifest;
  }
  return nullptr;
}

const json::Value *ManifestIndex::find(std::string_view digest, std::string_view kind,
                                       const compare::ComparedRun &run) const {
  for (auto [it, end] = by_digest_.equal_range(digest); it != end; ++it) {
    const ManifestEntry &entry = set_.entries()[it->second];
    if (entry.kind == kind && entry.file.parent_path() == run.file.parent_path()) return &entry.manifest;
  }
  return find(digest, kind);
}

} // namespace kibench::report
