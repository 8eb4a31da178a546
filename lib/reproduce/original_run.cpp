#include "lib/reproduce/original_run.hpp"

#include <map>
#include <memory>

#include <fmt/format.h>

#include "lib/compare/run_loader.hpp"
#include "lib/digest/manifest_set.hpp"
#include "lib/error.hpp"
#include "lib/importers/liger/curated_tables.hpp"
#include "lib/importers/liger/kernel_binding.hpp"
#include "lib/json/path.hpp"
#include "lib/stats/summary.hpp"

namespace kibench::reproduce {
namespace {

namespace fs = std::filesystem;
using importers::liger::CuratedTables;

// KernelIndex's curated tables, read once and only when a record names a
// manifest it does not hold.
class Curated {
public:
  const CuratedTables &tables() {
    if (!tables_)
      tables_ = std::make_unique<CuratedTables>(
          CuratedTables::load(CuratedTables::default_directory(), importers::liger::kJsdFamily));
    return *tables_;
  }

private:
  std::unique_ptr<CuratedTables> tables_;
};

class Resolver {
public:
  explicit Resolver(const ManifestSet &set) : set_(set) {
    for (const ManifestEntry &entry : set.entries()) by_digest_.emplace(entry.digest, &entry);
  }

  // The manifest of `kind` the run names at `field`: beside it, else, for a
  // record of Liger-Kernel's benchmarks, curated.
  std::optional<Referenced> find(const ManifestEntry &run, std::string_view field, std::string_view kind) {
    const std::string digest = json::string_at(run.manifest, field);
    if (digest.empty()) return std::nullopt;
    std::optional<Referenced> found;
    for (auto [it, end] = by_digest_.equal_range(digest); it != end && !found; ++it) {
      const ManifestEntry &entry = *it->second;
      if (entry.kind == kind) found = Referenced{entry.manifest, entry.digest, entry.label, entry.file, {}};
    }
    // A record of Liger-Kernel's benchmarks: its curated counterpart's key
    // ("distill_jsd_loss/torch") says what it is, and stands in for a
    // manifest the record does not hold (a record page's run alone).
    if (json::string_at(run.manifest, "spec.sourceNative.source") != "liger-kernel-bench") return found;
    const auto curated = curated_.tables().find_by_digest(kind, digest);
    if (!curated) return found;
    if (found) {
      found->curated_key = curated->key;
      return found;
    }
    return Referenced{curated->manifest->manifest,
                      curated->manifest->digest,
                      fmt::format("KernelIndex's curated {} \"{}\"", kind, curated->key),
                      {},
                      curated->key};
  }

private:
  const ManifestSet &set_;
  std::multimap<std::string, const ManifestEntry *> by_digest_;
  Curated curated_;
};

std::size_t count_runs(const ManifestSet &set, std::size_t from) {
  std::size_t runs = 0;
  for (std::size_t i = from; i < set.entries().size(); ++i) runs += set.entries()[i].kind == "BenchmarkRun";
  return runs;
}

OriginalRun read_original(const ManifestEntry &entry, Resolver &resolver) {
  OriginalRun out;
  out.label = entry.label;
  out.file = entry.file;
  out.digest = entry.digest;
  out.name = entry.name;
  out.run = entry.manifest;
  if (json::string_at(entry.manifest, "spec.status").empty())
    throw InputError(fmt::format("{}: spec.status: missing", entry.label));
  out.workload = resolver.find(entry, "spec.workloadDigest", "WorkloadCase");
  out.protocol = resolver.find(entry, "spec.protocolDigest", "BenchmarkProtocol");
  out.environment = resolver.find(entry, "spec.environmentDigest", "ExecutionEnvironment");
  out.implementation = resolver.find(entry, "spec.implementationDigest", "ImplementationRevision");
  out.raw = compare::raw_samples_of(entry, out.raw_missing);
  if (out.raw && !out.raw->samples.empty()) {
    out.median_ns = stats::median(out.raw->nanoseconds());
  } else if (const json::Value *median = json::member_at(entry.manifest, "spec.timing.latencyNs.median")) {
    out.median_ns = compare::latency_ns(*median);
    if (!out.median_ns || !(*out.median_ns > 0))
      throw InputError(fmt::format("{}: spec.timing.latencyNs.median: not a positive latency (integer ns or "
                                   "\"<number> ns|us|µs|ms|s\")",
                                   entry.label));
  }
  return out;
}

} // namespace

std::vector<OriginalRun> read_originals(const std::vector<fs::path> &records) {
  if (records.empty()) throw InputError("reproduce: no RECORD given");
  ManifestSet set;
  for (const fs::path &path : records) {
    const std::size_t before = set.entries().size();
    std::error_code error;
    if (fs::is_directory(path, error)) {
      set.add_directory(path);
    } else if (fs::exists(path, error)) {
      set.add_file(path);
    } else {
      throw InputError(fmt::format("{}: no such file or directory", path.string()));
    }
    if (count_runs(set, before) == 0)
      throw InputError(fmt::format("{}: no BenchmarkRun in it not read already (give a run directory, a "
                                   "run.<impl>.json, an imported record's directory or a record's manifest)",
                                   path.string()));
  }
  // The records' references, looked up beside each named file too.
  const std::size_t named = set.entries().size();
  for (const fs::path &path : records) {
    std::error_code error;
    if (!fs::is_directory(path, error)) set.add_beside(path);
  }
  Resolver resolver(set);
  std::vector<OriginalRun> originals;
  for (std::size_t i = 0; i < named; ++i) {
    const ManifestEntry &entry = set.entries()[i];
    if (entry.kind == "BenchmarkRun") originals.push_back(read_original(entry, resolver));
  }
  return originals;
}

} // namespace kibench::reproduce
