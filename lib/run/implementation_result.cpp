#include "lib/run/implementation_result.hpp"

#include <vector>

#include "lib/harness/stopping_rule.hpp"

namespace kibench {

namespace {

// FLOPs over a latency in ns, in TFLOP/s.
double tflops_at(double flops, double latency_ns) {
  return flops / (latency_ns * 1e-9) * 1e-12;
}

} // namespace

ImplementationResult summarize(const Measurement &measurement, const Workload &workload, Pass pass) {
  ImplementationResult result;
  std::vector<double> ns;
  ns.reserve(measurement.samples.size());
  for (const Sample &s : measurement.samples) {
    ns.push_back(s.ns);
    result.throttled_samples += s.throttled ? 1 : 0;
  }
  result.latency_ns = stats::summarize(ns);
  result.median_noise =
      median_relative_standard_error(result.latency_ns.relative_noise, result.latency_ns.count);
  const double flops = workload.gemm_flops(pass != Pass::forward);
  result.tflops = tflops_at(flops, result.latency_ns.median);
  if (const double bytes = workload.minimum_bytes(pass != Pass::backward, pass != Pass::forward); bytes > 0.0 && result.latency_ns.median > 0.0)
    result.gbps = bytes / result.latency_ns.median; // bytes per ns = GB/s
  if (const auto &m = measurement.sustained)
    result.sustained = SustainedFigures{tflops_at(flops, m->latency_ns), m->energy_j};
  return result;
}

} // namespace kibench
