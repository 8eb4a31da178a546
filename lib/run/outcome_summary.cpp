#include "lib/run/outcome_summary.hpp"

#include <cmath>

namespace kibench {

ReferencePoints reference_points(const WorkloadOutcome &o) {
  ReferencePoints points;
  for (const auto &i : o.implementations) {
    if (i.facts.failed()) continue; // nothing measured to take a ratio against
    const std::string &name = i.facts.name;
    if (name == "reference" || (points.reference == nullptr && name == "cpu-reference"))
      points.reference = &i;
    if (name == "cublas-floor" || name == "copy-floor") points.floor = &i;
    if (name == "wgmma-floor") points.tensor_floor = &i;
  }
  return points;
}

bool stopped_short_of_noise_target(const ImplementationOutcome &o, double noise_target) {
  const std::string &reason = o.facts.measurement.stop_reason;
  return !o.facts.failed() && (reason == "max_samples" || reason == "timeout") &&
         !(o.result.median_noise <= noise_target);
}

namespace {

// A sustained figure set: invocations and latency, and where the counter
// stepped, power, its window and steps, the SM clock and the energy.
json::Object sustained_figures(std::size_t warmup_invocations, std::size_t invocations, double latency_ns,
                               const std::optional<PowerSummary> &power, std::optional<double> energy_j) {
  json::Object out{{"warmupInvocations", static_cast<std::uint64_t>(warmup_invocations)},
                   {"invocations", static_cast<std::uint64_t>(invocations)},
                   {"latencyNs", latency_ns}};
  if (power) {
    out.set("powerW", power->power_w);
    out.set("powerWindowS", power->window_s);
    out.set("counterSteps", static_cast<std::uint64_t>(power->steps));
    if (power->sm_clock_mhz) out.set("smClockMhz", *power->sm_clock_mhz);
    if (energy_j) out.set("energyJ", *energy_j);
  }
  return out;
}

// Everything the sustained phase measured, so the run's figures can be
// rebuilt from the summary as its other figures are: the figures over the
// rounds and, with several, each round's in the order they ran.
json::Object sustained_summary(const SustainedMeasurement &m, const SustainedFigures &f) {
  json::Object out{{"monitor", m.monitor}};
  const json::Object figures =
      sustained_figures(m.warmup_invocations, m.invocations, m.latency_ns, m.power, f.energy_j);
  for (const auto &[key, value] : figures) out.set(key, value);
  if (m.rounds.size() > 1) {
    json::Array rounds;
    for (const SustainedRound &r : m.rounds)
      rounds.push_back(sustained_figures(r.warmup_invocations, r.invocations, r.latency_ns, r.power, r.energy_j()));
    out.set("rounds", std::move(rounds));
  }
  return out;
}

} // namespace

json::Value outcome_summary(const WorkloadOutcome &o) {
  const auto [reference, floor, tensor_floor] = reference_points(o);
  json::Array rows;
  for (const auto &i : o.implementations) {
    const ImplementationFacts &f = i.facts;
    const stats::Summary &latency = i.result.latency_ns;
    if (f.failed()) {
      // Not measured: its status and why, and its check where it got that far.
      json::Object row{{"implementation", f.name},
                       {"status", to_string(f.status)},
                       {"failure", f.failure},
                       {"runDigest", i.run_digest}};
      if (f.verdict) row.set("loss", std::isfinite(f.loss) ? json::Value(f.loss) : json::Value(nullptr));
      rows.emplace_back(std::move(row));
      continue;
    }
    json::Object row{{"implementation", f.name},
                     {"status", to_string(f.status)},
                     {"samples", static_cast<std::uint64_t>(latency.count)},
                     {"medianMs", latency.median * 1e-6},
                     {"p20Ms", latency.p20 * 1e-6},
                     {"p80Ms", latency.p80 * 1e-6},
                     {"relativeNoise", latency.relative_noise},
                     {"effectiveTflops", i.result.tflops}};
    if (i.result.gbps > 0.0) row.set("effectiveGBps", i.result.gbps);
    if (i.result.gbps > 0.0 && o.peak_bandwidth_gbps && *o.peak_bandwidth_gbps > 0.0)
      row.set("fractionOfPeakBandwidth", i.result.gbps / *o.peak_bandwidth_gbps);
    // Unmeasured memory is left out, never written as 0.
    if (f.memory.measured) {
      row.set("peakBytes", f.memory.peak_bytes);
      row.set("workspaceBytes", f.memory.workspace_bytes);
    }
    row.set("runDigest", i.run_digest);
    if (reference && reference != &i && median_of(*reference) > 0)
      row.set("speedupOverReference", median_of(*reference) / latency.median);
    if (floor && floor != &i && median_of(*floor) > 0)
      row.set("ratioToFloor", latency.median / median_of(*floor));
    if (tensor_floor && tensor_floor != &i && median_of(*tensor_floor) > 0)
      row.set("ratioToTensorFloor", latency.median / median_of(*tensor_floor));
    if (f.measurement.sustained && i.result.sustained)
      row.set("sustained", sustained_summary(*f.measurement.sustained, *i.result.sustained));
    if (f.verdict) {
      json::Object errors;
      for (const auto &e : f.verdict->outputs)
        errors.set(e.output,
                   json::Object{{"relL2", std::isfinite(e.rel_l2_error) ? json::Value(e.rel_l2_error)
                                                                        : json::Value(nullptr)},
                                {"maxAbs", std::isfinite(e.max_abs_error) ? json::Value(e.max_abs_error)
                                                                          : json::Value(nullptr)},
                                {"passed", e.passed}});
      row.set("errors", std::move(errors));
      row.set("loss", std::isfinite(f.loss) ? json::Value(f.loss) : json::Value(nullptr));
    }
    rows.emplace_back(std::move(row));
  }
  json::Array skipped;
  for (const auto &[name, reason] : o.skipped)
    skipped.emplace_back(json::Object{{"implementation", name}, {"reason", reason}});
  json::Object summary{{"workload", o.workload.name},
                       {"gemmTflop", o.workload.gemm_flops(true) * 1e-12},
                       {"oracle", o.oracle},
                       {"oracleLoss", o.oracle_loss},
                       {"implementations", std::move(rows)},
                       {"skipped", std::move(skipped)}};
  // The board's peak DRAM bandwidth, where known (the environment's label).
  if (o.peak_bandwidth_gbps) summary.set("boardPeakGBps", *o.peak_bandwidth_gbps);
  return summary;
}

} // namespace kibench
