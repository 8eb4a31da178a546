#include "lib/run/session.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <memory>
#include <stdexcept>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/harness/power_conditioner.hpp"
#include "lib/implementation/implementation_failure.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/io/output_directory.hpp"
#include "lib/json/canonical.hpp"
#include "lib/manifest/implementation_manifest.hpp"
#include "lib/manifest/protocol_manifest.hpp"
#include "lib/manifest/run_manifest.hpp"
#include "lib/run/implementation_files.hpp"
#include "lib/run/run_directory_name.hpp"
#include "lib/run/tensor_dump.hpp"

namespace kibench {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSeedWorkload = "seed-distill-jsd-h4096-t8192-v128256.json";
constexpr std::string_view kSmallWorkload = "small/small-v1000-h64-t32.json";

struct Candidate {
  std::string name;
  std::unique_ptr<Implementation> impl;
  ImplementationFacts facts;
  json::Value revision;
  std::string revision_digest;
};

// Records a lane's failure: its status and reason, no measurement.
void fail(Candidate &c, const LaneFailure &failure) {
  c.facts.status = failure.status;
  c.facts.failure = failure.reason.empty() ? std::string("failed without a message") : failure.reason;
  c.facts.measurement = Measurement{};
}

std::string oracle_name(const Backend &backend) {
  return backend.gpu_unavailable_reason() ? "cpu-fp64" : "oracle-fp64";
}

// A pass whose check needs a full run: the backward pass on its own has no
// loss to compare, so correctness runs the full pass for it.
Pass check_pass(Pass pass) {
  return pass == Pass::forward ? Pass::forward : Pass::full;
}

void write_json(io::StagedDirectory &dir, const std::string &name, const json::Value &value) {
  dir.write(name, json_file_text(value));
}

} // namespace

fs::path default_workload(const Backend &backend) {
  const fs::path dir = default_workloads_dir();
  return backend.gpu_unavailable_reason() ? dir / kSmallWorkload : dir / kSeedWorkload;
}

std::vector<std::string> default_implementations(const Backend &backend) {
  // Without a GPU the GPU implementations are still named, so the run says
  // once that they were skipped and why.
  if (backend.gpu_unavailable_reason())
    return {"reference", "fused", "cublas-floor", "wgmma-floor", "cpu-reference"};
  return {"reference", "fused", "cublas-floor", "wgmma-floor"};
}

std::vector<WorkloadOutcome> run_session(const Backend &backend, const SessionOptions &options) {
  auto note = [&](const std::string &line) {
    if (options.note) options.note(line);
  };
  const auto gpu_missing = backend.gpu_unavailable_reason();

  // 1. Everything that can be refused is refused before any work: workloads,
  // implementation names, cases too big for the machine, and output folders
  // that cannot be written.
  if (const int gpus = backend.run_gpus(); gpus > 1) {
    if (gpu_missing) throw InputError(fmt::format("--gpus {}: no GPU: {}", gpus, *gpu_missing));
    if (backend.gpu_count() < gpus)
      throw InputError(fmt::format("--gpus {}: this machine has {} GPU{}", gpus, backend.gpu_count(),
                                   backend.gpu_count() == 1 ? "" : "s"));
  }
  std::vector<fs::path> files = options.workload_files;
  if (files.empty()) files.push_back(default_workload(backend));
  std::vector<Workload> workloads;
  for (const auto &file : files)
    for (Workload &w : expand_sweep(load_workload(file), options.axes)) workloads.push_back(std::move(w));

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
  // A power state is brought about on a GPU: without one in the run the
  // setting would be recorded but not done, so it is refused.
  const PowerState power_state = options.settings.power_state;
  std::unique_ptr<PowerTelemetry> telemetry;
  if (power_state != PowerState::as_is) {
    const bool any_gpu = std::any_of(runnable.begin(), runnable.end(), [&](const std::string &name) {
      return std::find_if(entries.begin(), entries.end(),
                          [&](const auto &e) { return e.name == name && e.needs_gpu; }) != entries.end();
    });
    if (!any_gpu)
      throw InputError(fmt::format("--power-state {}: needs a GPU: {}", to_string(power_state),
                                   gpu_missing ? *gpu_missing : "no GPU implementation in this run"));
    if (power_state == PowerState::rested) {
      telemetry = backend.power_telemetry();
      const BoardReading now = telemetry ? telemetry->read() : BoardReading{};
      if (!now.sm_clock_mhz || !now.power_w)
        throw InputError(fmt::format("--power-state rested: needs a GPU: {}",
                                     telemetry ? "NVML gives no SM clock or no instantaneous board power"
                                               : "NVML is not available"));
    }
  }
  if (!gpu_skipped.empty()) {
    std::string list;
    for (const auto &n : gpu_skipped) list += (list.empty() ? "" : ", ") + n;
    note(fmt::format("GPU implementations skipped ({}): {}", list, *gpu_missing));
  }
  const std::string oracle = oracle_name(backend);
  for (const auto &w : workloads) {
    auto probe = backend.make(oracle);
    if (auto why = other_operation(*probe, w)) throw InputError(fmt::format("{}: {}", w.source.string(), *why));
    if (auto why = probe->unsupported(w)) throw InputError(fmt::format("{}: {}", w.source.string(), *why));
  }
  if (runnable.empty()) throw InputError("no implementation can run on this machine; see `kibench list`");
  std::vector<io::OutputFolder> folders{{options.out_dir, "--out"}};
  if (options.save_tensors) folders.push_back({*options.save_tensors, "--save-tensors"});
  io::prepare_output_directories(folders);

  // The clocks, locked before anything is measured or probed, for as long
  // as the session runs (the guard resets them, on signals too).
  std::unique_ptr<ClockControl> clocks = backend.clock_control();
  std::optional<ClockLockGuard> clock_lock;
  if (options.lock_clocks) {
    if (gpu_missing) {
      note(fmt::format("--lock-clocks {}: no GPU to lock ({})", to_string(*options.lock_clocks),
                       *gpu_missing));
    } else if (!clocks) {
      note(fmt::format("--lock-clocks {}: NVML is not available; timing on the clocks as they are",
                       to_string(*options.lock_clocks)));
    } else {
      clock_lock.emplace(*clocks, *options.lock_clocks, note);
    }
  }

  ProtocolSettings settings = options.settings;
  settings.timer = gpu_missing ? "steady_clock" : "cuda_events";
  if (gpu_missing) settings.cold = false; // no device cache to flush on the CPU path
  settings.clocks_locked = clock_lock && clock_lock->locked();
  settings.gpus = backend.run_gpus();
  const json::Value protocol = protocol_manifest(settings, oracle);
  const std::string protocol_digest = manifest_digest(protocol);
  EnvironmentFacts facts = backend.environment();
  if (settings.clocks_locked) {
    // A lock NVML cannot read back: what kibench set is what is known.
    ClockReadings readings;
    readings.locked_by_kibench = options.lock_clocks;
    readings.locked_mhz = clock_lock->locked_mhz();
    facts.clocks_locked = true;
    facts.labels["clock_state"] = clock_state(readings).description;
  } else if (!gpu_missing && !facts.clocks_locked) {
    note(fmt::format("GPU clocks are not locked ({}): medians follow boost and the power limiter; "
                     "--lock-clocks base|max locks them where NVML allows (root)",
                     facts.labels.contains("clock_state") ? facts.labels.at("clock_state")
                                                          : "NVML not available"));
  }
  // rested: the idle band, read once on the GPU before any work of the run
  // (and after the clocks are locked: the lock moves the idle clock).
  std::unique_ptr<PowerConditioner> conditioner;
  json::Object power_state_labels;
  if (power_state == PowerState::rested) {
    const auto band = idle_band(read_idle(*telemetry, WaitClock::steady()));
    if (!band)
      throw std::runtime_error("--power-state rested: NVML stopped giving SM clock or power readings");
    note(fmt::format("--power-state rested: each GPU sample starts once {} (at most {} s)", band->describe(),
                     json::format_number(power_state::kRestBoundS)));
    power_state_labels.set("power_state_idle_band", band->describe());
    conditioner = std::make_unique<RestedConditioner>(*telemetry, *band);
  } else if (power_state == PowerState::loaded) {
    conditioner = std::make_unique<LoadedConditioner>();
  }
  const json::Value environment = environment_manifest(facts);
  const std::string environment_digest = manifest_digest(environment);

  std::vector<WorkloadOutcome> outcomes;
  for (std::size_t index = 0; index < workloads.size(); ++index) {
    const Workload &workload = workloads[index];
    // The harness's reports, and the session's own phases, with the workload.
    const ProgressCallback progress = [&](const Progress &p) {
      if (!options.progress) return;
      Progress with = p;
      with.workload_index = index;
      with.workload_count = workloads.size();
      with.workload = workload.name;
      options.progress(with);
    };
    const auto phase = [&](Phase what, const std::string &implementation) {
      Progress p;
      p.phase = what;
      p.implementation = implementation;
      progress(p);
    };
    WorkloadOutcome outcome;
    outcome.workload = workload;
    outcome.oracle = oracle;
    outcome.noise_target = settings.max_noise;
    const std::string workload_digest = manifest_digest(workload.manifest);
    InputSet inputs(workload);
    const std::string started_at = utc_timestamp_now();
    std::unique_ptr<TensorDump> dump;
    if (options.save_tensors) {
      dump = std::make_unique<TensorDump>(
          *options.save_tensors / run_directory_name(workload.name, settings.pass, started_at), backend);
      dump->add_inputs(inputs);
    }

    // 2. The oracle's answer, kept while the candidates are checked.
    phase(Phase::oracle, oracle);
    auto reference = backend.make(oracle);
    reference->prepare(workload, inputs);
    reference->run(check_pass(settings.pass));
    const OutputView truth = reference->outputs();
    outcome.oracle_loss = truth.loss;
    if (dump) dump->add_outputs(oracle, truth, workload);

    // 3. Correctness before timing, on poisoned outputs. A lane that throws
    // here fails alone (its status and reason are recorded) and is not timed.
    std::vector<Candidate> candidates;
    for (const auto &name : runnable) {
      Candidate c{name, backend.make(name), {}, {}, {}};
      c.revision = implementation_manifest(c.impl->revision_for(workload.operation_kind));
      c.revision_digest = manifest_digest(c.revision);
      c.facts.name = name;
      try {
        auto why = other_operation(*c.impl, workload);
        if (!why) why = c.impl->unsupported_for(workload, settings.pass);
        if (why) {
          outcome.skipped.emplace_back(name, *why);
          note(fmt::format("{}: {} skipped: {}", workload.name, name, *why));
          continue;
        }
        // An implementation that times work without computing the loss has
        // nothing to check, so it is never evidence of a correct result.
        phase(Phase::check, name);
        const bool computes_loss = c.impl->computes_loss();
        c.impl->prepare(workload, inputs);
        if (computes_loss) {
          c.impl->poison_outputs();
          c.impl->run(check_pass(settings.pass));
          const OutputView out = c.impl->outputs();
          c.facts.loss = out.loss;
          if (dump && name != oracle) dump->add_outputs(name, out, workload); // the oracle's are there
          auto errors = backend.compare(out, truth, checks_gradients(settings.pass));
          c.facts.verdict = make_verdict(std::move(errors), workload.correctness);
          if (!c.facts.verdict->passed)
            note(fmt::format("{}: {} FAILED correctness: {}", workload.name, name, c.facts.verdict->summary));
        }
        c.facts.status = status_of_check(c.facts.verdict);
      } catch (const std::exception &e) {
        fail(c, failure_of(e));
      }
      candidates.push_back(std::move(c));
    }
    reference->release();
    reference.reset();
    if (dump) dump->commit();

    // 4. Timing, interleaved across the candidates that have not failed.
    std::vector<Implementation *> timed;
    for (auto &c : candidates)
      if (!c.facts.failed()) timed.push_back(c.impl.get());
    std::vector<Measurement> measurements = measure(timed, settings, progress, conditioner.get());

    // 5. Manifests, written into a staged directory and moved into place.
    const std::string observed_at = utc_timestamp_now();
    const fs::path run_dir = options.out_dir / run_directory_name(workload.name, settings.pass, observed_at);
    io::StagedDirectory dir(run_dir);
    write_json(dir, "operation.json", workload.operation);
    write_json(dir, "workload.json", workload.manifest);
    write_json(dir, "protocol.json", protocol);
    write_json(dir, "environment.json", environment);
    RunDirectoryContext context;
    context.workload = &workload;
    context.pass = settings.pass;
    context.workload_digest = workload_digest;
    context.protocol_digest = protocol_digest;
    context.environment_digest = environment_digest;
    context.observed_at = observed_at;
    if (!options.label.empty()) context.extra_labels.set("run_label", options.label);
    for (const auto &[key, value] : options.extra_labels) context.extra_labels.set(key, value);
    for (const auto &[key, value] : power_state_labels) context.extra_labels.set(key, value);
    std::size_t measured = 0;
    for (Candidate &c : candidates) {
      ImplementationFacts &f = c.facts;
      if (!f.failed()) {
        f.measurement = std::move(measurements[measured++]);
        if (f.measurement.failure) fail(c, *f.measurement.failure);
      }
      if (!f.failed()) {
        try {
          f.memory = c.impl->memory();
          f.labels = c.impl->run_labels();
        } catch (const std::exception &e) {
          fail(c, failure_of(e));
        }
      }
      if (f.failed())
        note(fmt::format("{}: {} failed ({}): {}", workload.name, c.name, to_string(f.status), f.failure));
      outcome.implementations.push_back(
          record_implementation(dir, context, json_file_text(c.revision), c.revision_digest, std::move(f)));
      try {
        c.impl->release();
      } catch (const std::exception &e) {
        note(fmt::format("{}: {} release: {}", workload.name, c.name, e.what()));
      }
    }
    write_json(dir, "summary.json", outcome_summary(outcome));
    dir.commit();
    outcome.run_dir = dir.final_path();
    if (options.workload_done) options.workload_done(outcome);
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

} // namespace kibench
