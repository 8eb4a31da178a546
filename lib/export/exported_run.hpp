// The model every `kibench export` format prints: each BenchmarkRun given,
// read as compare reads it (every digest reference resolved, raw samples
// checked against their digest), with the manifests it references.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "lib/compare/compared_run.hpp"
#include "lib/json/value.hpp"

namespace kibench::exports {

struct ExportedRun {
  compare::ComparedRun compared; // identity, status, digests, comparison key, raw samples
  json::Value run;               // the BenchmarkRun manifest
  json::Value workload, implementation, protocol, environment;
  // The OperationSpec the workload names, when it lies beside the run (a
  // `kibench run` or `kibench import` directory always has it).
  std::optional<json::Value> operation;
  // A SoftwareProject beside the run (an imported record's project.json).
  std::optional<json::Value> project;
};

// The runs of the RUN arguments (compare's rules: a run file, a run
// directory, a directory of them), in the order given. InputError or
// CheckFailed as compare raises them.
std::vector<ExportedRun> load_exported_runs(const std::vector<std::filesystem::path> &arguments);

} // namespace kibench::exports
