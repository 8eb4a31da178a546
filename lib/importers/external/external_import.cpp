#include "lib/importers/external/external_import.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "lib/correctness/correctness.hpp"
#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/harness/throttle.hpp"
#include "lib/importers/external/checked_outputs.hpp"
#include "lib/importers/external/external_result.hpp"
#include "lib/importers/external/external_revision.hpp"
#include "lib/importers/external/source_run.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/json/path.hpp"
#include "lib/manifest/protocol_manifest.hpp"
#include "lib/run/implementation_files.hpp"
#include "lib/run/outcome_summary.hpp"
#include "lib/run/run_directory_name.hpp"

namespace kibench::importers::external {
namespace fs = std::filesystem;

namespace {

// One implementation, checked and ready to write.
struct Prepared {
  ImplementationFacts facts;
  bool kibench_implementation = false;
  std::string revision_text;
  std::string revision_digest;
};

void check_digest(const ExternalResult &result, std::string_view field, const std::string &claimed,
                  const ManifestFile &file) {
  if (claimed != file.digest)
    throw InputError(fmt::format("{}: $.{}: {} is not the digest of {} ({})", result.source, field, claimed,
                                 file.path.string(), file.digest));
}

// The harness must have timed the workload's own inputs: every tensor of
// the workload, and nothing else.
void check_inputs(const ExternalResult &result, const SourceRun &run) {
  const json::Value *tensors = json::member_at(run.workload.manifest, "spec.tensors");
  std::vector<std::string> names;
  if (tensors != nullptr && tensors->is_object())
    for (const auto &[name, value] : tensors->as_object()) names.push_back(name);
  for (const InputFile &input : result.inputs) {
    if (std::find(names.begin(), names.end(), input.tensor) == names.end())
      throw InputError(fmt::format("{}: {}.tensor: {:?} is not a tensor of workload {} (its tensors: {})",
                                   result.source, input.path, input.tensor, run.parsed_workload.name,
                                   fmt::join(names, ", ")));
  }
  for (const std::string &name : names) {
    if (std::none_of(result.inputs.begin(), result.inputs.end(),
                     [&](const InputFile &input) { return input.tensor == name; }))
      throw InputError(fmt::format("{}: $.inputs: no entry for tensor {:?} of workload {}", result.source,
                                   name, run.parsed_workload.name));
  }
}

// The errors in the order kibench's check lists them, exactly the outputs
// it compares for this pass.
std::vector<ErrorStats> ordered_errors(const ExternalResult &result, const ImplementationEntry &entry,
                                       const std::vector<std::string> &expected) {
  for (std::size_t k = 0; k < entry.errors.size(); ++k) {
    if (std::find(expected.begin(), expected.end(), entry.errors[k].output) == expected.end())
      throw InputError(fmt::format("{}: {}: {:?} is not an output a {}-pass check compares (those are: {})",
                                   result.source, entry.error_paths[k], entry.errors[k].output,
                                   to_string(result.settings.pass), fmt::join(expected, ", ")));
  }
  std::vector<ErrorStats> ordered;
  for (const std::string &output : expected) {
    const auto it = std::find_if(entry.errors.begin(), entry.errors.end(),
                                 [&](const ErrorStats &e) { return e.output == output; });
    if (it == entry.errors.end())
      throw InputError(fmt::format("{}: {}.errors: no entry for output {:?} (a {}-pass check compares {})",
                                   result.source, entry.path, output, to_string(result.settings.pass),
                                   fmt::join(expected, ", ")));
    ordered.push_back(*it);
  }
  return ordered;
}

Prepared prepare(const ExternalResult &result, ImplementationEntry entry, const SourceRun &run) {
  Prepared p;
  p.kibench_implementation = entry.kibench_implementation;
  if (entry.kibench_implementation) {
    const auto revision = read_implementation_revision(run, entry.name);
    if (!revision)
      throw InputError(fmt::format("{}: {}.kibenchImplementation: true, but {} has no implementation.{}.json",
                                   result.source, entry.path, run.directory.string(), entry.name));
    p.revision_text = revision->text;
    p.revision_digest = revision->digest;
  } else {
    const json::Value revision = external_revision(entry, run.operation.digest);
    p.revision_text = json_file_text(revision);
    p.revision_digest = manifest_digest(revision);
  }

  ImplementationFacts &o = p.facts;
  o.name = entry.name;
  o.verdict =
      make_verdict(ordered_errors(result, entry, checked_outputs(run.parsed_workload, result.settings.pass)),
                   run.parsed_workload.correctness);
  o.status = status_of_check(o.verdict);
  o.measurement = std::move(entry.measurement);
  flag_throttled(o.measurement, result.settings.throttle_fraction);
  o.memory = entry.memory;
  o.loss = entry.loss.value_or(std::numeric_limits<double>::quiet_NaN());
  return p;
}

json::Value import_summary(const ExternalResult &result, const SourceRun &run,
                           const WorkloadOutcome &outcome) {
  json::Value summary = outcome_summary(outcome);
  json::Object &object = summary.as_object();
  // The oracle's loss is the run directory's; a summary without it says so
  // rather than inventing one.
  if (!run.oracle_loss) object.set("oracleLoss", nullptr);
  json::Array inputs;
  for (const InputFile &input : result.inputs)
    inputs.emplace_back(
        json::Object{{"tensor", input.tensor}, {"file", input.file}, {"sha256", input.sha256}});
  object.set("harness", json::Object{{"name", result.harness_name}, {"version", result.harness_version}});
  object.set("invocation", result.invocation);
  object.set("inputs", std::move(inputs));
  return summary;
}

} // namespace

bool ExternalImport::all_passed() const {
  return std::all_of(runs.begin(), runs.end(),
                     [](const ImportedRun &r) { return r.outcome.facts.status == RunStatus::passed; });
}

std::string import_directory_name(const std::string &invocation, const std::string &workload_name,
                                  Pass pass) {
  return run_directory_name(workload_name, pass, invocation) + "-side-by-side";
}

ExternalImport import_external(const fs::path &result_file, const fs::path &run_dir, const fs::path &out) {
  // 1. Everything is read and checked before anything is written.
  ExternalResult result = read_external_result_file(result_file);
  const SourceRun run = read_source_run(run_dir);
  check_digest(result, "workloadDigest", result.workload_digest, run.workload);
  check_digest(result, "environmentDigest", result.environment_digest, run.environment);
  if (result.oracle != run.oracle)
    throw InputError(fmt::format("{}: $.oracle: {:?}, but {} was checked against {:?}", result.source,
                                 result.oracle, run.directory.string(), run.oracle));
  check_inputs(result, run);

  const Workload &workload = run.parsed_workload;
  std::vector<Prepared> prepared;
  for (ImplementationEntry &entry : result.implementations)
    prepared.push_back(prepare(result, std::move(entry), run));

  const json::Value protocol =
      protocol_manifest(result.settings, result.oracle, workload.correctness,
                        ProtocolHarness{result.harness_name, result.harness_version});
  ExternalImport imported;
  imported.source = result.source;
  imported.directory = out / import_directory_name(result.invocation, workload.name, result.settings.pass);
  imported.harness_name = result.harness_name;
  imported.harness_version = result.harness_version;
  imported.invocation = result.invocation;
  imported.workload_name = workload.name;
  imported.protocol_digest = manifest_digest(protocol);
  // 2. One staged directory, renamed into place whole. A name already
  // taken (the same result imported again, or two imports into one --out
  // at once) gets "-2", "-3", ... as `kibench run`'s directories do: an
  // import never overwrites, and never loses to a race.
  io::StagedDirectory dir(imported.directory, io::StagedDirectory::IfTaken::add_suffix);
  dir.write("operation.json", run.operation.text);
  dir.write("workload.json", run.workload.text);
  dir.write("environment.json", run.environment.text);
  dir.write("protocol.json", json_file_text(protocol));

  RunDirectoryContext context;
  context.workload = &workload;
  context.pass = result.settings.pass;
  context.workload_digest = run.workload.digest;
  context.protocol_digest = imported.protocol_digest;
  context.environment_digest = run.environment.digest;
  context.observed_at = result.invocation;
  context.harness = result.harness_name;
  context.extra_labels.set("harness", result.harness_name);

  ComparisonKeyParts key;
  key.operation = run.operation.digest;
  key.workload = run.workload.digest;
  key.protocol = imported.protocol_digest;
  key.environment = run.environment.digest;
  if (const json::Value *correctness = json::member_at(run.workload.manifest, "spec.correctness"))
    key.correctness = *correctness;
  const std::string comparison = comparison_key(key);

  WorkloadOutcome outcome;
  outcome.workload = workload;
  outcome.run_dir = imported.directory;
  outcome.oracle = result.oracle;
  outcome.oracle_loss = run.oracle_loss.value_or(0.0);
  for (Prepared &p : prepared) {
    ImplementationOutcome o =
        record_implementation(dir, context, p.revision_text, p.revision_digest, std::move(p.facts));
    outcome.implementations.push_back(o);
    imported.runs.push_back({std::move(o), p.kibench_implementation, comparison});
  }
  dir.write("summary.json", json_file_text(import_summary(result, run, outcome)));
  dir.commit();
  imported.directory = dir.final_path();
  return imported;
}

} // namespace kibench::importers::external
