#include "run/session.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/core.h>
#include <memory>

#include "digest/digest.hpp"
#include "error.hpp"
#include "harness/raw_samples.hpp"
#include "inputs/input_set.hpp"
#include "io/atomic_write.hpp"
#include "manifest/envelope.hpp"
#include "manifest/protocol_manifest.hpp"
#include "manifest/run_manifest.hpp"
#include "run/tensor_dump.hpp"
#include "json/canonical.hpp"

namespace kibench {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSeedWorkload = "seed-distill-jsd-h4096-t8192-v128256.json";
constexpr std::string_view kSmallWorkload = "small/small-v1000-h64-t32.json";

struct Candidate {
  std::string name;
  std::unique_ptr<Implementation> impl;
  ImplementationOutcome outcome;
  json::Value revision;
  std::string revision_digest;
};

std::string oracle_name(const Backend &backend) {
  return backend.gpu_unavailable_reason() ? "cpu-fp64" : "oracle-fp64";
}

// Which outputs a correctness check of `pass` compares: the backward pass
// produces gradients only, forward the loss only, full both.
bool checks_gradients(Pass pass) {
  return pass != Pass::forward;
}

// A pass whose check needs a full run: the backward pass on its own has no
// loss to compare, so correctness runs the full pass for it.
Pass check_pass(Pass pass) {
  return pass == Pass::forward ? Pass::forward : Pass::full;
}

std::string run_directory_name(const Workload &w, Pass pass, const std::string &timestamp) {
  std::string stamp = timestamp;
  std::replace(stamp.begin(), stamp.end(), ':', '-');
  return fmt::format("{}-{}-{}", stamp, w.name, to_string(pass));
}

void write_json(io::StagedDirectory &dir, const std::string &name, const json::Value &value) {
  dir.write(name, json::pretty(value) + "\n");
}

} // namespace

fs::path default_workload(const Backend &backend) {
  const fs::path dir = default_workloads_dir();
  return backend.gpu_unavailable_reason() ? dir / kSmallWorkload : dir / kSeedWorkload;
}

std::vector<std::string> default_implementations(const Backend &backend) {
  // Without a GPU the GPU implementations are still named, so the run says
  // once that they were skipped and why.
  if (backend.gpu_unavailable_reason()) return {"reference", "fused", "cublas-floor", "cpu-reference"};
  return {"reference", "fused", "cublas-floor"};
}

ReferencePoints reference_points(const WorkloadOutcome &o) {
  ReferencePoints points;
  for (const auto &i : o.implementations) {
    if (i.name == "reference" || (points.reference == nullptr && i.name == "cpu-reference"))
      points.reference = &i;
    if (i.name == "cublas-floor") points.floor = &i;
  }
  return points;
}

json::Value outcome_summary(const WorkloadOutcome &o) {
  const auto [reference, floor] = reference_points(o);
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

std::vector<WorkloadOutcome> run_session(const Backend &backend, const SessionOptions &options) {
  auto note = [&](const std::string &line) {
    if (options.note) options.note(line);
  };
  const auto gpu_missing = backend.gpu_unavailable_reason();

  // 1. Everything that can be refused is refused before any work: workloads,
  // implementation names, and cases too big for the machine.
  std::vector<fs::path> files = options.workload_files;
  if (files.empty()) files.push_back(default_workload(backend));
  std::vector<Workload> workloads;
  for (const auto &file : files) workloads.push_back(load_workload(file));

  std::vector<std::string> names = options.implementations;
  if (names.empty()) names = default_implementations(backend);
  const auto entries = backend.implementations();
  std::vector<std::string> runnable;
  std::vector<std::string> gpu_skipped;
  for (const auto &name : names) {
    auto it = std::find_if(entries.begin(), entries.end(), [&](const auto &e) { return e.name == name; });
    if (it == entries.end()) {
      std::string known;
      for (const auto &e : entries) known += (known.empty() ? "" : ", ") + e.name;
      throw InputError(fmt::format("--impl: unknown implementation \"{}\" (known: {})", name, known));
    }
    if (it->needs_gpu && gpu_missing) {
      gpu_skipped.push_back(name);
      continue;
    }
    if (std::find(runnable.begin(), runnable.end(), name) == runnable.end()) runnable.push_back(name);
  }
  if (!gpu_skipped.empty()) {
    std::string list;
    for (const auto &n : gpu_skipped) list += (list.empty() ? "" : ", ") + n;
    note(fmt::format("GPU implementations skipped ({}): {}", list, *gpu_missing));
  }
  const std::string oracle = oracle_name(backend);
  for (const auto &w : workloads) {
    auto probe = backend.make(oracle);
    if (auto why = probe->unsupported(w)) throw InputError(fmt::format("{}: {}", w.source.string(), *why));
  }
  if (runnable.empty()) throw InputError("no implementation can run on this machine; see `kibench list`");

  ProtocolSettings settings = options.settings;
  settings.timer = gpu_missing ? "steady_clock" : "cuda_events";
  if (gpu_missing) settings.cold = false; // no device cache to flush on the CPU path
  const json::Value protocol = protocol_manifest(settings, oracle);
  const std::string protocol_digest = manifest_digest(protocol);
  const json::Value environment = environment_manifest(backend.environment());
  const std::string environment_digest = manifest_digest(environment);

  std::vector<WorkloadOutcome> outcomes;
  for (const Workload &workload : workloads) {
    WorkloadOutcome outcome;
    outcome.workload = workload;
    outcome.oracle = oracle;
    const std::string workload_digest = manifest_digest(workload.manifest);
    InputSet inputs(workload);
    const std::string started_at = utc_timestamp_now();
    std::unique_ptr<TensorDump> dump;
    if (options.save_tensors) {
      dump = std::make_unique<TensorDump>(
          *options.save_tensors / run_directory_name(workload, settings.pass, started_at), backend);
      dump->add_inputs(inputs);
    }

    // 2. The oracle's answer, kept while the candidates are checked.
    auto reference = backend.make(oracle);
    reference->prepare(workload, inputs);
    reference->run(check_pass(settings.pass));
    const OutputView truth = reference->outputs();
    outcome.oracle_loss = truth.loss;
    if (dump) dump->add_outputs(oracle, truth, workload);

    // 3. Correctness before timing, on poisoned outputs.
    std::vector<Candidate> candidates;
    for (const auto &name : runnable) {
      Candidate c{name, backend.make(name), {}, {}, {}};
      if (auto why = c.impl->unsupported(workload)) {
        outcome.skipped.emplace_back(name, *why);
        note(fmt::format("{}: {} skipped: {}", workload.name, name, *why));
        continue;
      }
      c.revision = c.impl->revision();
      c.revision_digest = manifest_digest(c.revision);
      c.outcome.name = name;
      c.outcome.computes_loss = c.impl->computes_loss();
      c.impl->prepare(workload, inputs);
      if (c.outcome.computes_loss) {
        c.impl->poison_outputs();
        c.impl->run(check_pass(settings.pass));
        const OutputView out = c.impl->outputs();
        c.outcome.loss = out.loss;
        if (dump && name != oracle) dump->add_outputs(name, out, workload); // the oracle's are there
        auto errors = backend.compare(out, truth, checks_gradients(settings.pass));
        c.outcome.verdict = make_verdict(std::move(errors), workload.correctness);
        c.outcome.status = c.outcome.verdict->passed ? "passed" : "incorrect_numerical";
        if (!c.outcome.verdict->passed)
          note(fmt::format("{}: {} FAILED correctness: {}", workload.name, name, c.outcome.verdict->summary));
      } else {
        // Times work without computing the loss: there is nothing to check,
        // so it is never evidence of a correct result.
        c.outcome.status = "incomplete_evidence";
      }
      candidates.push_back(std::move(c));
    }
    reference->release();
    reference.reset();
    if (dump) dump->commit();

    // 4. Timing, interleaved across the candidates.
    std::vector<Implementation *> timed;
    for (auto &c : candidates) timed.push_back(c.impl.get());
    std::vector<Measurement> measurements = measure(timed, settings, options.progress);

    // 5. Manifests, written into a staged directory and moved into place.
    const std::string observed_at = utc_timestamp_now();
    const fs::path run_dir = options.out_dir / run_directory_name(workload, settings.pass, observed_at);
    io::StagedDirectory dir(run_dir);
    write_json(dir, "operation.json", workload.operation);
    write_json(dir, "workload.json", workload.manifest);
    write_json(dir, "protocol.json", protocol);
    write_json(dir, "environment.json", environment);
    const double flops = workload.gemm_flops(settings.pass != Pass::forward);
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      Candidate &c = candidates[k];
      ImplementationOutcome &o = c.outcome;
      o.measurement = std::move(measurements[k]);
      std::vector<double> ns;
      std::size_t throttled = 0;
      for (const auto &s : o.measurement.samples) {
        ns.push_back(s.ns);
        throttled += s.throttled ? 1 : 0;
      }
      o.latency_ns = stats::summarize(ns);
      o.memory = c.impl->memory();
      o.tflops = flops / (o.latency_ns.median * 1e-9) * 1e-12;

      const std::string samples_name = fmt::format("samples.{}.json", c.name);
      const std::string samples_text = json::pretty(raw_samples_document(o.measurement, observed_at)) + "\n";
      dir.write(samples_name, samples_text);
      write_json(dir, fmt::format("implementation.{}.json", c.name), c.revision);

      RunRecord record;
      // The timestamp comes before the workload name so the 100-character
      // cut never removes what tells two runs apart.
      record.name = kebab(
          fmt::format("kibench-{}-{}-{}-{}", c.name, to_string(settings.pass), observed_at, workload.name));
      record.title = fmt::format("{} · {} · {} pass", c.name, workload.name, to_string(settings.pass));
      record.implementation_digest = c.revision_digest;
      record.workload_digest = workload_digest;
      record.protocol_digest = protocol_digest;
      record.environment_digest = environment_digest;
      record.status = o.status;
      record.comparator = workload.correctness.comparator;
      record.verdict = o.verdict;
      record.latency_ns = o.latency_ns;
      record.raw_samples_uri = samples_name;
      record.raw_samples_digest = sha256_digest(samples_text);
      record.observed_at = observed_at;
      record.extra_measurements.push_back(measurement("throughput", "tflops", "median", o.tflops));
      record.extra_measurements.push_back(
          measurement("peak_memory", "bytes", "maximum", static_cast<double>(o.memory.peak_bytes)));
      record.extra_measurements.push_back(
          measurement("workspace_memory", "bytes", "maximum", static_cast<double>(o.memory.workspace_bytes)));
      record.extra_measurements.push_back(
          measurement("throttled_samples", "count", "count", static_cast<double>(throttled)));
      if (o.verdict)
        for (const auto &e : o.verdict->outputs)
          if (std::isfinite(e.rel_l2_error))
            record.extra_measurements.push_back(
                measurement("rel_l2_error_" + e.output, "ratio", "value", e.rel_l2_error));
      record.labels.set("implementation", c.name);
      record.labels.set("pass", std::string(to_string(settings.pass)));
      record.labels.set("stop_reason", o.measurement.stop_reason);
      const json::Value run = run_manifest(record);
      o.run_digest = manifest_digest(run);
      write_json(dir, fmt::format("run.{}.json", c.name), run);
      c.impl->release();
      outcome.implementations.push_back(o);
    }
    write_json(dir, "summary.json", outcome_summary(outcome));
    dir.commit();
    outcome.run_dir = run_dir;
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

} // namespace kibench
