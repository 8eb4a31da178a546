#include "lib/harness/harness.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>

#include <fmt/core.h>

#include "lib/harness/interleave_order.hpp"
#include "lib/harness/stopping_rule.hpp"
#include "lib/harness/throttle.hpp"
#include "lib/harness/time_left.hpp"
#include "lib/stats/summary.hpp"

namespace kibench {

namespace {

struct Lane {
  Implementation *impl;
  std::unique_ptr<Device> device; // where impl runs, held while it is timed
  std::unique_ptr<SampleTimer> timer;
  StoppingRule rule;
  Measurement result;
  // Why the lane's own rule first said stop ("" while it wants samples).
  std::string own_stop;
  double sustained_s = 0.0; // the sustained phase still ahead of it (an estimate)
  std::size_t own_stop_samples = 0; // its samples when own_stop was set
  std::size_t minimum_only = 0;     // > 0: timed to this many samples alone (SampleGuard::time_to_minimum)
  [[nodiscard]] bool failed() const { return result.failure.has_value(); }
  [[nodiscard]] bool at_minimum() const { return minimum_only > 0 && rule.samples() >= minimum_only; }
  // Its own rule met, or its minimum where that is all it is timed to.
  [[nodiscard]] bool rule_met() const { return rule.finished() || at_minimum(); }
  [[nodiscard]] std::string stop_reason() const { return at_minimum() ? "check_failed" : rule.reason(); }
  [[nodiscard]] bool finished() const { return failed() || rule_met(); }
};

LaneProgress progress_of(const Lane &lane) {
  LaneProgress p;
  p.samples = lane.rule.samples();
  p.sampled_s = lane.rule.sampled_s();
  p.wall_s = lane.rule.wall_s();
  p.relative_spread = lane.rule.relative_spread();
  p.rule_met = lane.failed() || !lane.own_stop.empty() || lane.rule_met();
  p.at_cap = lane.failed() || lane.rule.at_cap() || lane.at_minimum();
  p.sustained_s = lane.failed() ? 0.0 : lane.sustained_s;
  return p;
}

// The sustained phase's length as run_sustained_rounds runs it (each
// round a quarter untimed first), where it will run: GPU implementations have a power
// monitor.
double expected_sustained_s(const Implementation &impl, const ProtocolSettings &settings) {
  if (!(settings.sustained_time_s > 0.0) || settings.pass == Pass::backward || !impl.needs_gpu()) return 0.0;
  return 1.25 * settings.sustained_time_s * static_cast<double>(std::max<std::size_t>(1, settings.sustained_rounds));
}

// Runs `step` for the lane; an exception fails the lane, not the run.
template <typename Step> bool guarded(Lane &lane, Step &&step) {
  try {
    step();
    return true;
  } catch (const std::exception &e) {
    lane.result.failure = failure_of(e);
    lane.result.samples.clear();
    return false;
  }
}

// `conditioner` (timed samples only) runs after the flush and the untimed
// work and before the timer starts: neither its load nor its wait is timed.
// A guard's verdict on the invocation just made, as the lane's failure.
void check_invocation(Lane &lane, SampleGuard *guard, std::optional<std::size_t> timed_sample) {
  if (guard == nullptr) return;
  if (auto failure = guard->after_invocation(*lane.impl, timed_sample))
    throw ImplementationFailure(failure->status, failure->reason);
}

// `guard` runs after the timer has stopped: its checks are never timed.
double take_sample(Lane &lane, const ProtocolSettings &settings, Sample &sample,
                   PowerConditioner *conditioner = nullptr, SampleGuard *guard = nullptr,
                   std::optional<std::size_t> timed_sample = std::nullopt) {
  if (guard != nullptr) guard->before_invocation(*lane.impl, timed_sample);
  if (settings.cold) lane.device->flush_caches();
  lane.impl->before_sample(settings.pass);
  if (conditioner) sample.rest = conditioner->condition(*lane.impl, *lane.device);
  lane.timer->start();
  lane.impl->run(settings.pass);
  lane.timer->stop();
  sample.ns = lane.timer->elapsed_ns();
  sample.clock_mhz = lane.timer->clock_mhz();
  sample.power_w = lane.timer->power_w();
  check_invocation(lane, guard, timed_sample);
  return sample.ns;
}

// The median sample, as the run's statistics define it.
double median_ns(const Measurement &m) {
  std::vector<double> ns;
  ns.reserve(m.samples.size());
  for (const Sample &s : m.samples) ns.push_back(s.ns);
  return stats::median(std::move(ns));
}

// One measure() call: its lanes and the rules that stop them, sampled in
// rounds; each step below is one phase of it.
class LaneRounds {
public:
  LaneRounds(const std::vector<Implementation *> &implementations, const ProtocolSettings &settings,
             const ProgressCallback &progress, PowerConditioner *conditioner, SampleGuard *guard)
      : settings_(settings), progress_(progress), conditioner_(conditioner), guard_(guard),
        started_(std::chrono::steady_clock::now()) {
    lanes_.reserve(implementations.size());
    for (Implementation *impl : implementations) {
      std::unique_ptr<Device> device = impl->open_device();
      std::unique_ptr<SampleTimer> timer = device->make_timer();
      Lane lane{impl, std::move(device), std::move(timer), StoppingRule(settings), {}, {},
                expected_sustained_s(*impl, settings)};
      lane.result.implementation = impl->name();
      lane.result.timer = lane.timer->name();
      if (guard != nullptr && guard->time_to_minimum(*impl))
        lane.minimum_only = std::max<std::size_t>(1, settings.min_samples);
      lanes_.push_back(std::move(lane));
    }
  }

  void warm_up() {
    for (auto &lane : lanes_) {
      report(Phase::warmup, lane, 0);
      guarded(lane, [&] {
        for (std::size_t i = 0; i < settings_.warmup_runs; ++i) {
          Sample discarded;
          take_sample(lane, settings_, discarded, nullptr, guard_);
        }
      });
    }
  }

  // One sample per lane per round, in the round's order
  // (interleave_order.hpp), while any lane's own rule still wants samples:
  // each lane until its own rule is met, or with share_rounds every lane
  // until the last one's is (only its cap or time limit stops one earlier).
  // Shared rounds make the medians reported beside a paired comparison the
  // rounds it pairs: on a power-capped GPU a lane's neighbours set its
  // clock, and rounds only some lanes shared (the slow lanes' first few)
  // need not be typical of the others.
  void sample_interleaved() {
    std::size_t round = 0;
    // A lane wants samples until its own rule is met (noted when first seen);
    // every lane is asked, so each notes its own stop.
    const auto any_wants = [&] {
      bool any = false;
      for (Lane &l : lanes_) any = wants(l, round) || any;
      return any;
    };
    for (; any_wants(); ++round) {
      for (const std::size_t k : interleave_order(lanes_.size(), round)) {
        Lane &lane = lanes_[k];
        const bool done = settings_.share_rounds ? lane.rule.at_cap() || lane.at_minimum() : lane.rule_met();
        if (lane.failed() || done) continue;
        sample_lane(lane, round);
      }
    }
  }

  // Not interleaved: each lane runs to its own stop in turn.
  void sample_in_turn() {
    for (auto &lane : lanes_) {
      std::size_t round = 0;
      for (; !lane.finished(); ++round) sample_lane(lane, round);
      note_stop(lane, round);
    }
  }

  // Each lane's last check, then the sustained phase's rounds, then each
  // lane's stop reason and throttle flag.
  std::vector<Measurement> finish() {
    for (auto &lane : lanes_) {
      // The outputs of the lane's last timed sample, before the sustained
      // phase: that phase runs back to back without before_sample(), so a
      // lane that accumulates into its gradients (autograd's .grad) sums there.
      if (guard_ != nullptr && !lane.result.failure && !lane.result.samples.empty()) {
        guarded(lane, [&] {
          if (auto failure = guard_->after_last(*lane.impl))
            throw ImplementationFailure(failure->status, failure->reason);
        });
      }
    }
    run_sustained_rounds();
    std::vector<Measurement> results;
    for (auto &lane : lanes_) {
      lane.sustained_s = 0.0;
      if (!lane.result.failure) lane.result.stop_reason = lane.own_stop.empty() ? lane.stop_reason() : lane.own_stop;
      lane.result.sampling_wall_s = lane.rule.wall_s();
      flag_throttled(lane.result, settings_.throttle_fraction);
      results.push_back(std::move(lane.result));
    }
    return results;
  }

private:
  // The sustained phase: settings_.sustained_rounds rounds, each lane one
  // turn a round in that round's rotated order (interleave_order.hpp, as
  // the samples), so no lane always follows the others' back-to-back work
  // onto the hottest board; each lane's figures are the medians over its
  // turns (sustained.hpp). A lane that fails a turn keeps its failure and
  // runs no more.
  void run_sustained_rounds() {
    const std::size_t rounds = std::max<std::size_t>(1, settings_.sustained_rounds);
    std::vector<std::vector<SustainedMeasurement>> turns(lanes_.size());
    std::vector<double> medians(lanes_.size());
    for (std::size_t k = 0; k < lanes_.size(); ++k)
      if (!lanes_[k].result.samples.empty()) medians[k] = median_ns(lanes_[k].result);
    for (std::size_t round = 0; round < rounds; ++round) {
      for (const std::size_t k : interleave_order(lanes_.size(), round)) {
        Lane &lane = lanes_[k];
        if (lane.failed() || lane.result.samples.empty()) continue;
        if (lane.sustained_s > 0.0) report(Phase::sustained, lane, round);
        guarded(lane, [&] {
          if (auto turn = measure_sustained(*lane.impl, *lane.device, settings_, medians[k]))
            turns[k].push_back(std::move(*turn));
        });
        lane.sustained_s = std::max(0.0, lane.sustained_s * static_cast<double>(rounds - round - 1) /
                                             static_cast<double>(rounds - round));
      }
    }
    for (std::size_t k = 0; k < lanes_.size(); ++k)
      if (!lanes_[k].failed() && !turns[k].empty()) lanes_[k].result.sustained = merge_sustained(turns[k]);
  }

  [[nodiscard]] double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }

  // What the rules have reached, with the estimate of what is left.
  void report(Phase phase, const Lane &lane, std::size_t round) const {
    if (!progress_) return;
    Progress p;
    p.phase = phase;
    p.implementation = lane.result.implementation;
    p.sample = lane.rule.samples();
    p.round = round;
    p.samples_expected = samples_needed(progress_of(lane), settings_);
    p.max_samples = settings_.max_samples;
    p.noise = lane.rule.relative_error();
    p.noise_target = settings_.max_noise;
    p.stop_reason = lane.own_stop;
    p.rule_met_at = lane.own_stop_samples;
    p.elapsed_s = elapsed_s();
    std::vector<LaneProgress> all;
    all.reserve(lanes_.size());
    for (const Lane &l : lanes_) all.push_back(progress_of(l));
    p.estimated_left_s = time_left_s(all, settings_);
    progress_(p);
  }

  // The first time a lane's own rule is met, noted and reported.
  void note_stop(Lane &lane, std::size_t round) const {
    if (!lane.own_stop.empty() || lane.failed() || !lane.rule_met()) return;
    lane.own_stop = lane.stop_reason();
    lane.own_stop_samples = lane.rule.samples();
    report(Phase::lane_done, lane, round);
  }

  bool wants(Lane &lane, std::size_t round) const {
    if (lane.failed()) return false;
    if (!lane.rule_met()) return true;
    note_stop(lane, round);
    return false;
  }

  void sample_lane(Lane &lane, std::size_t round) {
    Sample s;
    s.round = round;
    const auto before = std::chrono::steady_clock::now();
    const std::size_t index = lane.result.samples.size();
    if (!guarded(lane, [&] {
          const double ns = take_sample(lane, settings_, s, conditioner_, guard_, index);
          lane.rule.add_sample(ns, std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count());
        }))
      return;
    lane.result.samples.push_back(s);
    report(Phase::sampling, lane, round);
    note_stop(lane, round);
  }

  const ProtocolSettings &settings_;
  const ProgressCallback &progress_;
  PowerConditioner *conditioner_;
  SampleGuard *guard_;
  std::chrono::steady_clock::time_point started_;
  std::vector<Lane> lanes_;
};

} // namespace

std::vector<Measurement> measure(const std::vector<Implementation *> &implementations,
                                 const ProtocolSettings &settings, const ProgressCallback &progress,
                                 PowerConditioner *conditioner, SampleGuard *guard) {
  if (settings.power_state != PowerState::as_is && conditioner == nullptr)
    throw std::logic_error(
        fmt::format("measure: --power-state {} without a conditioner", to_string(settings.power_state)));
  LaneRounds rounds(implementations, settings, progress, conditioner, guard);
  rounds.warm_up();
  if (settings.interleave)
    rounds.sample_interleaved();
  else
    rounds.sample_in_turn();
  return rounds.finish();
}

} // namespace kibench
