#include "lib/report/run_figures.hpp"

#include <fmt/core.h>

#include "lib/compare/run_loader.hpp"
#include "lib/stats/summary.hpp"
#include "lib/workload/workload.hpp"

namespace kibench::report {
namespace {

constexpr std::string_view kErrorPrefix = "rel_l2_error_";
constexpr std::string_view kAbsErrorPrefix = "max_abs_error_";

std::optional<double> number_at(const json::Value &value, std::string_view dotted_path) {
  const json::Value *member = member_at(value, dotted_path);
  if (member == nullptr || !member->is_number()) return std::nullopt;
  return member->as_number();
}

// spec.measurements entries as {metric, unit, statistic, value}.
struct MeasurementReader {
  const json::Value *list = nullptr;

  [[nodiscard]] std::optional<double> value(std::string_view metric, std::string_view unit,
                                            std::string_view statistic) const {
    if (list == nullptr || !list->is_array()) return std::nullopt;
    for (const json::Value &m : list->as_array()) {
      if (string_at(m, "metric") == metric && string_at(m, "unit") == unit &&
          string_at(m, "statistic") == statistic) {
        if (const auto v = number_at(m, "value")) return v;
      }
    }
    return std::nullopt;
  }
};

void read_reported_interval(const json::Value &manifest, RunFigures &out) {
  const json::Value *bounds = member_at(manifest, "spec.timing.latencyNs.confidence95");
  if (bounds == nullptr || !bounds->is_array() || bounds->as_array().size() != 2 || !out.median_ns) {
    out.interval_source = "no interval: the run reports only its median";
    return;
  }
  const auto low = compare::latency_ns(bounds->as_array()[0]);
  const auto high = compare::latency_ns(bounds->as_array()[1]);
  if (!low || !high) {
    out.interval_source = "no interval: spec.timing.latencyNs.confidence95 is not two latencies";
    return;
  }
  out.median_interval = stats::Interval{*out.median_ns, *low, *high};
  out.interval_source = "95 % interval as the run reports it (no raw samples)";
}

} // namespace

bool above_bound(const json::Value &correctness, std::string_view output, double relative,
                 std::optional<double> absolute) {
  CorrectnessPolicy policy;
  policy.comparator = string_at(correctness, "comparator");
  if (policy.loss_rule_for(output)) {
    // |loss - ref| against max(1e-4 |ref|, 1e-5), with |ref| = |loss - ref| / rel;
    // a run without the absolute error is not judged.
    return absolute.has_value() &&
           *absolute > CorrectnessPolicy::loss_allowance(relative > 0.0 ? *absolute / relative : 0.0);
  }
  const auto tolerance = number_at(correctness, "maxRelativeError");
  return tolerance.has_value() && relative > *tolerance;
}

RunFigures read_run_figures(const compare::ComparedRun &run, const ManifestIndex &index) {
  RunFigures out;
  out.id = run.id;
  out.implementation = run.implementation;
  out.status = run.status;
  out.label = run.label;
  out.median_ns = run.median_ns;

  static const json::Value kNone;
  const json::Value *found = index.find(run.digest, "BenchmarkRun", run);
  const json::Value &manifest = found != nullptr ? *found : kNone;
  out.observed_at = string_at(manifest, "spec.observedAt");
  const MeasurementReader measurements{member_at(manifest, "spec.measurements")};

  if (run.raw && !run.raw->samples.empty()) {
    const stats::Summary summary = stats::summarize(run.raw->nanoseconds());
    out.samples = summary.count;
    out.median_interval = stats::Interval{summary.median, summary.ci95_low, summary.ci95_high};
    out.interval_source =
        fmt::format("95 % interval of the median from the order statistics of {} raw samples", summary.count);
    out.p20_ns = summary.p20;
    out.p80_ns = summary.p80;
  } else {
    read_reported_interval(manifest, out);
    out.p20_ns = measurements.value("latency", "ns", "p20");
    out.p80_ns = measurements.value("latency", "ns", "p80");
  }

  out.tflops = measurements.value("throughput", "tflops", "median");
  out.peak_bytes = measurements.value("peak_memory", "bytes", "maximum");
  out.workspace_bytes = measurements.value("workspace_memory", "bytes", "maximum");

  if (const json::Value *list = member_at(manifest, "spec.measurements");
      list != nullptr && list->is_array()) {
    for (const json::Value &m : list->as_array()) {
      const std::string metric = string_at(m, "metric");
      const auto value = number_at(m, "value");
      if (!metric.starts_with(kErrorPrefix) || !value) continue;
      const std::string output = metric.substr(kErrorPrefix.size());
      const auto absolute = measurements.value(std::string(kAbsErrorPrefix) + output, "absolute", "value");
      out.errors.push_back(OutputError{output, *value, above_bound(run.correctness, output, *value, absolute)});
    }
  }
  out.max_relative_error = number_at(manifest, "spec.correctness.maximumRelativeError");
  out.max_absolute_error = number_at(manifest, "spec.correctness.maximumAbsoluteError");
  return out;
}

} // namespace kibench::report
