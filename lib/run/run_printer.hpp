// The terminal rendering of a finished `kibench run` workload: the table of
// every implementation against the reference and the floor, the skipped
// ones, the medians against the tensor cores' floor, the sustained phase,
// and where the run directory was written. It only formats: every figure
// comes from the outcome (summarize() and the check).
#pragma once

#include <string>

#include "lib/run/outcome.hpp"

namespace kibench {

std::string render_run_table(const WorkloadOutcome &outcome);

} // namespace kibench
