// The three files one implementation adds to a run directory, and the
// BenchmarkRun's assembly: samples.<impl>.json (raw samples),
// implementation.<impl>.json (its ImplementationRevision) and run.<impl>.json
// (the BenchmarkRun naming both, with the statistics and measurements
// docs/manifests.md lists). `kibench run` and `kibench import external` both
// write them through here, so an imported run reads exactly like a measured
// one.
#pragma once

#include <string>
#include <string_view>

#include "lib/implementation/implementation.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/json/value.hpp"
#include "lib/run/outcome.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

// What every run of one directory shares.
struct RunDirectoryContext {
  const Workload *workload = nullptr;
  Pass pass = Pass::full;
  std::string workload_digest, protocol_digest, environment_digest;
  // spec.observedAt of every run, and the raw samples' invocation id: runs
  // with the same id were interleaved and `kibench compare` pairs them.
  std::string observed_at;
  // The first word of each run's metadata.name.
  std::string harness = "kibench";
  // metadata.labels after implementation, pass and stop_reason.
  json::Object extra_labels;
};

// Adds `labels` (an implementation's run_labels()) to a BenchmarkRun's
// `into`; throws std::logic_error naming the key for a key outside
// [a-z][a-z0-9_]*, a value that is no string of at most 200 characters, or
// a key `into` has already (the harness's own labels come first).
void add_run_labels(json::Object &into, const json::Object &labels, std::string_view implementation);

// Writes the three files of one implementation: `facts` as observed and
// `result` = summarize(facts.measurement, *context.workload, context.pass).
// `revision_text` is written as it is, `revision_digest` is its identity
// digest. Returns the run digest of the run.<impl>.json written.
[[nodiscard]] std::string
write_implementation_files(io::StagedDirectory &dir, const RunDirectoryContext &context,
                           std::string_view revision_text, const std::string &revision_digest,
                           const ImplementationFacts &facts, const ImplementationResult &result);

// One implementation of a run directory from its facts: summarize(), then
// write_implementation_files(); the outcome holds all three.
ImplementationOutcome record_implementation(io::StagedDirectory &dir, const RunDirectoryContext &context,
                                            std::string_view revision_text,
                                            const std::string &revision_digest, ImplementationFacts facts);

// A manifest or summary as kibench writes its files: indented, one final
// newline.
std::string json_file_text(const json::Value &value);

} // namespace kibench
