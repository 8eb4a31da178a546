#include "lib/harness/harness.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "lib/harness/interleave_order.hpp"
#include "lib/harness/stopping_rule.hpp"
#include "lib/harness/throttle.hpp"
#include "lib/stats/summary.hpp"

namespace kibench {

namespace {

struct Lane {
  Implementation *impl;
  std::unique_ptr<SampleTimer> timer;
  StoppingRule rule;
  Measurement result;
  // Why the lane's own rule first said stop ("" while it wants samples).
  std::string own_stop;
  [[nodiscard]] bool failed() const { return result.failure.has_value(); }
  [[nodiscard]] bool finished() const { return failed() || rule.finished(); }
};

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

double take_sample(Lane &lane, const ProtocolSettings &settings, Sample &sample) {
  if (settings.cold) lane.impl->flush_caches();
  lane.impl->before_sample(settings.pass);
  lane.timer->start();
  lane.impl->run(settings.pass);
  lane.timer->stop();
  sample.ns = lane.timer->elapsed_ns();
  sample.clock_mhz = lane.timer->clock_mhz();
  sample.power_w = lane.timer->power_w();
  return sample.ns;
}

// The median sample, as the run's statistics define it.
double median_ns(const Measurement &m) {
  std::vector<double> ns;
  ns.reserve(m.samples.size());
  for (const Sample &s : m.samples) ns.push_back(s.ns);
  return stats::median(std::move(ns));
}

} // namespace

std::vector<Measurement> measure(const std::vector<Implementation *> &implementations,
                                 const ProtocolSettings &settings, const ProgressCallback &progress) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<Lane> lanes;
  lanes.reserve(implementations.size());
  for (Implementation *impl : implementations) {
    Lane lane{impl, impl->make_timer(), StoppingRule(settings), {}, {}};
    lane.result.implementation = impl->name();
    lane.result.timer = lane.timer->name();
    lanes.push_back(std::move(lane));
  }
  for (auto &lane : lanes) {
    guarded(lane, [&] {
      for (std::size_t i = 0; i < settings.warmup_runs; ++i) {
        Sample discarded;
        take_sample(lane, settings, discarded);
      }
    });
  }

  // Interleaved: one sample per lane per round, in the round's order
  // (interleave_order.hpp), while any lane's own rule still wants samples:
  // each lane until its own rule is met, or with share_rounds every lane
  // until the last one's is (only its cap or time limit stops one earlier).
  // Shared rounds make the medians reported beside a paired comparison the
  // rounds it pairs: on a power-capped GPU a lane's neighbours set its
  // clock, and rounds only some lanes shared (the slow lanes' first few)
  // need not be typical of the others.
  // Not interleaved: each lane runs to its own stop in turn.
  auto sample_lane = [&](Lane &lane, std::size_t round) {
    Sample s;
    s.round = round;
    if (!guarded(lane, [&] { lane.rule.add_sample(take_sample(lane, settings, s)); })) return;
    lane.result.samples.push_back(s);
    if (lane.own_stop.empty() && lane.rule.finished()) lane.own_stop = lane.rule.reason();
    if (progress) {
      Progress p;
      p.implementation = lane.result.implementation;
      p.sample = lane.result.samples.size();
      p.round = round;
      p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      // Left: the remaining minimum samples of the slowest lane, at its mean.
      for (const auto &l : lanes) {
        if (l.finished() || l.result.samples.empty()) continue;
        double mean_s = 0;
        for (const auto &x : l.result.samples) mean_s += x.ns * 1e-9;
        mean_s /= static_cast<double>(l.result.samples.size());
        const double remaining = static_cast<double>(settings.min_samples) -
                                 static_cast<double>(std::min(settings.min_samples, l.result.samples.size()));
        p.estimated_left_s =
            std::max(p.estimated_left_s, remaining * mean_s * static_cast<double>(lanes.size()));
      }
      progress(p);
    }
  };
  if (settings.interleave) {
    // A lane wants samples until its own rule is met (noted when first seen).
    const auto wants = [](Lane &l) {
      if (l.failed()) return false;
      if (!l.rule.finished()) return true;
      if (l.own_stop.empty()) l.own_stop = l.rule.reason();
      return false;
    };
    const auto any_wants = [&] {
      bool any = false;
      for (Lane &l : lanes) any = wants(l) || any; // every lane: each notes its own stop
      return any;
    };
    for (std::size_t round = 0; any_wants(); ++round) {
      for (const std::size_t k : interleave_order(lanes.size(), round)) {
        Lane &lane = lanes[k];
        const bool done = settings.share_rounds ? lane.rule.at_cap() : lane.rule.finished();
        if (lane.failed() || done) continue;
        sample_lane(lane, round);
      }
    }
  } else {
    for (auto &lane : lanes)
      for (std::size_t round = 0; !lane.finished(); ++round) sample_lane(lane, round);
  }

  std::vector<Measurement> results;
  for (auto &lane : lanes) {
    if (!lane.result.failure && !lane.result.samples.empty())
      guarded(lane, [&] {
        lane.result.sustained = measure_sustained(*lane.impl, settings, median_ns(lane.result));
      });
    if (!lane.result.failure)
      lane.result.stop_reason = lane.own_stop.empty() ? lane.rule.reason() : lane.own_stop;
    flag_throttled(lane.result, settings.throttle_fraction);
    results.push_back(std::move(lane.result));
  }
  return results;
}

} // namespace kibench
