#include "lib/run/outcome_summary.hpp"

#include <cmath>

namespace kibench {

ReferencePoints reference_points(const WorkloadOutcome &o) {
  ReferencePoints points;
  for (const auto &i : o.implementations) {
    if (i.name == "reference" || (points.reference == nullptr && i.name == "cpu-reference"))
      points.reference = &i;
    if (i.name == "cublas-floor") points.floor = &i;
    if (i.name == "wgmma-floor") points.tensor_floor = &i;
  }
  return points;
}

namespace {

// Everything the sustained phase measured, so the run's figures can be
// rebuilt from the summary as its other figures are.
json::Object sustained_summary(const SustainedMeasurement &m) {
  json::Object out{{"monitor", m.monitor},
                   {"warmupInvocations", static_cast<std::uint64_t>(m.warmup_invocations)},
                   {"invocations", static_cast<std::uint64_t>(m.invocations)},
                   {"latencyNs", m.latency_ns}};
  if (m.power) {
    out.set("powerW", m.power->power_w);
    out.set("powerWindowS", m.power->window_s);
    out.set("counterSteps", static_cast<std::uint64_t>(m.power->steps));
    if (m.power->sm_clock_mhz) out.set("smClockMhz", *m.power->sm_clock_mhz);
    out.set("energyJ", *m.energy_j());
  }
  return out;
}

} // namespace

json::Value outcome_summary(const WorkloadOutcome &o) {
  const auto [reference, floor, tensor_floor] = reference_points(o);
  json::Array rows;
  for (const auto &i : o.implementations) {
    json::Object row{{"implementation", i.name},
                     {"status", i.status},
                     {"samples", static_cast<std::uint64_t>(i.latency_ns.count)},
                     {"medianMs", i.latency_ns.median * 1e-6},
                     {"p20Ms", i.latency_ns.p20 * 1e-6},
                     {"p80Ms", i.latency_ns.p80 * 1e-6},
                     {"relativeNoise", i.latency_ns.relative_noise},
                     {"effectiveTflops", i.tflops},
                     {"peakBytes", i.memory.peak_bytes},
                     {"workspaceBytes", i.memory.workspace_bytes},
                     {"runDigest", i.run_digest}};
    if (reference && reference != &i && reference->latency_ns.median > 0)
      row.set("speedupOverReference", reference->latency_ns.median / i.latency_ns.median);
    if (floor && floor != &i && floor->latency_ns.median > 0)
      row.set("ratioToFloor", i.latency_ns.median / floor->latency_ns.median);
    if (tensor_floor && tensor_floor != &i && tensor_floor->latency_ns.median > 0)
      row.set("ratioToTensorFloor", i.latency_ns.median / tensor_floor->latency_ns.median);
    if (i.measurement.sustained) row.set("sustained", sustained_summary(*i.measurement.sustained));
    if (i.verdict) {
      json::Object errors;
      for (const auto &e : i.verdict->outputs)
        errors.set(e.output,
                   json::Object{{"relL2", std::isfinite(e.rel_l2_error) ? json::Value(e.rel_l2_error)
                                                                        : json::Value(nullptr)},
                                {"maxAbs", std::isfinite(e.max_abs_error) ? json::Value(e.max_abs_error)
                                                                          : json::Value(nullptr)},
                                {"passed", e.passed}});
      row.set("errors", std::move(errors));
      row.set("loss", std::isfinite(i.loss) ? json::Value(i.loss) : json::Value(nullptr));
    }
    rows.emplace_back(std::move(row));
  }
  json::Array skipped;
  for (const auto &[name, reason] : o.skipped)
    skipped.emplace_back(json::Object{{"implementation", name}, {"reason", reason}});
  return json::Object{{"workload", o.workload.name},
                      {"gemmTflop", o.workload.gemm_flops(true) * 1e-12},
                      {"oracle", o.oracle},
                      {"oracleLoss", o.oracle_loss},
                      {"implementations", std::move(rows)},
                      {"skipped", std::move(skipped)}};
}

} // namespace kibench
