#include "lib/importers/external/source_run.hpp"

#include <fmt/format.h>

#include "lib/attest/run_subjects.hpp"
#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"

namespace kibench::importers::external {
namespace fs = std::filesystem;

namespace {

ManifestFile read_manifest(const fs::path &path, std::string_view kind) {
  ManifestFile file;
  file.path = path;
  file.text = attest::read_file_bytes(path);
  file.manifest = json::parse(file.text, path.string());
  const std::string found = json::string_at(file.manifest, "kind");
  if (found != kind)
    throw InputError(fmt::format("{}: $.kind: expected {:?}, got {:?}", path.string(), kind, found));
  file.digest = manifest_digest(file.manifest);
  return file;
}

} // namespace

SourceRun read_source_run(const fs::path &directory) {
  std::error_code error;
  if (!fs::is_directory(directory, error))
    throw InputError(
        fmt::format("{}: not a directory (expected a `kibench run` output directory)", directory.string()));
  SourceRun run;
  run.directory = directory;
  run.operation = read_manifest(directory / "operation.json", "OperationSpec");
  run.workload = read_manifest(directory / "workload.json", "WorkloadCase");
  run.environment = read_manifest(directory / "environment.json", "ExecutionEnvironment");
  run.parsed_workload = workload_from_json(run.workload.manifest, run.operation.manifest, run.workload.path);

  const fs::path summary_path = directory / "summary.json";
  const json::Value summary = json::parse_file(summary_path);
  const std::string *oracle = json::find_string_at(summary, "oracle");
  if (oracle == nullptr)
    throw InputError(fmt::format("{}: $.oracle: missing (not a kibench run summary)", summary_path.string()));
  run.oracle = *oracle;
  if (const json::Value *loss = summary.find("oracleLoss"); loss != nullptr && loss->is_number())
    run.oracle_loss = loss->as_number();
  return run;
}

std::optional<ManifestFile> read_implementation_revision(const SourceRun &run, const std::string &name) {
  const fs::path path = run.directory / fmt::format("implementation.{}.json", name);
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return std::nullopt;
  return read_manifest(path, "ImplementationRevision");
}

} // namespace kibench::importers::external
