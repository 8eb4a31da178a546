#include "lib/run/session.hpp"

#include <algorithm>
#include <cstdint>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/harness/power_conditioner.hpp"
#include "lib/implementation/implementation_failure.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/io/output_directory.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/io/text_rules.hpp"
#include "lib/json/canonical.hpp"
#include "lib/manifest/implementation_manifest.hpp"
#include "lib/manifest/protocol_manifest.hpp"
#include "lib/manifest/run_manifest.hpp"
#include "lib/run/calibration_step.hpp"
#include "lib/run/implementation_files.hpp"
#include "lib/run/memory_plan.hpp"
#include "lib/run/run_directory_name.hpp"
#include "lib/run/tensor_dump.hpp"
#include "lib/run/trusted_samples.hpp"
#include "lib/worker/protocol.hpp"
#include "lib/worker/remote_implementation.hpp"

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
  std::uint64_t device_need = 0; // its own peak on the device, measured in its check
  MemoryUse checked_memory;      // what it held in its check (prepare and one call, alone)
  std::string observed_at;       // when its timing group finished ("" if never timed)
};

// Each figure's larger value.
MemoryUse largest(const MemoryUse &a, const MemoryUse &b) {
  // What was measured outweighs what was not.
  if (a.measured != b.measured) {
    MemoryUse out = a.measured ? a : b;
    out.output_bytes = std::max(a.output_bytes, b.output_bytes);
    return out;
  }
  return {std::max(a.input_bytes, b.input_bytes), std::max(a.output_bytes, b.output_bytes),
          std::max(a.workspace_bytes, b.workspace_bytes), std::max(a.peak_bytes, b.peak_bytes), a.measured};
}

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

// What kibench keeps free on the device beside the lanes timed together:
// the CUDA context's growth, cuBLASLt's and the libraries' own buffers.
constexpr std::uint64_t kDeviceMarginBytes = std::uint64_t{1} << 30;

// One workload's way through the pipeline: what each step reads, and the
// outcome they fill in.
struct WorkloadRun {
  const Backend &backend;
  const SessionOptions &options;
  const ProtocolSettings &settings;
  const Workload &workload;
  const ProgressCallback &progress;
  std::function<void(const std::string &)> note;
  PowerConditioner *conditioner;
  WorkloadOutcome outcome;
  // kibench's own bytes on GPU 0 while the oracle ran, and while the lanes
  // did (nullopt without a GPU).
  std::optional<std::uint64_t> oracle_footprint, lane_footprint;
  // What rotated among the workload's input sets (ProtocolSettings::rotation).
  std::string input_rotation;

  void phase(Phase what, const std::string &implementation) const {
    Progress p;
    p.phase = what;
    p.implementation = implementation;
    progress(p);
  }
};

// The oracle's outputs copied to the host, so that its device memory (the
// widened inputs and logit chunks: 13 GB at the seed) is free before any
// lane runs. Host tensors are compared on the device chunk by chunk.
struct KeptOutputs {
  std::vector<unsigned char> grad_input, grad_weight, grad_bias;
  OutputView view;
  KeptOutputs() = default;
  KeptOutputs(const KeptOutputs &) = delete;
  KeptOutputs &operator=(const KeptOutputs &) = delete;
  KeptOutputs(KeptOutputs &&) = default; // the vectors' buffers, and so the view, stay put
};

KeptOutputs keep_on_host(const Backend &backend, const OutputView &out) {
  KeptOutputs kept;
  kept.view.loss = out.loss;
  const auto keep = [&](const TensorRef &t, std::vector<unsigned char> &bytes, TensorRef &into) {
    if (t.empty()) return;
    bytes = backend.to_host_bytes(t);
    into = TensorRef{bytes.data(), t.type, t.count, false};
  };
  keep(out.grad_student_input, kept.grad_input, kept.view.grad_student_input);
  keep(out.grad_student_weight, kept.grad_weight, kept.view.grad_student_weight);
  keep(out.grad_student_bias, kept.grad_bias, kept.view.grad_student_bias);
  return kept;
}

// The kept answer copied to the device for the timed checks, where it fits
// beside the largest timing group: each checked sample then reads it there
// instead of staging it from the host (about 0.25 s for the seed's 2.1 GB
// of fp64 gradients, at each of ~8 checked samples per lane).
struct DeviceTruth {
  std::vector<DeviceCopy> copies;
  OutputView view;
};

std::optional<DeviceTruth> truth_on_device(const Backend &backend, const OutputView &kept) {
  DeviceTruth truth;
  truth.view.loss = kept.loss;
  for (const worker::OutputSlot &slot : worker::kOutputSlots) {
    const TensorRef &host = kept.*slot.member;
    if (host.empty()) continue;
    auto copy = backend.copy_to_device(host);
    if (!copy) return std::nullopt;
    truth.view.*slot.member = copy->view;
    truth.copies.push_back(std::move(*copy));
  }
  return truth;
}

// A lane's own device bytes at its peak: what it allocated beyond the
// shared inputs (which kibench holds for every lane).
std::uint64_t device_need(const Implementation &impl) {
  if (!impl.needs_gpu()) return 0;
  const MemoryUse m = impl.memory();
  return m.peak_bytes - std::min(m.input_bytes, m.peak_bytes);
}

void release_quietly(const WorkloadRun &run, Candidate &c) {
  try {
    c.impl->release();
  } catch (const std::exception &e) {
    run.note(fmt::format("{}: {} release: {}", run.workload.name, c.name, e.what()));
  }
}

// The numbers a lane out of device memory is told: kibench's own share and
// the board's size.
std::string device_footprint(const WorkloadRun &run) {
  const auto memory = run.backend.device_memory();
  if (!memory) return "";
  return fmt::format(" (kibench itself holds {} of the {} {}; {} free)", format_gib(memory->kibench_bytes),
                     format_gib(memory->total_bytes), memory->board, format_gib(memory->free_bytes));
}

// 2. The oracle's answer, kept on the host while the lanes are checked and
// timed; the oracle itself is released first.
// `record`: the workload's own answer (set 0), whose loss, tensors and
// footprint the run reports; another input set's is only kept.
KeptOutputs run_oracle(WorkloadRun &run, const std::string &oracle, InputSet &inputs, TensorDump *dump,
                       bool record = true) {
  run.phase(Phase::oracle, oracle);
  auto reference = run.backend.make(oracle);
  reference->prepare(run.workload, inputs);
  reference->run(check_pass(run.settings.pass));
  const OutputView out = reference->outputs();
  if (record) {
    run.outcome.oracle_loss = out.loss;
    if (dump) dump->add_outputs(oracle, out, run.workload);
    if (const auto memory = run.backend.device_memory()) run.oracle_footprint = memory->kibench_bytes;
  }
  KeptOutputs kept = keep_on_host(run.backend, out);
  reference->release();
  return kept;
}

// 3. One lane's correctness, alone on the device beside kibench's inputs:
// on poisoned outputs, against the kept truth; its peak memory is measured
// and it is released. A lane that throws fails alone (status and reason
// recorded) and is not timed; nullopt for a lane that does not run here.
std::optional<Candidate> check_lane(WorkloadRun &run, const std::string &name, InputSet &inputs,
                                    InputGuard &input_guard, const OutputView &truth, TensorDump *dump) {
  Candidate c{name, run.backend.make(name), {}, {}, {}, 0, {}, {}};
  c.revision = implementation_manifest(c.impl->revision_for(run.workload.operation_kind));
  c.revision_digest = manifest_digest(c.revision);
  c.facts.name = name;
  try {
    auto why = other_operation(*c.impl, run.workload);
    if (!why) why = c.impl->unsupported_for(run.workload, run.settings.pass);
    if (why) {
      run.outcome.skipped.emplace_back(name, *why);
      run.note(fmt::format("{}: {} skipped: {}", run.workload.name, name, *why));
      return std::nullopt;
    }
    // An implementation that times work without computing the loss has
    // nothing to check, so it is never evidence of a correct result.
    run.phase(Phase::check, name);
    c.impl->prepare(run.workload, inputs);
    if (c.impl->computes_loss()) {
      c.impl->poison_outputs();
      c.impl->run(check_pass(run.settings.pass));
      const OutputView out = c.impl->outputs();
      c.facts.loss = out.loss;
      if (dump && name != run.outcome.oracle)
        dump->add_outputs(name, out, run.workload); // the oracle's are there
      auto errors = run.backend.compare(out, truth, checks_gradients(run.settings.pass));
      c.facts.verdict = make_verdict(std::move(errors), run.workload.correctness);
      if (!c.facts.verdict->passed)
        run.note(
            fmt::format("{}: {} FAILED correctness: {}", run.workload.name, name, c.facts.verdict->summary));
    }
    c.facts.status = status_of_check(c.facts.verdict);
    c.device_need = device_need(*c.impl);
    c.checked_memory = c.impl->memory();
  } catch (const std::exception &e) {
    LaneFailure failure = failure_of(e);
    if (failure.status == RunStatus::resource_exceeded) failure.reason += device_footprint(run);
    fail(c, failure);
  }
  // Whatever else it did, a lane that wrote into the shared inputs fails
  // for it, and the inputs are restored before the next lane is checked.
  if (const auto changed = input_guard.check_and_restore()) {
    const std::string reason = input_write_reason(*changed, "its check");
    if (c.facts.failed())
      c.facts.failure += "; it also " + reason;
    else
      fail(c, LaneFailure{RunStatus::runtime_error, reason});
  }
  release_quietly(run, c);
  return c;
}

// 4. Timing: the lanes that have not failed, in groups that fit the device
// together (memory_plan.hpp), each group prepared afresh and timed
// interleaved, then released. Between invocations the inputs and the
// timed outputs are checked (trusted_samples.hpp).

// The groups the lanes are timed in: those that fit the device's free
// memory together (with the margin), noted with the footprints; one group
// where there is no device to plan for.
std::vector<std::vector<std::size_t>> plan_groups(WorkloadRun &run, const std::vector<LaneNeed> &needs) {
  std::vector<std::vector<std::size_t>> groups;
  const auto memory = run.backend.device_memory();
  if (!memory) {
    if (!needs.empty()) groups.emplace_back();
    for (std::size_t i = 0; i < needs.size(); ++i) groups.back().push_back(i);
    return groups;
  }
  run.lane_footprint = memory->kibench_bytes;
  const std::uint64_t room = memory->free_bytes > kDeviceMarginBytes ? memory->free_bytes - kDeviceMarginBytes : 0;
  groups = plan_timing_groups(needs, room);
  std::string peaks;
  for (const LaneNeed &need : needs)
    peaks += fmt::format("{}{} {}", peaks.empty() ? "" : ", ", need.name, format_gib(need.device_bytes));
  run.note(fmt::format("{}: device memory ({}, {}): the oracle held {}, kibench holds {} while the lanes "
                       "run; lanes' own peaks: {}; timed in {}",
                       run.workload.name, memory->board, format_gib(memory->total_bytes),
                       format_gib(run.oracle_footprint.value_or(0)), format_gib(memory->kibench_bytes),
                       peaks.empty() ? "none" : peaks, describe_timing_groups(needs, groups)));
  return groups;
}

// The oracle's answers the timed checks hold outputs to: input set 0's
// (`truth`), and set 1's where a lane rotates its inputs (the foreign lanes:
// in a worker process they hold their own inputs and rotate them; kibench's
// own lanes, which may widen their inputs once in prepare, and foreign ones
// run in its process keep set 0). On the device where answers_fit_on_device
// says they fit beside every group, else read from the host chunk by chunk.
class TimingAnswers {
public:
  TimingAnswers(WorkloadRun &run, const std::vector<LaneNeed> &needs,
                const std::vector<std::vector<std::size_t>> &groups, const OutputView &truth)
      : truth_(truth) {
    const bool any_rotates = run.settings.input_rotation != InputRotation::off &&
                             std::any_of(needs.begin(), needs.end(), [](const LaneNeed &n) { return n.foreign; });
    if (any_rotates) {
      InputSet second_inputs(run.workload);
      second_inputs.set_variant(1);
      second_truth_.emplace(run_oracle(run, run.outcome.oracle, second_inputs, nullptr, false));
      second_inputs.release_device();
    }
    const auto memory = run.backend.device_memory();
    if (!memory) return;
    const std::uint64_t answers =
        worker::gradient_bytes(truth) + (second_truth_ ? worker::gradient_bytes(second_truth_->view) : 0);
    if (!answers_fit_on_device(needs, groups, answers, kDeviceMarginBytes, memory->free_bytes)) return;
    device_truth_ = truth_on_device(run.backend, truth);
    if (device_truth_ && second_truth_) device_second_truth_ = truth_on_device(run.backend, second_truth_->view);
    if (second_truth_ && !device_second_truth_) device_truth_.reset();
  }

  // The answer for input set `variant`.
  [[nodiscard]] const OutputView &of(int variant) const {
    if (variant == 0) return device_truth_ ? device_truth_->view : truth_;
    if (!second_truth_) throw std::logic_error("time_lanes: input set 1 without its oracle answer");
    return device_second_truth_ ? device_second_truth_->view : second_truth_->view;
  }

private:
  const OutputView &truth_;
  std::optional<KeptOutputs> second_truth_;
  std::optional<DeviceTruth> device_truth_, device_second_truth_;
};

// A timed lane's facts after its group's rounds: its measurement, and the
// labels that say how it was timed. Returns whether it rotated its inputs.
bool record_timed_lane(WorkloadRun &run, Candidate &c, Measurement measurement, const TrustedSamples &guard,
                       const std::string &timed_with, std::size_t group, std::size_t groups) {
  ImplementationFacts &f = c.facts;
  f.measurement = std::move(measurement);
  if (f.measurement.failure) fail(c, *f.measurement.failure);
  bool rotated = false;
  if (!f.failed()) {
    try {
      // The most it held, in its check or in its timing: a lane in a worker
      // process is prepared afresh for each, and a host lane's allocations
      // are measured where they are traced (the check).
      f.memory = largest(c.checked_memory, c.impl->memory());
      f.labels = c.impl->run_labels();
      f.labels.set("timed_checks", guard.checked(*c.impl));
      // The lanes that shared its rounds: neighbours move a median (caches,
      // cores, power), so compare says where they differ.
      f.labels.set("timed_with", std::string(io::cut_utf8(timed_with, 200)));
      rotated = guard.rotated(*c.impl);
      if (rotated) f.labels.set("input_sets", "2, alternating by timed sample (docs/protocol.md)");
      if (groups > 1) f.labels.set("timing_group", fmt::format("{} of {}", group + 1, groups));
    } catch (const std::exception &e) {
      fail(c, failure_of(e));
    }
  }
  release_quietly(run, c);
  return rotated;
}

// One group: its lanes prepared afresh, timed in shared rounds, recorded
// and released. Returns how many of them rotated their inputs.
std::size_t time_group(WorkloadRun &run, const std::vector<Candidate *> &members, InputSet &inputs,
                       TrustedSamples &guard, std::size_t group, std::size_t groups) {
  std::vector<Candidate *> prepared;
  std::vector<Implementation *> timed;
  for (Candidate *c : members) {
    if (c->facts.verdict && !c->facts.verdict->passed) guard.already_incorrect(*c->impl);
    try {
      c->impl->prepare(run.workload, inputs);
      prepared.push_back(c);
      timed.push_back(c->impl.get());
    } catch (const std::exception &e) {
      fail(*c, failure_of(e));
      release_quietly(run, *c);
    }
  }
  std::string timed_with;
  for (const Candidate *c : prepared) timed_with += fmt::format("{}{}", timed_with.empty() ? "" : ", ", c->name);
  std::vector<Measurement> measurements = measure(timed, run.settings, run.progress, run.conditioner, &guard);
  const std::string observed_at = utc_timestamp_now();
  std::size_t rotated = 0;
  for (std::size_t k = 0; k < prepared.size(); ++k) {
    prepared[k]->observed_at = observed_at;
    if (record_timed_lane(run, *prepared[k], std::move(measurements[k]), guard, timed_with, group, groups))
      ++rotated;
  }
  return rotated;
}

// Returns the groups' description when there is more than one ("" otherwise),
// for the protocol.
std::string time_lanes(WorkloadRun &run, std::vector<Candidate> &candidates, InputSet &inputs,
                       InputGuard &input_guard, const OutputView &truth) {
  std::vector<Candidate *> lanes;
  std::vector<LaneNeed> needs;
  for (Candidate &c : candidates) {
    if (c.facts.failed()) continue;
    lanes.push_back(&c);
    // A lane in a worker process: its own inputs (which it rotates), and
    // a peak its own allocator measured.
    needs.push_back({c.name, c.device_need, dynamic_cast<const worker::OwnInputs *>(c.impl.get()) != nullptr});
  }
  const std::vector<std::vector<std::size_t>> groups = plan_groups(run, needs);
  const TimingAnswers answers(run, needs, groups, truth);
  const InputRotation rotation = run.settings.input_rotation;
  TrustedSamples guard(
      run.backend, inputs, input_guard, [&](int variant) -> const OutputView & { return answers.of(variant); },
      run.settings.pass, rotation);
  guard.time_failed_lanes_fully(run.options.time_failed);
  std::size_t rotated_lanes = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<Candidate *> members;
    for (const std::size_t i : groups[g]) members.push_back(lanes[i]);
    rotated_lanes += time_group(run, members, inputs, guard, g, groups.size());
  }
  if (rotated_lanes > 0)
    run.input_rotation = fmt::format(
        "Inputs rotated for {} of {} timed lanes: timed sample k ran on the workload's input set (k + 1) mod 2 "
        "(set 1: every generator's seed + 0x9e3779b97f4a7c15), generated in place between invocations, and "
        "its outputs were held to that set's oracle answer.",
        rotated_lanes, lanes.size());
  return groups.size() > 1 ? describe_timing_groups(needs, groups) : "";
}

// 5. Manifests, written into a staged directory and moved into place.
void write_run_directory(WorkloadRun &run, std::vector<Candidate> &candidates, const json::Value &protocol,
                         const json::Value &environment, const std::string &environment_digest,
                         const json::Object &power_state_labels) {
  std::string observed_at = utc_timestamp_now();
  for (const Candidate &c : candidates)
    if (!c.observed_at.empty()) {
      observed_at = c.observed_at;
      break;
    }
  const fs::path run_dir =
      run.options.out_dir / run_directory_name(run.workload.name, run.settings.pass, observed_at);
  io::StagedDirectory dir(run_dir);
  write_json(dir, "operation.json", run.workload.operation);
  write_json(dir, "workload.json", run.workload.manifest);
  write_json(dir, "protocol.json", protocol);
  write_json(dir, "environment.json", environment);
  RunDirectoryContext context;
  context.workload = &run.workload;
  context.pass = run.settings.pass;
  context.workload_digest = manifest_digest(run.workload.manifest);
  context.protocol_digest = manifest_digest(protocol);
  context.environment_digest = environment_digest;
  context.observed_at = observed_at;
  if (!run.options.label.empty()) context.extra_labels.set("run_label", run.options.label);
  for (const auto &[key, value] : run.options.extra_labels) context.extra_labels.set(key, value);
  for (const auto &[key, value] : power_state_labels) context.extra_labels.set(key, value);
  if (run.oracle_footprint)
    context.extra_labels.set("kibench_device_bytes_oracle", std::to_string(*run.oracle_footprint));
  if (run.lane_footprint)
    context.extra_labels.set("kibench_device_bytes", std::to_string(*run.lane_footprint));
  for (Candidate &c : candidates) {
    ImplementationFacts &f = c.facts;
    if (f.failed())
      run.note(
          fmt::format("{}: {} failed ({}): {}", run.workload.name, c.name, to_string(f.status), f.failure));
    RunDirectoryContext lane = context;
    // Lanes timed in another group were not interleaved with these: their
    // own time keeps compare from pairing their samples.
    if (!c.observed_at.empty()) lane.observed_at = c.observed_at;
    run.outcome.implementations.push_back(
        record_implementation(dir, lane, json_file_text(c.revision), c.revision_digest, std::move(f)));
  }
  write_json(dir, "summary.json", outcome_summary(run.outcome));
  dir.commit();
  run.outcome.run_dir = dir.final_path();
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

namespace {

using Note = std::function<void(const std::string &)>;

// What step 1 settles before any work: the workloads (sweeps expanded), the
// implementations that run here, the oracle, and NVML's telemetry where the
// power state needs it.
struct SessionPlan {
  std::vector<Workload> workloads;
  std::vector<std::string> runnable;
  std::optional<std::regex> filter; // --filter
  [[nodiscard]] bool selected(const Workload &w, const std::string &implementation) const {
    return !filter || std::regex_search(w.name + "/" + implementation, *filter);
  }
  std::string oracle;
  std::unique_ptr<PowerTelemetry> telemetry;
  // A sharded run: the run set (shard.hpp), its digest, and each kept
  // workload's index among the run's points.
  json::Value run_set;
  std::string run_set_digest;
  std::vector<std::size_t> point_index;
  std::size_t point_count = 0;
};

// Levenshtein distance between two short names (insertions, deletions and
// substitutions of one byte each).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The known name nearest to a mistyped one: at most a third of its letters
// (and 3) away; none for a name too long to be a typo of any.
std::optional<std::string> closest_name(std::string_view typed, const std::vector<std::string> &known) {
  if (typed.size() > 64) return std::nullopt;
  std::optional<std::string> best;
  std::size_t best_distance = std::min<std::size_t>(3, std::max<std::size_t>(1, typed.size() / 3)) + 1;
  for (const std::string &name : known) {
    const std::size_t d = edit_distance(typed, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  return best;
}

// --impl's names resolved: unknown ones and, when named, ones that cannot
// run here are refused; GPU ones of the default list are noted and left out.
std::vector<std::string> runnable_implementations(const Backend &backend, const SessionOptions &options,
                                                  const Note &note) {
  const auto gpu_missing = backend.gpu_unavailable_reason();
  std::vector<std::string> names = options.implementations;
  if (names.empty()) names = default_implementations(backend);
  const auto entries = backend.implementations();
  std::vector<std::string> runnable, gpu_skipped;
  for (const auto &name : names) {
    auto it = std::find_if(entries.begin(), entries.end(), [&](const auto &e) { return e.name == name; });
    if (it == entries.end()) {
      std::string known;
      std::vector<std::string> names_known;
      for (const auto &e : entries) {
        known += (known.empty() ? "" : ", ") + e.name;
        names_known.push_back(e.name);
      }
      const auto near = closest_name(name, names_known);
      throw InputError(fmt::format("--impl: unknown implementation \"{}\"{} (known: {}; a Python "
                                   "implementation is py:MODULE:CALLABLE under python -m kibench)",
                                   name, near ? fmt::format("; did you mean \"{}\"?", *near) : "", known));
    }
    if (it->needs_gpu && gpu_missing) {
      // Named in --impl, it was asked for: a run that silently never ran
      // it would pass. The default list only notes what it skips.
      if (!options.implementations.empty())
        throw InputError(
            fmt::format("--impl {}: needs a GPU and cannot run here ({}); leave it out of --impl, "
                        "or run it where a GPU is (`kibench list` shows what runs here)",
                        name, *gpu_missing));
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
  return runnable;
}

// A power state is brought about on a GPU: without one in the run the
// setting would be recorded but not done, so it is refused. Returns NVML's
// telemetry for `rested`.
std::unique_ptr<PowerTelemetry> power_state_telemetry(const Backend &backend, const SessionOptions &options,
                                                      const std::vector<std::string> &runnable) {
  const PowerState power_state = options.settings.power_state;
  if (power_state == PowerState::as_is) return nullptr;
  const auto gpu_missing = backend.gpu_unavailable_reason();
  const auto entries = backend.implementations();
  const bool any_gpu = std::any_of(runnable.begin(), runnable.end(), [&](const std::string &name) {
    return std::find_if(entries.begin(), entries.end(),
                        [&](const auto &e) { return e.name == name && e.needs_gpu; }) != entries.end();
  });
  if (!any_gpu)
    throw InputError(fmt::format("--power-state {}: needs a GPU: {}", to_string(power_state),
                                 gpu_missing ? *gpu_missing : "no GPU implementation in this run"));
  if (power_state != PowerState::rested) return nullptr;
  auto telemetry = backend.power_telemetry();
  const BoardReading now = telemetry ? telemetry->read() : BoardReading{};
  if (!now.sm_clock_mhz || !now.power_w)
    throw InputError(fmt::format("--power-state rested: needs a GPU: {}",
                                 telemetry ? "NVML gives no SM clock or no instantaneous board power"
                                           : "NVML is not available"));
  return telemetry;
}

// --shard: the run set of every point (the workloads as expanded and
// filtered, in order) and the settings all shards share; then only the
// points this shard takes.
void keep_shard(const SessionOptions &options, SessionPlan &plan, const Note &note) {
  const Shard &shard = *options.shard;
  std::vector<RunPoint> points;
  for (const Workload &w : plan.workloads) points.push_back({w.name, manifest_digest(w.manifest)});
  const json::Value settings = json::Object{
      {"pass", std::string(to_string(options.settings.pass))},
      {"family", options.settings.family()},
      {"notes", options.settings.describe()},
      {"filter", options.filter ? json::Value(*options.filter) : json::Value(nullptr)},
      {"checkOnly", options.check_only},
      {"timeFailed", options.time_failed},
      {"oracle", plan.oracle},
  };
  plan.run_set = run_set_document(points, plan.runnable, settings);
  plan.run_set_digest = canonical_digest(plan.run_set);
  plan.point_count = points.size();
  std::vector<Workload> kept;
  for (std::size_t i = 0; i < plan.workloads.size(); ++i) {
    if (!shard.takes(i)) continue;
    kept.push_back(std::move(plan.workloads[i]));
    plan.point_index.push_back(i);
  }
  plan.workloads = std::move(kept);
  note(fmt::format("shard {} (from {}): {} of the run's {} points (those whose index i has i mod {} = {}); "
                   "run set {}",
                   shard.text(), shard.source, plan.workloads.size(), plan.point_count, shard.count, shard.index,
                   plan.run_set_digest));
  if (plan.workloads.empty())
    note(fmt::format("shard {} has no points: nothing to run, nothing written", shard.text()));
}

// 1. Everything that can be refused is refused before any work: workloads,
// implementation names, cases too big for the machine, and output folders
// that cannot be written.
SessionPlan plan_session(const Backend &backend, const SessionOptions &options, const Note &note) {
  const auto gpu_missing = backend.gpu_unavailable_reason();
  if (const int gpus = backend.run_gpus(); gpus > 1) {
    if (gpu_missing) throw InputError(fmt::format("--gpus {}: no GPU: {}", gpus, *gpu_missing));
    if (backend.gpu_count() < gpus)
      throw InputError(fmt::format("--gpus {}: this machine has {} GPU{}", gpus, backend.gpu_count(),
                                   backend.gpu_count() == 1 ? "" : "s"));
  }
  SessionPlan plan;
  std::vector<fs::path> files = options.workload_files;
  if (files.empty()) files.push_back(default_workload(backend));
  for (const auto &file : files)
    for (Workload &w : expand_sweep(load_workload(file), options.axes))
      plan.workloads.push_back(std::move(w));
  plan.runnable = runnable_implementations(backend, options, note);
  plan.telemetry = power_state_telemetry(backend, options, plan.runnable);
  plan.oracle = oracle_name(backend);
  for (const auto &w : plan.workloads) {
    auto probe = backend.make(plan.oracle);
    if (auto why = other_operation(*probe, w))
      throw InputError(fmt::format("{}: {}", w.source.string(), *why));
    if (auto why = probe->unsupported(w)) throw InputError(fmt::format("{}: {}", w.source.string(), *why));
  }
  if (plan.runnable.empty())
    throw InputError("no implementation can run on this machine; see `kibench list`");
  if (options.filter) {
    if (options.filter->empty() || options.filter->size() > 200)
      throw InputError("--filter: a regular expression of 1 to 200 characters");
    try {
      plan.filter.emplace(*options.filter, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error &e) {
      throw InputError(fmt::format("--filter: {:?} is not a regular expression: {}", io::printable(*options.filter),
                                   e.what()));
    }
    // Workloads none of whose implementations is selected are left out; no
    // pair at all is a mistake, refused before any work.
    std::erase_if(plan.workloads, [&](const Workload &w) {
      return std::none_of(plan.runnable.begin(), plan.runnable.end(),
                          [&](const std::string &name) { return plan.selected(w, name); });
    });
    if (plan.workloads.empty())
      throw InputError(fmt::format("--filter: {:?} matches no WORKLOAD/IMPLEMENTATION pair (implementations: {})",
                                   io::printable(*options.filter), fmt::join(plan.runnable, ", ")));
  }
  if (options.shard) {
    keep_shard(options, plan, note);
    if (plan.workloads.empty()) return plan; // nothing to run, nothing written
  }
  std::vector<io::OutputFolder> folders{{options.out_dir, "--out"}};
  if (options.save_tensors) folders.push_back({*options.save_tensors, "--save-tensors"});
  io::prepare_output_directories(folders);
  return plan;
}

// What every workload of the session shares: the clocks' lock (held while
// the session runs; the guard resets it, on signals too), the protocol's
// settings (each workload's protocol adds its correctness policy and timing
// groups), the environment and the power state's conditioner.
struct SessionProtocol {
  std::unique_ptr<ClockControl> clocks;
  std::optional<ClockLockGuard> clock_lock;
  ProtocolSettings settings;
  json::Value environment;
  std::string environment_digest;
  std::optional<double> peak_bandwidth_gbps;
  std::unique_ptr<PowerConditioner> conditioner;
  json::Object power_state_labels;
};

void lock_clocks(const Backend &backend, const SessionOptions &options, const Note &note,
                 SessionProtocol &p) {
  const auto gpu_missing = backend.gpu_unavailable_reason();
  p.clocks = backend.clock_control();
  if (!options.lock_clocks) return;
  if (gpu_missing) {
    note(fmt::format("--lock-clocks {}: no GPU to lock ({})", to_string(*options.lock_clocks), *gpu_missing));
  } else if (!p.clocks) {
    note(fmt::format("--lock-clocks {}: NVML is not available; timing on the clocks as they are",
                     to_string(*options.lock_clocks)));
  } else {
    p.clock_lock.emplace(*p.clocks, *options.lock_clocks, note);
  }
}

// rested: the idle band, read once on the GPU before any work of the run
// (and after the clocks are locked: the lock moves the idle clock).
void condition_power_state(const SessionOptions &options, const Note &note, PowerTelemetry *telemetry,
                           SessionProtocol &p) {
  const PowerState power_state = options.settings.power_state;
  if (power_state == PowerState::rested) {
    const auto band = idle_band(read_idle(*telemetry, WaitClock::steady()));
    if (!band)
      throw std::runtime_error("--power-state rested: NVML stopped giving SM clock or power readings");
    note(fmt::format("--power-state rested: each GPU sample starts once {} (at most {} s)", band->describe(),
                     json::format_number(power_state::kRestBoundS)));
    p.power_state_labels.set("power_state_idle_band", band->describe());
    p.conditioner = std::make_unique<RestedConditioner>(*telemetry, *band);
  } else if (power_state == PowerState::loaded) {
    p.conditioner = std::make_unique<LoadedConditioner>();
  }
}

void set_up_protocol(const Backend &backend, const SessionOptions &options, const Note &note,
                     const SessionPlan &plan, SessionProtocol &p) {
  const auto gpu_missing = backend.gpu_unavailable_reason();
  lock_clocks(backend, options, note, p);
  p.settings = options.settings;
  p.settings.timer = gpu_missing ? "steady_clock" : "cuda_events";
  if (gpu_missing) p.settings.cold = false; // no device cache to flush on the CPU path
  p.settings.clocks_locked = p.clock_lock && p.clock_lock->locked();
  p.settings.gpus = backend.run_gpus();
  EnvironmentFacts facts = backend.environment();
  if (p.settings.clocks_locked) {
    // A lock NVML cannot read back: what kibench set is what is known.
    ClockReadings readings;
    readings.locked_by_kibench = options.lock_clocks;
    readings.locked_mhz = p.clock_lock->locked_mhz();
    facts.clocks_locked = true;
    facts.labels["clock_state"] = clock_state(readings).description;
  } else if (!gpu_missing && !facts.clocks_locked) {
    note(fmt::format("GPU clocks are not locked ({}): medians follow boost and the power limiter; "
                     "--lock-clocks base|max locks them where NVML allows (root)",
                     facts.labels.contains("clock_state") ? facts.labels.at("clock_state")
                                                          : "NVML not available"));
  }
  condition_power_state(options, note, plan.telemetry.get(), p);
  p.peak_bandwidth_gbps = facts.peak_memory_bandwidth_gbps;
  p.environment = environment_manifest(facts);
  p.environment_digest = manifest_digest(p.environment);
}

// Steps 2 to 5 for one workload: the oracle, each lane's check, the timing
// in memory groups, and the run directory.
WorkloadOutcome run_workload(const Backend &backend, const SessionOptions &options, const Note &note,
                             const SessionPlan &plan, const SessionProtocol &p, std::size_t index,
                             CalibrationStep *calibration) {
  const Workload &workload = plan.workloads[index];
  // The harness's reports, and the session's own phases, with the workload.
  const ProgressCallback progress = [&](const Progress &report) {
    if (!options.progress) return;
    Progress with = report;
    with.workload_index = index;
    with.workload_count = plan.workloads.size();
    with.workload = workload.name;
    options.progress(with);
  };
  WorkloadRun run{backend, options, p.settings, workload, progress, note, p.conditioner.get(), {}, {}, {}, {}};
  run.outcome.workload = workload;
  run.outcome.oracle = plan.oracle;
  run.outcome.noise_target = p.settings.max_noise;
  run.outcome.peak_bandwidth_gbps = p.peak_bandwidth_gbps;
  InputSet inputs(workload);
  std::unique_ptr<TensorDump> dump;
  if (options.save_tensors) {
    dump = std::make_unique<TensorDump>(
        *options.save_tensors / run_directory_name(workload.name, p.settings.pass, utc_timestamp_now()),
        backend);
    dump->add_inputs(inputs);
  }
  const KeptOutputs truth = run_oracle(run, plan.oracle, inputs, dump.get());
  InputGuard input_guard(backend, inputs);
  std::vector<Candidate> candidates;
  for (const auto &name : plan.runnable)
    if (!plan.selected(workload, name)) {
      continue;
    } else if (auto c = check_lane(run, name, inputs, input_guard, truth.view, dump.get()))
      candidates.push_back(std::move(*c));
  if (dump) dump->commit();
  if (options.check_only) {
    for (Candidate &c : candidates) run.outcome.implementations.push_back({std::move(c.facts), {}, ""});
    return std::move(run.outcome);
  }
  const std::string timing_groups = time_lanes(run, candidates, inputs, input_guard, truth.view);

  ProtocolSettings workload_settings = p.settings;
  workload_settings.timing_groups = timing_groups;
  workload_settings.rotation = run.input_rotation;
  const json::Value protocol = protocol_manifest(workload_settings, plan.oracle, workload.correctness);
  CalibrationStep::WorkloadCalibration calibrated =
      calibration ? calibration->after_workload(workload.name) : CalibrationStep::WorkloadCalibration{};
  json::Object labels = p.power_state_labels;
  if (options.shard) {
    labels.set("shard", options.shard->text());
    labels.set("shard_source", options.shard->source);
    labels.set("run_set", plan.run_set_digest);
    labels.set("run_set_point", point_label(plan.point_index[index], plan.point_count));
  }
  for (const auto &[key, value] : calibrated.labels) labels.set(key, value);
  run.outcome.calibration_caveats = std::move(calibrated.caveats);
  write_run_directory(run, candidates, protocol, p.environment, p.environment_digest, labels);
  return std::move(run.outcome);
}

} // namespace

std::vector<WorkloadOutcome> run_session(const Backend &backend, const SessionOptions &options) {
  const Note note = [&](const std::string &line) {
    if (options.note) options.note(line);
  };
  const SessionPlan plan = plan_session(backend, options, note);
  if (plan.workloads.empty()) return {}; // a shard with no points
  if (options.shard && !options.check_only)
    io::write_file_atomically(options.out_dir / run_set_file_name(plan.run_set_digest),
                              json_file_text(plan.run_set));
  SessionProtocol protocol;
  set_up_protocol(backend, options, note, plan, protocol);
  // Nothing is timed with --check-only: nothing to calibrate.
  std::optional<CalibrationStep> calibration;
  if (!options.check_only) calibration.emplace(backend, note);
  std::vector<WorkloadOutcome> outcomes;
  for (std::size_t index = 0; index < plan.workloads.size(); ++index) {
    outcomes.push_back(run_workload(backend, options, note, plan, protocol, index,
                                    calibration ? &*calibration : nullptr));
    if (options.workload_done) options.workload_done(outcomes.back());
  }
  return outcomes;
}

} // namespace kibench
