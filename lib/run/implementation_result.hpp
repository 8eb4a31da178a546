// What follows from one implementation's measurement and the workload: the
// latency statistics, the throttled count and the effective throughput its
// BenchmarkRun, summary.json and the printed table show. summarize() is
// pure (no files, no clock), so every one of them shows the same figures.
#pragma once

#include <cstddef>
#include <optional>

#include "lib/harness/harness.hpp"
#include "lib/implementation/implementation.hpp"
#include "lib/stats/summary.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

// The sustained phase's figures (harness/sustained.hpp), where it ran.
struct SustainedFigures {
  double tflops = 0.0;            // the pass's GEMM FLOPs / the back-to-back latency
  std::optional<double> energy_j; // per invocation: board power × latency, where the counter stepped
};

struct ImplementationResult {
  stats::Summary latency_ns; // of the cold samples
  std::size_t throttled_samples = 0;
  // The median's relative standard error (harness/stopping_rule.hpp), the
  // figure --max-noise bounds; infinite below two samples.
  double median_noise = 0.0;
  // Effective: the pass's GEMM FLOPs / the median latency. "Effective"
  // because the FLOPs are the workload's GEMMs, whatever the implementation
  // actually executes.
  double tflops = 0.0;
  // Where no GEMM bounds the pass (jsd): its minimum bytes / the median
  // latency, in GB/s; 0 otherwise.
  double gbps = 0.0;
  std::optional<SustainedFigures> sustained;
};

// The GEMM FLOPs of `pass` are the forward GEMMs, plus the backward GEMMs
// unless the pass is forward only (Workload::gemm_flops).
ImplementationResult summarize(const Measurement &measurement, const Workload &workload, Pass pass);

} // namespace kibench
