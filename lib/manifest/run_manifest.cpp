#include "lib/manifest/run_manifest.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>

#include <fmt/core.h>

#include "lib/manifest/envelope.hpp"

namespace kibench {

json::Value measurement(std::string metric, std::string unit, std::string statistic, double value) {
  return json::Object{{"metric", std::move(metric)},
                      {"unit", std::move(unit)},
                      {"statistic", std::move(statistic)},
                      {"value", value}};
}

json::Value measurement(std::string metric, std::string unit, std::string statistic, double value,
                        std::size_t sample_count) {
  json::Value m = measurement(std::move(metric), std::move(unit), std::move(statistic), value);
  m.as_object().set("sampleCount", static_cast<std::uint64_t>(sample_count));
  return m;
}

std::string utc_timestamp_now() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  const std::time_t seconds = system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ms);
}

json::Value run_manifest(const RunRecord &r) {
  json::Object timing;
  json::Array measurements;
  if (r.timed) {
    const stats::Summary &s = r.latency_ns;
    json::Object latency{{"median", round_ns(s.median)},
                         {"mean", round_ns(s.mean)},
                         {"p05", round_ns(s.p05)},
                         {"p95", round_ns(s.p95)},
                         {"minimum", round_ns(s.minimum)},
                         {"maximum", round_ns(s.maximum)},
                         {"mad", round_ns(s.mad)},
                         {"confidence95", json::Array{round_ns(s.ci95_low), round_ns(s.ci95_high)}}};
    timing = json::Object{
        {"primaryStatistic", "median"},
        {"samples", static_cast<std::uint64_t>(s.count)},
        {"latencyNs", std::move(latency)},
        {"rawSamples", json::Object{{"uri", r.raw_samples_uri}, {"digest", r.raw_samples_digest}}}};
    measurements.push_back(measurement("latency", "ns", "p20", static_cast<double>(round_ns(s.p20))));
    measurements.push_back(measurement("latency", "ns", "p80", static_cast<double>(round_ns(s.p80))));
  }
  for (const auto &m : r.extra_measurements) measurements.push_back(m);

  json::Object spec{{"implementationDigest", r.implementation_digest},
                    {"workloadDigest", r.workload_digest},
                    {"protocolDigest", r.protocol_digest},
                    {"environmentDigest", r.environment_digest},
                    {"status", to_string(r.status)}};
  if (r.verdict) {
    double max_abs = 0;
    std::optional<double> max_rel;
    std::int64_t matched = 0, total = 0;
    for (const auto &o : r.verdict->outputs) {
      max_abs = std::max(max_abs, std::isfinite(o.max_abs_error) ? o.max_abs_error : 1.7976931348623157e308);
      // An output whose reference is exactly zero has no relative error:
      // the comparator judged its absolute error against the absolute
      // tolerance (maximumAbsoluteError holds it), so it adds nothing here.
      if (o.ref_l2_norm != 0.0)
        max_rel = std::max(max_rel.value_or(0.0),
                           std::isfinite(o.rel_l2_error) ? o.rel_l2_error : 1.7976931348623157e308);
      total += 1;
      matched += o.passed ? 1 : 0;
    }
    json::Object correctness{{"comparator", r.comparator}, {"maximumAbsoluteError", max_abs}};
    if (max_rel) correctness.set("maximumRelativeError", *max_rel);
    if (total > 0) correctness.set("matchedRatio", static_cast<double>(matched) / static_cast<double>(total));
    spec.set("correctness", std::move(correctness));
  }
  if (r.timed) spec.set("timing", std::move(timing));
  if (!measurements.empty()) spec.set("measurements", std::move(measurements));
  spec.set("observedAt", r.observed_at);

  json::Object metadata{{"name", r.name}, {"title", r.title.substr(0, 200)}};
  if (!r.description.empty()) metadata.set("description", r.description.substr(0, 2000));
  if (!r.labels.empty()) metadata.set("labels", r.labels);
  return make_manifest("BenchmarkRun", std::move(metadata), std::move(spec));
}

} // namespace kibench
