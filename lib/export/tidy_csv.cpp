#include "lib/export/tidy_csv.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "lib/compare/run_loader.hpp"
#include "lib/export/csv_writer.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/path.hpp"
#include "lib/stats/summary.hpp"

namespace kibench::exports {
namespace {

using json::member_at;

// Column groups in order. Axes, scalars and measurements a run has beyond
// the named ones get columns of their own after them (sorted by name).
const std::vector<std::string> kRunColumns = {"run_name",    "run_digest", "implementation", "status",
                                              "observed_at", "pass",       "stop_reason"};
const std::vector<std::string> kWorkloadColumns = {"workload_name", "workload_digest", "operation_digest"};
const std::vector<std::string> kAxisColumns = {"tokens", "vocab", "hidden", "student_hidden"};
const std::vector<std::string> kInputColumns = {"dtype", "ignore_fraction"};
const std::vector<std::string> kScalarColumns = {"beta", "temperature", "weight_hard_loss",
                                                 "weight_soft_loss", "ignore_index"};
const std::vector<std::string> kStatisticColumns = {"samples", "median_ns", "mean_ns",     "p05_ns",
                                                    "p20_ns",  "p80_ns",    "p95_ns",      "min_ns",
                                                    "max_ns",  "mad_ns",    "ci95_low_ns", "ci95_high_ns"};
const std::vector<std::string> kMeasurementColumns = {
    "throughput_tflops", "peak_memory_bytes",    "workspace_memory_bytes",
    "throttled_samples", "sustained_latency_ns", "sustained_throughput_tflops",
    "power_watts",       "energy_joules",        "sustained_sm_clock_mhz"};
const std::vector<std::string> kCorrectnessColumns = {"comparator", "max_absolute_error",
                                                      "max_relative_error", "matched_ratio"};
const std::vector<std::string> kImplementationColumns = {"implementation_name", "implementation_digest",
                                                         "implementation_version", "implementation_commit",
                                                         "licence"};
const std::vector<std::string> kProtocolColumns = {"protocol_name", "protocol_digest", "protocol_family",
                                                   "timer", "warmup_iterations"};
const std::vector<std::string> kEnvironmentColumns = {
    "environment_name", "environment_digest", "hardware_vendor",   "hardware_product", "architecture",
    "hardware_count",   "memory_bytes",       "operating_system",  "kernel",           "driver",
    "cuda_toolkit",     "compiler",           "power_limit_watts", "clocks_locked",    "ecc_enabled",
    "persistence_mode"};
const std::vector<std::string> kProvenanceColumns = {"comparison_key", "source", "external_id",
                                                     "raw_samples_uri", "raw_samples_digest"};

using Row = std::map<std::string, std::string>;

std::string cell(const json::Value &value) {
  if (value.is_string()) return value.as_string();
  if (value.is_number()) return json::format_number(value.as_number());
  if (value.is_bool()) return value.as_bool() ? "true" : "false";
  if (value.is_null()) return {};
  return json::canonical(value);
}

void set_from(Row &row, const std::string &column, const json::Value &root, std::string_view path) {
  if (const json::Value *value = member_at(root, path)) row[column] = cell(*value);
}

// A KernelIndex duration (integer ns or "213.2 ms") in ns.
void set_latency(Row &row, const std::string &column, const json::Value *value) {
  if (value == nullptr) return;
  if (const auto ns = compare::latency_ns(*value)) row[column] = json::format_number(*ns);
}

std::string measurement_column(const json::Value &measurement) {
  const std::string metric = json::string_at(measurement, "metric");
  const std::string unit = json::string_at(measurement, "unit");
  const std::string statistic = json::string_at(measurement, "statistic");
  if (metric == "latency") return statistic + "_" + unit;
  if (unit.empty() || unit == "count" || unit == "ratio") return metric;
  return metric + "_" + unit;
}

// student_hidden is derived (hidden // 2 for distill_jsd_loss): read from
// the student input's shape, as the workload generates it.
void set_workload(Row &row, const json::Value &workload, std::set<std::string> &axes,
                  std::set<std::string> &scalars) {
  if (const json::Value *spec_axes = member_at(workload, "spec.axes"); spec_axes && spec_axes->is_object()) {
    for (const auto &[axis, value] : spec_axes->as_object()) {
      row[axis] = cell(value);
      axes.insert(axis);
    }
  }
  if (const json::Value *shape = member_at(workload, "spec.tensors.student_input.shape");
      shape != nullptr && shape->is_array() && shape->as_array().size() == 2)
    row["student_hidden"] = cell(shape->as_array()[1]);
  // The dtype of the floating-point inputs (every float tensor shares it).
  if (const json::Value *tensors = member_at(workload, "spec.tensors"); tensors && tensors->is_object()) {
    for (const auto &[name, tensor] : tensors->as_object()) {
      const std::string dtype = json::string_at(tensor, "dtype");
      if (!dtype.empty() && !dtype.starts_with("int") && !dtype.starts_with("uint")) {
        row["dtype"] = dtype;
        break;
      }
    }
  }
  set_from(row, "ignore_fraction", workload, "spec.tensors.target.data.parameters.ignore_fraction");
  if (const json::Value *spec_scalars = member_at(workload, "spec.scalars");
      spec_scalars && spec_scalars->is_object()) {
    for (const auto &[name, scalar] : spec_scalars->as_object()) {
      if (const json::Value *value = scalar.find("value")) {
        row[name] = cell(*value);
        scalars.insert(name);
      }
    }
  }
}

// The latency statistics recomputed from a run's raw samples (verified
// against their digest), rounded to whole ns as `kibench run` writes them:
// what the manifest reports is not trusted where the samples say otherwise,
// as in `kibench compare`.
void set_sample_statistics(Row &row, const compare::RawSeries &raw) {
  const stats::Summary s = stats::summarize(raw.nanoseconds());
  const auto ns = [](double value) { return json::format_number(std::round(value)); };
  row["samples"] = json::format_number(static_cast<double>(s.count));
  row["median_ns"] = ns(s.median);
  row["mean_ns"] = ns(s.mean);
  row["p05_ns"] = ns(s.p05);
  row["p20_ns"] = ns(s.p20);
  row["p80_ns"] = ns(s.p80);
  row["p95_ns"] = ns(s.p95);
  row["min_ns"] = ns(s.minimum);
  row["max_ns"] = ns(s.maximum);
  row["mad_ns"] = ns(s.mad);
  row["ci95_low_ns"] = ns(s.ci95_low);
  row["ci95_high_ns"] = ns(s.ci95_high);
}

void set_statistics(Row &row, const json::Value &run, std::set<std::string> &measurements) {
  set_from(row, "samples", run, "spec.timing.samples");
  const json::Value *latency = member_at(run, "spec.timing.latencyNs");
  if (latency != nullptr) {
    for (const auto &[key, column] : std::vector<std::pair<std::string, std::string>>{{"median", "median_ns"},
                                                                                      {"mean", "mean_ns"},
                                                                                      {"p05", "p05_ns"},
                                                                                      {"p95", "p95_ns"},
                                                                                      {"minimum", "min_ns"},
                                                                                      {"maximum", "max_ns"},
                                                                                      {"mad", "mad_ns"}})
      set_latency(row, column, latency->find(key));
    if (const json::Value *interval = latency->find("confidence95");
        interval != nullptr && interval->is_array() && interval->as_array().size() == 2) {
      set_latency(row, "ci95_low_ns", &interval->as_array()[0]);
      set_latency(row, "ci95_high_ns", &interval->as_array()[1]);
    }
  }
  if (const json::Value *list = member_at(run, "spec.measurements"); list && list->is_array()) {
    for (const json::Value &measurement : list->as_array()) {
      const json::Value *value = measurement.find("value");
      if (value == nullptr) continue;
      std::string column = measurement_column(measurement);
      if (row.contains(column)) column += "_" + json::string_at(measurement, "statistic");
      row[column] = cell(*value);
      measurements.insert(column);
    }
  }
}

Row row_of(const ExportedRun &r, std::set<std::string> &axes, std::set<std::string> &scalars,
           std::set<std::string> &measurements) {
  const compare::ComparedRun &c = r.compared;
  Row row;
  row["run_name"] = json::string_at(r.run, "metadata.name");
  row["run_digest"] = c.digest;
  row["implementation"] = c.implementation;
  row["status"] = std::string(to_string(c.status));
  set_from(row, "observed_at", r.run, "spec.observedAt");
  set_from(row, "pass", r.run, "metadata.labels.pass");
  set_from(row, "stop_reason", r.run, "metadata.labels.stop_reason");

  row["workload_name"] = json::string_at(r.workload, "metadata.name");
  row["workload_digest"] = c.workload_digest;
  row["operation_digest"] = c.operation_digest;
  set_workload(row, r.workload, axes, scalars);

  set_statistics(row, r.run, measurements);
  if (c.raw && !c.raw->samples.empty()) set_sample_statistics(row, *c.raw);
  set_from(row, "comparator", r.run, "spec.correctness.comparator");
  set_from(row, "max_absolute_error", r.run, "spec.correctness.maximumAbsoluteError");
  set_from(row, "max_relative_error", r.run, "spec.correctness.maximumRelativeError");
  set_from(row, "matched_ratio", r.run, "spec.correctness.matchedRatio");

  row["implementation_name"] = json::string_at(r.implementation, "metadata.name");
  row["implementation_digest"] = c.implementation_digest;
  set_from(row, "implementation_version", r.implementation, "spec.projectRevision.version");
  set_from(row, "implementation_commit", r.implementation, "spec.projectRevision.commit");
  set_from(row, "licence", r.implementation, "spec.licensing.declared");

  row["protocol_name"] = json::string_at(r.protocol, "metadata.name");
  row["protocol_digest"] = c.protocol_digest;
  set_from(row, "protocol_family", r.protocol, "spec.comparability.family");
  set_from(row, "timer", r.protocol, "spec.measurement.timer");
  set_from(row, "warmup_iterations", r.protocol, "spec.measurement.warmupIterations");

  row["environment_name"] = json::string_at(r.environment, "metadata.name");
  row["environment_digest"] = c.environment_digest;
  for (const auto &[column, path] : std::vector<std::pair<std::string, std::string>>{
           {"hardware_vendor", "spec.hardware.vendor"},
           {"hardware_product", "spec.hardware.product"},
           {"architecture", "spec.hardware.architecture"},
           {"hardware_count", "spec.hardware.count"},
           {"memory_bytes", "spec.hardware.memoryBytes"},
           {"operating_system", "spec.software.operatingSystem"},
           {"kernel", "spec.software.kernel"},
           {"driver", "spec.software.driver"},
           {"cuda_toolkit", "spec.software.cudaToolkit"},
           {"compiler", "spec.software.compiler"},
           {"power_limit_watts", "spec.settings.powerLimitWatts"},
           {"clocks_locked", "spec.settings.clocksLocked"},
           {"ecc_enabled", "spec.settings.eccEnabled"},
           {"persistence_mode", "spec.settings.persistenceMode"}})
    set_from(row, column, r.environment, path);

  row["comparison_key"] = c.comparison_key;
  set_from(row, "source", r.run, "spec.sourceNative.source");
  set_from(row, "external_id", r.run, "spec.sourceNative.externalId");
  set_from(row, "raw_samples_uri", r.run, "spec.timing.rawSamples.uri");
  set_from(row, "raw_samples_digest", r.run, "spec.timing.rawSamples.digest");
  return row;
}

// The named columns, then the others of `found` in name order.
void append_group(std::vector<std::string> &columns, const std::vector<std::string> &named,
                  const std::set<std::string> &found, const std::set<std::string> &taken) {
  columns.insert(columns.end(), named.begin(), named.end());
  for (const std::string &column : found) {
    if (std::find(named.begin(), named.end(), column) == named.end() && !taken.contains(column))
      columns.push_back(column);
  }
}

} // namespace

std::string render_tidy_csv(const std::vector<ExportedRun> &runs) {
  std::set<std::string> axes, scalars, measurements;
  std::vector<Row> rows;
  rows.reserve(runs.size());
  for (const ExportedRun &run : runs) rows.push_back(row_of(run, axes, scalars, measurements));

  // A name another group claims stays in that group (an axis named like a
  // scalar would otherwise get two columns).
  std::set<std::string> taken;
  for (const auto *group :
       {&kRunColumns, &kWorkloadColumns, &kAxisColumns, &kInputColumns, &kScalarColumns, &kStatisticColumns,
        &kMeasurementColumns, &kCorrectnessColumns, &kImplementationColumns, &kProtocolColumns,
        &kEnvironmentColumns, &kProvenanceColumns})
    taken.insert(group->begin(), group->end());
  std::vector<std::string> columns;
  const std::set<std::string> none;
  append_group(columns, kRunColumns, none, taken);
  append_group(columns, kWorkloadColumns, none, taken);
  append_group(columns, kAxisColumns, axes, taken);
  for (const std::string &axis : axes) taken.insert(axis);
  append_group(columns, kInputColumns, none, taken);
  append_group(columns, kScalarColumns, scalars, taken);
  for (const std::string &scalar : scalars) taken.insert(scalar);
  append_group(columns, kStatisticColumns, none, taken);
  append_group(columns, kMeasurementColumns, measurements, taken);
  append_group(columns, kCorrectnessColumns, none, taken);
  append_group(columns, kImplementationColumns, none, taken);
  append_group(columns, kProtocolColumns, none, taken);
  append_group(columns, kEnvironmentColumns, none, taken);
  append_group(columns, kProvenanceColumns, none, taken);

  std::string out = csv_record(columns);
  for (const Row &row : rows) {
    std::vector<std::string> fields;
    fields.reserve(columns.size());
    for (const std::string &column : columns) {
      const auto found = row.find(column);
      fields.push_back(found != row.end() ? found->second : std::string{});
    }
    out += csv_record(fields);
  }
  return out;
}

} // namespace kibench::exports
