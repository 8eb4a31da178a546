// `kibench import external RESULT --like RUN_DIR`: the samples an external
// harness took with kibench's measurement method (through its C API)
// as one run directory that reads like a `kibench run` one: the run
// directory's operation, workload and environment, a BenchmarkProtocol of
// the same family under the external harness's name, and per implementation
// its revision, run and raw samples (docs/import.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lib/run/outcome.hpp"

namespace kibench::importers::external {

struct ImportedRun {
  ImplementationOutcome outcome; // facts, statistics and run digest as written
  bool kibench_implementation = false;
  std::string comparison_key;
};

struct ExternalImport {
  std::string source; // RESULT as named
  std::filesystem::path directory;
  std::string harness_name, harness_version;
  std::string invocation;
  std::string workload_name;
  std::string protocol_digest;
  std::vector<ImportedRun> runs;

  // Every run passed its correctness check.
  [[nodiscard]] bool all_passed() const;
};

// The name of the directory an import writes under its output root:
// "<invocation, ':' as '-'>-<workload>-<pass>-side-by-side".
std::string import_directory_name(const std::string &invocation, const std::string &workload_name, Pass pass);

// Reads and checks everything first; any problem is an InputError naming
// the file and the field, and nothing is written. Then writes
// `<out>/<import_directory_name>/` whole (staged, renamed into place), or
// `<name>-2`, `<name>-3`, ... when that name is taken (ExternalImport's
// directory says which).
ExternalImport import_external(const std::filesystem::path &result_file, const std::filesystem::path &run_dir,
                               const std::filesystem::path &out);

} // namespace kibench::importers::external
