// `kibench run --repetitions N` (google/benchmark's --benchmark_repetitions):
// the whole invocation repeated N times, each repetition its own run
// directories (labelled `repetition: k of N`); then, per workload and
// implementation, how its median moved from one repetition to the next.
// Within a run the interval of the median says how well it is known; this
// says how well a rerun agrees, which is what a baseline in CI faces.
#pragma once

#include <string>
#include <vector>

#include "lib/run/outcome.hpp"

namespace kibench {

struct RepetitionSpread {
  std::string workload;
  std::string implementation;
  std::vector<double> medians_ns; // one per repetition it was measured in
  double mean_ns = 0.0;
  double stdev_ns = 0.0; // sample standard deviation (0 with one median)
  // stdev / mean: the coefficient of variation
  [[nodiscard]] double cv() const { return mean_ns > 0.0 ? stdev_ns / mean_ns : 0.0; }
};

// In order of first appearance; lanes without timed samples (failed, or
// --check-only) are left out.
std::vector<RepetitionSpread> repetition_spread(const std::vector<std::vector<WorkloadOutcome>> &repetitions);

// The table `kibench run --repetitions` prints at the end (formatting only).
std::string render_repetition_table(const std::vector<RepetitionSpread> &spread, std::size_t repetitions);

} // namespace kibench
