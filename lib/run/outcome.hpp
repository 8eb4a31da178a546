// What one run directory records: per implementation the facts of its check
// and timing, what summarize() derived from them, and its run digest; and
// the workload they share. Filled by `kibench run` (session.cpp) and by
// imports of another harness's samples.
#pragma once

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/correctness/correctness.hpp"
#include "lib/harness/harness.hpp"
#include "lib/implementation/implementation.hpp"
#include "lib/json/value.hpp"
#include "lib/manifest/run_status.hpp"
#include "lib/run/implementation_result.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

// What one implementation's check and timing established, as observed.
struct ImplementationFacts {
  std::string name;
  RunStatus status = RunStatus::incomplete_evidence;
  std::optional<CorrectnessVerdict> verdict; // absent when it computes no loss
  Measurement measurement;                   // samples with throttle flags, stop reason, timer
  MemoryUse memory;
  json::Object labels; // Implementation::run_labels()
  double loss = 0.0;   // of the checked run; NaN where an import has none
  // Why the implementation failed where it raised an error, returned
  // outputs of the wrong shape or type, or ran out of time or memory
  // (status runtime_error, incorrect_shape, ...): it has no measurement,
  // and its BenchmarkRun no timing. Empty otherwise.
  std::string failure;
  [[nodiscard]] bool failed() const { return !failure.empty(); }
};

// The status a check gives a run: passed or incorrect_numerical by its
// verdict; incomplete_evidence without one (nothing was checked).
inline RunStatus status_of_check(const std::optional<CorrectnessVerdict> &verdict) {
  if (!verdict) return RunStatus::incomplete_evidence;
  return verdict->passed ? RunStatus::passed : RunStatus::incorrect_numerical;
}

struct ImplementationOutcome {
  ImplementationFacts facts;
  ImplementationResult result; // summarize(facts.measurement, workload, pass)
  std::string run_digest;      // of the run.<impl>.json written
};

struct WorkloadOutcome {
  Workload workload;
  std::filesystem::path run_dir;
  std::string oracle;
  double oracle_loss = 0.0;
  // --max-noise: the relative standard error of the median each stopping
  // rule aimed for; 0 where none was set (an import).
  double noise_target = 0.0;
  std::vector<ImplementationOutcome> implementations;
  std::vector<std::pair<std::string, std::string>> skipped; // name, reason
  // The calibration sentinels' caveats (lib/run/calibration_step.hpp):
  // outside this machine's control limits, or drifting during the workload.
  std::vector<std::string> calibration_caveats;
  // The board's peak DRAM bandwidth where known (EnvironmentFacts), for
  // bandwidth-bound workloads' "% of peak".
  std::optional<double> peak_bandwidth_gbps;

  // No implementation's status is a failure (is_failure): what `kibench
  // run`'s exit code reports.
  [[nodiscard]] bool no_failed_check() const {
    return std::none_of(implementations.begin(), implementations.end(),
                        [](const ImplementationOutcome &i) { return is_failure(i.facts.status); });
  }
};

} // namespace kibench
