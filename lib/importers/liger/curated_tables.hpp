// The manifests KernelIndex curated for Liger-Kernel's benchmarks, used
// verbatim so imported records carry KernelIndex's digests: an OperationSpec
// per kernel, a BenchmarkProtocol per timed pass, an ImplementationRevision
// per (kernel, provider), a SoftwareProject per provider and an
// ExecutionEnvironment per CSV gpu_name. data/README.md says where each
// file comes from.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "lib/json/value.hpp"

namespace kibench::importers::liger {

struct CuratedManifest {
  json::Value manifest; // with its metadata, as curated
  std::string digest;   // identity digest
};

class CuratedTables {
public:
  // Reads operation-<kernel>.json for each kernel, protocols-by-mode.json,
  // implementations-by-kernel-provider.json, projects-by-provider.json and
  // every environments-*.json of `directory`. Throws InputError naming the
  // file and entry when one is missing, is not the expected kind, names a
  // GPU twice, or when an implementation's operation.specDigest is not its
  // kernel's OperationSpec digest.
  static CuratedTables load(const std::filesystem::path &directory,
                            std::span<const std::string_view> kernels);

  // $KIBENCH_LIGER_DATA when set, else kernelindex/liger of the workloads
  // folder in use (default_workloads_dir) when it has one, else of
  // kibench's data folder (lib/io/data_dir.hpp).
  static std::filesystem::path default_directory();

  // nullptr when not curated.
  [[nodiscard]] const CuratedManifest *operation(std::string_view kernel) const;
  [[nodiscard]] const CuratedManifest *protocol(std::string_view mode) const;
  [[nodiscard]] const CuratedManifest *implementation(std::string_view kernel,
                                                      std::string_view provider) const;
  [[nodiscard]] const CuratedManifest *project(std::string_view provider) const;
  [[nodiscard]] const CuratedManifest *environment(std::string_view gpu_name) const;
  // The curated manifest of `kind` (OperationSpec, BenchmarkProtocol,
  // ImplementationRevision, SoftwareProject, ExecutionEnvironment) whose
  // identity digest is `digest`, with its key: the kernel, the mode,
  // "<kernel>/<provider>", the provider or the gpu_name. nullopt when none
  // is (what `kibench reproduce` resolves a record's digests with).
  struct Keyed {
    std::string key;
    const CuratedManifest *manifest = nullptr;
  };
  [[nodiscard]] std::optional<Keyed> find_by_digest(std::string_view kind, std::string_view digest) const;
  // The CSV gpu_name curated for an environment digest ("" when none is):
  // what `kibench export --format liger-csv` writes for an imported row.
  [[nodiscard]] std::string gpu_name_of(std::string_view environment_digest) const;

private:
  using Table = std::map<std::string, CuratedManifest, std::less<>>;
  static const CuratedManifest *lookup(const Table &table, std::string_view key);

  Table operations_;
  Table protocols_;
  Table implementations_;
  Table projects_;
  Table environments_;
};

} // namespace kibench::importers::liger
