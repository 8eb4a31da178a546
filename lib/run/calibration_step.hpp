// The calibration sentinels of a `kibench run` (lib/calibration/): read at
// the start and after each workload's lanes, judged against this machine's
// history, written into every BenchmarkRun of the workload as labels, and
// kept in the history when clean.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/calibration/sentinels.hpp"
#include "lib/json/value.hpp"
#include "lib/run/backend.hpp"

namespace kibench {

class CalibrationStep {
public:
  using Note = std::function<void(const std::string &)>;
  // Reads the first sentinels (a failure is a note: the run goes on
  // without calibration).
  CalibrationStep(const Backend &backend, Note note);

  struct WorkloadCalibration {
    json::Object labels;               // calibration_* labels for its runs
    std::vector<std::string> caveats;  // empty: within the limits and steady
  };
  // After a workload's lanes: the end sentinels, judged with the start's.
  WorkloadCalibration after_workload(const std::string &workload);

private:
  std::optional<calibration::SentinelSet> read(const char *when);
  const Backend &backend_;
  Note note_;
  std::optional<calibration::SentinelSet> start_;
};

} // namespace kibench
