#include "lib/manifest/protocol_manifest.hpp"

#include <fmt/core.h>

#include "lib/manifest/envelope.hpp"

namespace kibench {

json::Value protocol_manifest(const ProtocolSettings &s, const std::string &oracle,
                              const CorrectnessPolicy &policy, const ProtocolHarness &harness) {
  json::Object measurement{
      {"timer", s.timer},
      {"synchronization", s.timer != "cuda_events" ? "host_blocking"
                          : s.gpus > 1         ? "device_barrier_event_synchronize"
                                               : "event_synchronize"},
      {"compileIncluded", false},
      {"setupIncluded", false},
      {"warmupIterations", static_cast<std::uint64_t>(s.warmup_runs)},
      {"inputRegeneration", "none"},
      {"outlierPolicy", "none: every sample is kept; throttled samples are flagged in the raw samples"},
      {"primaryStatistic", "median"},
  };
  const std::string rule = policy.describe_rule();
  json::Object spec{
      {"harness", json::Object{{"name", harness.name}, {"version", harness.version}}},
      {"measurement", std::move(measurement)},
      {"correctness",
       json::Object{{"reference", fmt::format("{} (fp64 loss and gradients){}", oracle,
                                              rule.empty() ? "" : "; " + rule)},
                    {"comparator", policy.comparator}}},
      {"devicePolicy", json::Object{{"clocksLocked", s.clocks_locked}}},
      {"comparability", json::Object{{"family", s.family()}, {"notes", s.describe()}}},
  };
  json::Object metadata{{"name", kebab(fmt::format("{}_{}", harness.name, s.method()))},
                        {"title", fmt::format("{} · {} pass · {} · {}", harness.name, to_string(s.pass),
                                              s.timer, s.cold ? "cold L2" : "warm caches")}};
  std::string description = s.describe_power_state_method();
  if (const std::string gpus = s.describe_gpus(); !gpus.empty())
    description += (description.empty() ? "" : " ") + gpus;
  if (const std::string sustained = s.describe_sustained(); !sustained.empty())
    description += (description.empty() ? "" : " ") + sustained;
  if (!s.timing_groups.empty())
    description += fmt::format("{}Timed in memory groups, {}: each group's lanes share rounds, and lanes of "
                               "different groups were not interleaved (their samples are not paired).",
                               description.empty() ? "" : " ", s.timing_groups);
  if (!s.rotation.empty()) description += (description.empty() ? "" : " ") + s.rotation;
  if (!description.empty()) metadata.set("description", description);
  return make_manifest("BenchmarkProtocol", std::move(metadata), std::move(spec));
}

} // namespace kibench
