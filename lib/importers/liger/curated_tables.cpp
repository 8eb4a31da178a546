#include "lib/importers/liger/curated_tables.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "lib/digest/digest.hpp"
#include "lib/digest/manifest_set.hpp"
#include "lib/error.hpp"
#include "lib/io/data_dir.hpp"
#include "lib/json/parse.hpp"
#include "lib/workload/workload.hpp"

namespace kibench::importers::liger {
namespace fs = std::filesystem;
namespace {

CuratedManifest checked_manifest(json::Value manifest, std::string_view kind, const std::string &where) {
  if (!is_manifest(manifest) || manifest.find("kind")->as_string() != kind)
    throw InputError(fmt::format("{}: expected a {} manifest", where, kind));
  std::string digest;
  try {
    digest = manifest_digest(manifest);
  } catch (const InputError &e) {
    throw InputError(fmt::format("{}: {}", where, e.what()));
  }
  return CuratedManifest{std::move(manifest), std::move(digest)};
}

// A file whose members are manifests of one kind, keyed as the file says.
void read_keyed_table(const fs::path &file, std::string_view kind,
                      std::map<std::string, CuratedManifest, std::less<>> &table) {
  json::Value document = json::parse_file(file, io::file_kinds::curated_manifest);
  if (!document.is_object())
    throw InputError(fmt::format("{}: expected an object of {} manifests", file.string(), kind));
  for (const auto &[key, manifest] : document.as_object()) {
    const std::string where = fmt::format("{}: \"{}\"", file.string(), key);
    if (table.contains(key)) throw InputError(fmt::format("{}: curated twice", where));
    table.emplace(key, checked_manifest(manifest, kind, where));
  }
}

} // namespace

CuratedTables CuratedTables::load(const fs::path &directory, std::span<const std::string_view> kernels) {
  CuratedTables tables;
  for (const std::string_view kernel : kernels) {
    const fs::path file = directory / fmt::format("operation-{}.json", kernel);
    tables.operations_.emplace(std::string(kernel),
                               checked_manifest(json::parse_file(file, io::file_kinds::curated_manifest),
                                                "OperationSpec", file.string()));
  }
  read_keyed_table(directory / "protocols-by-mode.json", "BenchmarkProtocol", tables.protocols_);
  read_keyed_table(directory / "projects-by-provider.json", "SoftwareProject", tables.projects_);
  const fs::path implementations_file = directory / "implementations-by-kernel-provider.json";
  read_keyed_table(implementations_file, "ImplementationRevision", tables.implementations_);

  // KernelIndex's own table plus the GPUs its import rules name in prose.
  std::vector<fs::path> environment_files;
  std::error_code error;
  for (const auto &entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("environments-") && entry.path().extension() == ".json")
      environment_files.push_back(entry.path());
  }
  if (error) throw InputError(fmt::format("{}: cannot list: {}", directory.string(), error.message()));
  std::sort(environment_files.begin(), environment_files.end());
  if (environment_files.empty())
    throw InputError(
        fmt::format("{}: no environments-*.json (ExecutionEnvironment per gpu_name)", directory.string()));
  for (const fs::path &file : environment_files)
    read_keyed_table(file, "ExecutionEnvironment", tables.environments_);

  // An implementation must implement the operation its kernel's rows bind,
  // or every run importing it would reference a foreign OperationSpec.
  for (const auto &[key, implementation] : tables.implementations_) {
    const std::string kernel = key.substr(0, key.find('/'));
    const CuratedManifest *operation = tables.operation(kernel);
    if (operation == nullptr) continue;
    const json::Value *spec_digest = implementation.manifest.find("spec")->find("operation");
    spec_digest = spec_digest ? spec_digest->find("specDigest") : nullptr;
    if (spec_digest == nullptr || !spec_digest->is_string() ||
        spec_digest->as_string() != operation->digest) {
      throw InputError(
          fmt::format("{}: \"{}\": spec.operation.specDigest is not the digest of operation-{}.json ({})",
                      implementations_file.string(), key, kernel, operation->digest));
    }
  }
  return tables;
}

fs::path CuratedTables::default_directory() {
  if (const char *env = std::getenv("KIBENCH_LIGER_DATA"); env != nullptr && *env != '\0')
    return fs::path(env);
  // The tables are data kibench ships: those of the workloads folder in
  // use ($KIBENCH_WORKLOADS, ./workloads) when it has them, else the data
  // folder's.
  const fs::path tables = fs::path("kernelindex") / "liger";
  std::error_code error;
  if (const fs::path in_use = default_workloads_dir() / tables; fs::is_directory(in_use, error))
    return in_use;
  if (const auto data = io::data_directory()) return *data / "workloads" / tables;
  return default_workloads_dir() / tables;
}

const CuratedManifest *CuratedTables::lookup(const Table &table, std::string_view key) {
  const auto it = table.find(key);
  return it == table.end() ? nullptr : &it->second;
}

const CuratedManifest *CuratedTables::operation(std::string_view kernel) const {
  return lookup(operations_, kernel);
}
const CuratedManifest *CuratedTables::protocol(std::string_view mode) const {
  return lookup(protocols_, mode);
}
const CuratedManifest *CuratedTables::implementation(std::string_view kernel,
                                                     std::string_view provider) const {
  return lookup(implementations_, fmt::format("{}/{}", kernel, provider));
}
const CuratedManifest *CuratedTables::project(std::string_view provider) const {
  return lookup(projects_, provider);
}
const CuratedManifest *CuratedTables::environment(std::string_view gpu_name) const {
  return lookup(environments_, gpu_name);
}

std::string CuratedTables::gpu_name_of(std::string_view environment_digest) const {
  for (const auto &[gpu_name, curated] : environments_) {
    if (curated.digest == environment_digest) return gpu_name;
  }
  return {};
}

std::optional<CuratedTables::Keyed> CuratedTables::find_by_digest(std::string_view kind,
                                                                 std::string_view digest) const {
  const Table *table = kind == "OperationSpec"            ? &operations_
                       : kind == "BenchmarkProtocol"      ? &protocols_
                       : kind == "ImplementationRevision" ? &implementations_
                       : kind == "SoftwareProject"        ? &projects_
                       : kind == "ExecutionEnvironment"   ? &environments_
                                                          : nullptr;
  if (table == nullptr) return std::nullopt;
  for (const auto &[key, curated] : *table)
    if (curated.digest == digest) return Keyed{key, &curated};
  return std::nullopt;
}

} // namespace kibench::importers::liger
