// A BenchmarkRun's spec.status as a value. Text appears only where a
// manifest (or summary.json) is written or read, and in printers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kibench {

// The statuses KernelIndex v1alpha1 allows (benchmark-run schema,
// spec.status). kibench's own runs are passed, incorrect_numerical (the
// check against the oracle failed) or incomplete_evidence (nothing to
// check: the implementation computes no loss); the others can come from
// another harness's manifests.
enum class RunStatus {
  passed,
  incorrect_shape,
  incorrect_dtype,
  incorrect_numerical,
  compile_error,
  runtime_error,
  timeout,
  resource_exceeded,
  invalid_reference,
  policy_violation,
  suspected_reward_hack,
  incomplete_evidence,
  revoked,
};

std::string_view to_string(RunStatus status);
// nullopt for a string the schema does not allow.
std::optional<RunStatus> run_status_from_string(std::string_view text);
// Every allowed string, comma-separated, for error messages.
const std::string &run_status_names();

// A status that says the run is not evidence of a correct result: anything
// but passed and incomplete_evidence (a run that computes no loss has
// nothing to check, and so no failed check either).
bool is_failure(RunStatus status);

} // namespace kibench
