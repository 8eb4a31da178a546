// Why two runs cannot be ranked against each other. Each code is derived
// from an actual difference between the two runs (or a property of one of
// them), never assumed:
//
//   OPERATION_MISMATCH           the WorkloadCases name different OperationSpecs
//   WORKLOAD_MISMATCH            different WorkloadCase digests
//   PROTOCOL_INCOMPARABLE        different BenchmarkProtocol digests (measured differently)
//   ENVIRONMENT_MISMATCH         different ExecutionEnvironment digests
//   CORRECTNESS_POLICY_MISMATCH  different WorkloadCase spec.correctness
//   METRIC_MISMATCH              different primary statistic ("latency:median:ns")
//   STATUS_NOT_PASSED            either run's status is not "passed"
//   MISSING_RAW_SAMPLES          either run has no raw samples to resample
//
// The first six are exactly the parts of the comparison key: two runs share
// a cohort iff none of them applies.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lib/compare/compared_run.hpp"
#include "lib/compare/field_difference.hpp"

namespace kibench::compare {

enum class ReasonCode {
  operation_mismatch,
  workload_mismatch,
  protocol_incomparable,
  environment_mismatch,
  correctness_policy_mismatch,
  metric_mismatch,
  status_not_passed,
  missing_raw_samples,
};

// "WORKLOAD_MISMATCH", ...
std::string_view to_string(ReasonCode code);

struct Reason {
  ReasonCode code;
  std::string detail; // the difference in words: "workload a vs b"
  // PROTOCOL_INCOMPARABLE and ENVIRONMENT_MISMATCH: every field that
  // differs, the first run's value first.
  std::vector<FieldDifference> differences = {};
};

// Every reason that applies to the pair, in the order of the enum.
std::vector<Reason> reasons_between(const ComparedRun &a, const ComparedRun &b);

// Whether any reason is a difference of the comparison key (not just a
// property of one run).
bool differs_in_key(const std::vector<Reason> &reasons);

} // namespace kibench::compare
