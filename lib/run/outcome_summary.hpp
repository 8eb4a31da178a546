// summary.json of a run directory (the printed table as data; not a
// manifest) and the runs its ratios are taken against.
#pragma once

#include "run/outcome.hpp"
#include "json/value.hpp"

namespace kibench {

// What speedups and floor ratios are taken against: `reference` (else
// `cpu-reference`) and `cublas-floor`; nullptr where they did not run.
struct ReferencePoints {
  const ImplementationOutcome *reference = nullptr;
  const ImplementationOutcome *floor = nullptr;
};
ReferencePoints reference_points(const WorkloadOutcome &outcome);

// summary.json of one outcome.
json::Value outcome_summary(const WorkloadOutcome &outcome);

} // namespace kibench
