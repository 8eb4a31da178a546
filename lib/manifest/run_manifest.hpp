#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/correctness/correctness.hpp"
#include "lib/json/value.hpp"
#include "lib/manifest/run_status.hpp"
#include "lib/stats/summary.hpp"

namespace kibench {

struct RunRecord {
  std::string name; // metadata.name
  std::string title;
  std::string implementation_digest, workload_digest, protocol_digest, environment_digest;
  RunStatus status = RunStatus::passed;
  std::string comparator;                    // the policy's comparator
  std::optional<CorrectnessVerdict> verdict; // absent for pseudo-implementations
  stats::Summary latency_ns;
  std::string raw_samples_uri, raw_samples_digest;
  std::string observed_at; // RFC 3339 UTC with milliseconds
  // false for a run that failed before it was measured: no spec.timing and
  // no latency measurements (the schema allows a run without them).
  bool timed = true;
  std::string description; // metadata.description, e.g. why the run failed
  json::Array extra_measurements;
  json::Object labels;
};

json::Value run_manifest(const RunRecord &record);

// {"metric", "unit", "statistic", "value"}
json::Value measurement(std::string metric, std::string unit, std::string statistic, double value);
// The same with "sampleCount": how many observations the value summarizes.
json::Value measurement(std::string metric, std::string unit, std::string statistic, double value,
                        std::size_t sample_count);

// Now, as 2026-12-02T12:34:56.789Z.
std::string utc_timestamp_now();

} // namespace kibench
