// The terminal rendering of a finished `kibench run` workload: the table of
// every implementation against the reference and the floor, the skipped
// ones, the medians against the tensor cores' floor, the sustained phase,
// and where the run directory was written. It only formats: every figure
// comes from the outcome (summarize() and the check).
#pragma once

#include <string>
#include <vector>

#include "lib/run/outcome.hpp"

namespace kibench {

std::string render_run_table(const WorkloadOutcome &outcome);

// The end of a run: one line per implementation that failed, on every
// workload ("workload · lane · status: reason", the failing output named
// where the check failed), or "" when none did.
std::string render_failure_summary(const std::vector<WorkloadOutcome> &outcomes);
// kibench run --check-only: each implementation's loss and verdict.
std::string render_check_table(const WorkloadOutcome &o);

} // namespace kibench
