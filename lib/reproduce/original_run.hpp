// The records `kibench reproduce` is given, read: every BenchmarkRun of each
// RECORD argument with the manifests it references, found by digest in the
// record itself (a run directory, an imported record's directory, a file of
// manifests such as a KernelIndex record page's {run, protocol,
// environment}) or, for a Liger-Kernel record, in KernelIndex's curated
// tables (workloads/kernelindex/liger/).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lib/compare/compared_run.hpp"
#include "lib/json/value.hpp"

namespace kibench::reproduce {

// A manifest a run references, and where it was found.
struct Referenced {
  json::Value manifest;
  std::string digest;
  std::string label; // "runs/x/workload.json", "seed.json#protocol", "curated distill_jsd_loss/torch"
  std::filesystem::path file; // empty when curated
  std::string curated_key;    // the curated table's key ("distill_jsd_loss/torch", "full"); empty otherwise
};

struct OriginalRun {
  std::string label; // where the run was read: "runs/x/run.cpu-reference.json", "seed-record.json#run"
  std::filesystem::path file;
  std::string digest; // its identity digest: the idOrDigest an attestation is posted to
  std::string name;   // metadata.name
  json::Value run;
  // What spec.workloadDigest, protocolDigest, environmentDigest and
  // implementationDigest name, where the record or the curated tables hold it.
  std::optional<Referenced> workload, protocol, environment, implementation;
  std::optional<double> median_ns; // the raw samples' median, else the median it reports
  std::optional<compare::RawSeries> raw;
  std::string raw_missing; // why there are no raw samples (empty when there are)
};

// Every BenchmarkRun of every RECORD, in the order given. InputError (exit
// 2) for a path that does not exist or holds no BenchmarkRun, a run without
// a status or a median, a malformed raw samples file; CheckFailed (exit 1)
// for raw samples whose sha256 is not the one the run names.
std::vector<OriginalRun> read_originals(const std::vector<std::filesystem::path> &records);

} // namespace kibench::reproduce
