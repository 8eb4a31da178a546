#include "lib/export/exported_run.hpp"

#include <set>

#include <fmt/format.h>

#include "lib/compare/run_loader.hpp"
#include "lib/digest/manifest_set.hpp"
#include "lib/error.hpp"
#include "lib/json/path.hpp"

namespace kibench::exports {
namespace {

namespace fs = std::filesystem;

// The manifest of `kind` and `digest`, preferring the one in `folder`
// (two files may hold one identity with other metadata).
const ManifestEntry *find(const ManifestSet &set, std::string_view kind, std::string_view digest,
                          const fs::path &folder) {
  const ManifestEntry *found = nullptr;
  for (const ManifestEntry *entry : set.of_kind(kind)) {
    if (entry->digest != digest) continue;
    if (entry->file.parent_path() == folder) return entry;
    if (found == nullptr) found = entry;
  }
  return found;
}

const json::Value &required(const ManifestSet &set, std::string_view kind, std::string_view digest,
                            const compare::ComparedRun &run) {
  const ManifestEntry *entry = find(set, kind, digest, run.file.parent_path());
  // compare resolved every reference already: absence here is a bug.
  if (entry == nullptr)
    throw std::logic_error(fmt::format("{}: {} {} vanished after it was resolved", run.label, kind, digest));
  return entry->manifest;
}

} // namespace

std::vector<ExportedRun> load_exported_runs(const std::vector<fs::path> &arguments) {
  std::vector<compare::ComparedRun> runs = compare::load_runs(arguments);
  ManifestSet set;
  std::set<fs::path> files;
  for (const auto &run : runs) files.insert(run.file);
  for (const auto &file : files) set.add_file(file);
  for (const auto &file : files) set.add_beside(file);

  std::vector<ExportedRun> out;
  out.reserve(runs.size());
  for (auto &compared : runs) {
    ExportedRun exported;
    exported.run = required(set, "BenchmarkRun", compared.digest, compared);
    exported.workload = required(set, "WorkloadCase", compared.workload_digest, compared);
    exported.implementation =
        required(set, "ImplementationRevision", compared.implementation_digest, compared);
    exported.protocol = compared.protocol;
    exported.environment = compared.environment;
    const fs::path folder = compared.file.parent_path();
    if (const ManifestEntry *operation = find(set, "OperationSpec", compared.operation_digest, folder))
      exported.operation = operation->manifest;
    for (const ManifestEntry *project : set.of_kind("SoftwareProject")) {
      if (project->file.parent_path() == folder) {
        exported.project = project->manifest;
        break;
      }
    }
    exported.compared = std::move(compared);
    out.push_back(std::move(exported));
  }
  return out;
}

} // namespace kibench::exports
