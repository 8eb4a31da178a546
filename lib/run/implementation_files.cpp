#include "lib/run/implementation_files.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

#include "lib/digest/digest.hpp"
#include "lib/harness/raw_samples.hpp"
#include "lib/json/canonical.hpp"
#include "lib/manifest/envelope.hpp"
#include "lib/manifest/run_manifest.hpp"
#include "lib/workload/field_reader.hpp"

namespace kibench {

std::string json_file_text(const json::Value &value) {
  return json::pretty(value) + "\n";
}

void add_run_labels(json::Object &into, const json::Object &labels, std::string_view implementation) {
  // Label keys follow KernelIndex's identifier pattern.
  for (const auto &[key, value] : labels) {
    if (!detail::is_identifier(key))
      throw std::logic_error(
          fmt::format("{}: run label key '{}' is not [a-z][a-z0-9_]*", implementation, key));
    if (!value.is_string() || value.as_string().size() > 200)
      throw std::logic_error(
          fmt::format("{}: run label '{}' is not a string of at most 200 characters", implementation, key));
    if (into.contains(key))
      throw std::logic_error(fmt::format("{}: run label '{}' is the harness's own", implementation, key));
    into.set(key, value);
  }
}

namespace {

// The sustained phase's figures (harness/sustained.hpp), as measurements
// beside the cold samples' statistics. Of one round: means over its
// invocations (power: over its counter steps), sampleCount those. Of
// several: the medians over the rounds of those means, sampleCount the
// rounds.
void add_sustained_measurements(RunRecord &record, const SustainedMeasurement &m, const SustainedFigures &f) {
  auto &out = record.extra_measurements;
  const bool several = m.rounds.size() > 1;
  std::size_t powered = 0;
  for (const SustainedRound &r : m.rounds) powered += r.power ? 1 : 0;
  const char *statistic = several ? "median" : "mean";
  const std::size_t timed = several ? m.rounds.size() : m.invocations;
  out.push_back(measurement("sustained_latency", "ns", statistic, m.latency_ns, timed));
  out.push_back(measurement("sustained_throughput", "tflops", statistic, f.tflops, timed));
  if (!m.power) return;
  out.push_back(measurement("power", "watts", statistic, m.power->power_w, several ? powered : m.power->steps));
  out.push_back(measurement("energy", "joules", statistic, *f.energy_j, several ? powered : m.invocations));
  if (m.power->sm_clock_mhz)
    out.push_back(measurement("sustained_sm_clock", "mhz", "mean", *m.power->sm_clock_mhz));
}

// Each round of the sustained phase, in the order they ran, for a reader
// who wants the spread behind the medians: "3 rounds: 33.768 ms 23.53 J
// 697 W, ...".
std::string sustained_rounds_label(const SustainedMeasurement &m) {
  std::string text = fmt::format("{} round{}:", m.rounds.size(), m.rounds.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < m.rounds.size(); ++i) {
    const SustainedRound &r = m.rounds[i];
    text += fmt::format("{} {:.3f} ms", i == 0 ? "" : ",", r.latency_ns * 1e-6);
    if (r.power) text += fmt::format(" {:.2f} J {:.0f} W", *r.energy_j(), r.power->power_w);
  }
  return text;
}

// --power-state rested: how many samples started at the wait's bound
// rather than in the idle band (each sample's wait is in the raw samples).
void add_rest_label(json::Object &labels, const Measurement &m) {
  std::size_t rested = 0, at_bound = 0;
  for (const Sample &s : m.samples) {
    if (!s.rest) continue;
    ++rested;
    at_bound += s.rest->hit_bound ? 1 : 0;
  }
  if (rested == 0) return;
  labels.set("rest_timeouts", fmt::format("{} of {} samples started at the {} s bound, not in the idle band",
                                          at_bound, rested, json::format_number(power_state::kRestBoundS)));
}

// What a sample cost in wall time beside what was timed: where a lane's
// samples are few, this says why (another input set generated, a large
// output checked).
void add_sampling_wall_label(json::Object &labels, const Measurement &m) {
  if (m.samples.empty() || !(m.sampling_wall_s > 0.0)) return;
  double timed_s = 0.0;
  for (const Sample &s : m.samples) timed_s += s.ns * 1e-9;
  labels.set("sampling_wall", fmt::format("{:.3f} s for {} samples ({:.3f} s timed)", m.sampling_wall_s,
                                          m.samples.size(), timed_s));
}

} // namespace

std::string write_implementation_files(io::StagedDirectory &dir, const RunDirectoryContext &context,
                                       std::string_view revision_text, const std::string &revision_digest,
                                       const ImplementationFacts &o, const ImplementationResult &result) {
  if (result.latency_ns.count != o.measurement.samples.size() ||
      result.sustained.has_value() != o.measurement.sustained.has_value())
    throw std::logic_error(
        fmt::format("{}: the result passed is not summarize() of its measurement", o.name));
  const Workload &workload = *context.workload;
  const std::string pass(to_string(context.pass));
  dir.write(fmt::format("implementation.{}.json", o.name), revision_text);

  RunRecord record;
  // The timestamp comes before the workload name so the 100-character
  // cut never removes what tells two runs apart.
  record.name =
      kebab(fmt::format("{}-{}-{}-{}-{}", context.harness, o.name, pass, context.observed_at, workload.name));
  record.title = fmt::format("{} · {} · {} pass", o.name, workload.name, pass);
  record.implementation_digest = revision_digest;
  record.workload_digest = context.workload_digest;
  record.protocol_digest = context.protocol_digest;
  record.environment_digest = context.environment_digest;
  record.status = o.status;
  record.comparator = workload.correctness.comparator;
  record.verdict = o.verdict;
  if (o.failed()) {
    // Nothing was measured: the run says why, and carries no timing.
    record.timed = false;
    record.description = o.failure;
  } else {
    const std::string samples_name = fmt::format("samples.{}.json", o.name);
    const std::string samples_text = json_file_text(raw_samples_document(o.measurement, context.observed_at));
    dir.write(samples_name, samples_text);
    record.latency_ns = result.latency_ns;
    record.raw_samples_uri = samples_name;
    record.raw_samples_digest = sha256_digest(samples_text);
  }
  record.observed_at = context.observed_at;
  if (!o.failed()) {
    record.extra_measurements.push_back(measurement("throughput", "tflops", "median", result.tflops));
    // Where no GEMM bounds the pass: its minimum bytes over the median.
    if (result.gbps > 0.0)
      record.extra_measurements.push_back(measurement("bandwidth", "gb_per_s", "median", result.gbps));
    // Memory that was not measured is left out, never recorded as 0.
    if (o.memory.measured) {
      record.extra_measurements.push_back(
          measurement("peak_memory", "bytes", "maximum", static_cast<double>(o.memory.peak_bytes)));
      record.extra_measurements.push_back(
          measurement("workspace_memory", "bytes", "maximum", static_cast<double>(o.memory.workspace_bytes)));
    }
    record.extra_measurements.push_back(
        measurement("throttled_samples", "count", "count", static_cast<double>(result.throttled_samples)));
  }
  if (o.measurement.sustained)
    add_sustained_measurements(record, *o.measurement.sustained, *result.sustained);
  // Each output's relative error, and the loss's absolute error where the
  // policy judges the loss by it (docs/protocol.md, "Correctness policy").
  if (o.verdict)
    for (const auto &e : o.verdict->outputs) {
      if (std::isfinite(e.rel_l2_error))
        record.extra_measurements.push_back(
            measurement("rel_l2_error_" + e.output, "ratio", "value", e.rel_l2_error));
      if (e.nonfinite == 0 && workload.correctness.loss_rule_for(e.output))
        record.extra_measurements.push_back(
            measurement("max_abs_error_" + e.output, "absolute", "value", e.max_abs_error));
    }
  record.labels.set("implementation", o.name);
  record.labels.set("pass", pass);
  if (!o.failed()) record.labels.set("stop_reason", o.measurement.stop_reason);
  if (o.measurement.sustained) {
    record.labels.set("power_monitor", o.measurement.sustained->monitor);
    if (o.measurement.sustained->rounds.size() > 1)
      record.labels.set("sustained_rounds", sustained_rounds_label(*o.measurement.sustained));
  }
  if (!o.failed()) add_rest_label(record.labels, o.measurement);
  if (!o.failed()) add_sampling_wall_label(record.labels, o.measurement);
  for (const auto &[key, value] : context.extra_labels) record.labels.set(key, value);
  add_run_labels(record.labels, o.labels, o.name);
  const json::Value run = run_manifest(record);
  dir.write(fmt::format("run.{}.json", o.name), json_file_text(run));
  return manifest_digest(run);
}

ImplementationOutcome record_implementation(io::StagedDirectory &dir, const RunDirectoryContext &context,
                                            std::string_view revision_text,
                                            const std::string &revision_digest, ImplementationFacts facts) {
  ImplementationOutcome o{std::move(facts), {}, {}};
  if (!o.facts.failed()) o.result = summarize(o.facts.measurement, *context.workload, context.pass);
  o.run_digest = write_implementation_files(dir, context, revision_text, revision_digest, o.facts, o.result);
  return o;
}

} // namespace kibench
