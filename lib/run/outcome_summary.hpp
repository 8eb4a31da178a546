// summary.json of a run directory (the printed table as data; not a
// manifest) and the runs its ratios are taken against.
#pragma once

#include "lib/json/value.hpp"
#include "lib/run/outcome.hpp"

namespace kibench {

// What speedups and floor ratios are taken against: `reference` (else
// `cpu-reference`), `cublas-floor` (the library's GEMMs; on jsd, which has
// none, `copy-floor`, its bytes) and `wgmma-floor` (the tensor cores alone);
// nullptr where they did not run.
struct ReferencePoints {
  const ImplementationOutcome *reference = nullptr;
  const ImplementationOutcome *floor = nullptr;
  const ImplementationOutcome *tensor_floor = nullptr;
};
ReferencePoints reference_points(const WorkloadOutcome &outcome);

// The median latency of an outcome's cold samples, in ns.
inline double median_of(const ImplementationOutcome &outcome) {
  return outcome.result.latency_ns.median;
}

// Sampling stopped at --max-samples or --timeout with the median's
// relative standard error still above `noise_target`: its figures are less
// precise than was asked for.
bool stopped_short_of_noise_target(const ImplementationOutcome &outcome, double noise_target);

// summary.json of one outcome.
json::Value outcome_summary(const WorkloadOutcome &outcome);

} // namespace kibench
