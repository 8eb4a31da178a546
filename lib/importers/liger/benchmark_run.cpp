#include "lib/importers/liger/benchmark_run.hpp"

#include <cmath>

#include "lib/manifest/envelope.hpp"
#include "lib/manifest/run_status.hpp"

namespace kibench::importers::liger {

std::int64_t milliseconds_to_ns(double ms) {
  const double ns = ms * 1e6;
  const double whole = std::floor(ns);
  // ns - floor(ns) is exact in binary floating point.
  return static_cast<std::int64_t>(ns - whole >= 0.5 ? whole + 1 : whole);
}

json::Value make_benchmark_run(const BenchmarkRunFields &fields) {
  json::Object spec{
      {"implementationDigest", fields.implementation_digest},
      {"workloadDigest", fields.workload_digest},
      {"protocolDigest", fields.protocol_digest},
      {"environmentDigest", fields.environment_digest},
      // The CSV holds no verdict; KernelIndex marks its rows passed.
      {"status", to_string(RunStatus::passed)},
      {"observedAt", fields.observed_at},
      {"timing", json::Object{{"primaryStatistic", "median"},
                              {"latencyNs", json::Object{{"median", milliseconds_to_ns(fields.ms.p50)}}}}},
  };
  // A spread needs both ends; one alone would read as a different statistic.
  if (std::isfinite(fields.ms.p20) && std::isfinite(fields.ms.p80)) {
    json::Array measurements;
    for (const auto &[statistic, ms] : {std::pair{"p20", fields.ms.p20}, std::pair{"p80", fields.ms.p80}}) {
      measurements.emplace_back(json::Object{{"metric", "latency"},
                                             {"statistic", statistic},
                                             {"unit", "ns"},
                                             {"value", milliseconds_to_ns(ms)}});
    }
    spec.set("measurements", std::move(measurements));
  }
  // JSON has no NaN: a quantile that is not finite is left out, not nulled.
  json::Object metrics;
  for (const auto &[key, ms] : {std::pair{"ms_20", fields.ms.p20}, std::pair{"ms_50", fields.ms.p50},
                                std::pair{"ms_80", fields.ms.p80}}) {
    if (std::isfinite(ms)) metrics.set(key, ms);
  }
  spec.set("sourceNative", json::Object{{"source", "liger-kernel-bench"},
                                        {"benchmark", fields.benchmark},
                                        {"externalId", fields.external_id},
                                        {"metrics", std::move(metrics)}});

  json::Object metadata{{"name", fields.name},
                        {"title", fields.title},
                        {"labels", json::Object{{"liger_version", fields.liger_version}}}};
  return make_manifest("BenchmarkRun", std::move(metadata), std::move(spec));
}

} // namespace kibench::importers::liger
