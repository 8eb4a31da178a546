// The `kibench run` directory an external result was checked against
// (RUN_DIR): its operation, workload and environment, read verbatim so the
// import can copy them byte for byte, and what its summary says about the
// oracle.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "lib/json/value.hpp"
#include "lib/workload/workload.hpp"

namespace kibench::importers::external {

// One manifest file: its bytes, parsed, and its identity digest.
struct ManifestFile {
  std::filesystem::path path;
  std::string text;
  json::Value manifest;
  std::string digest;
};

struct SourceRun {
  std::filesystem::path directory;
  ManifestFile operation, workload, environment;
  Workload parsed_workload;          // validated as `kibench run` validates it
  std::string oracle;                // summary.json "oracle"
  std::optional<double> oracle_loss; // summary.json "oracleLoss", when a number
};

// InputError naming the file when one is missing, unreadable, not the kind
// expected, or the workload does not validate against the operation.
SourceRun read_source_run(const std::filesystem::path &directory);

// RUN_DIR/implementation.<name>.json as a manifest file; nullopt when there
// is no such file.
std::optional<ManifestFile> read_implementation_revision(const SourceRun &run, const std::string &name);

} // namespace kibench::importers::external
