// Cold samples of an implementation's pass for the dev/perf studies, taken
// as `kibench run` takes them: `warmup` untimed runs, then each sample after
// the implementation's before_sample() and an L2 flush, through its own
// timer. `after_sample`, if given, runs once each sample's time has been
// read (the pass has finished): to read the timer's clock, or a stage
// clock the pass marked.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "lib/implementation/implementation.hpp"

namespace kibench::dev {

// Cold samples of several implementations taken in rounds, so that a
// difference between them is not a difference in when they ran (the clock
// and the board's temperature drift over a study of minutes): each lane
// has its warm-up, then round r runs one sample of every lane, lane
// (r + i) mod n i-th. Returns each lane's samples, in the lanes' order.
struct InterleavedLane {
  Implementation *impl = nullptr;
  std::function<void(SampleTimer &)> after_sample = {};
};

inline std::vector<std::vector<double>> interleaved_cold_samples_ms(const std::vector<InterleavedLane> &lanes,
                                                                    Pass pass, int warmup, int samples) {
  struct Open {
    std::unique_ptr<Device> device;
    std::unique_ptr<SampleTimer> timer;
  };
  std::vector<Open> open;
  for (const InterleavedLane &lane : lanes) {
    for (int i = 0; i < warmup; ++i) {
      lane.impl->before_sample(pass);
      lane.impl->run(pass);
    }
    (void)lane.impl->outputs();
    Open &o = open.emplace_back();
    o.device = lane.impl->open_device();
    o.timer = o.device->make_timer();
  }
  std::vector<std::vector<double>> ms(lanes.size());
  const std::size_t n = lanes.size();
  for (int round = 0; round < samples; ++round)
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t l = (static_cast<std::size_t>(round) + i) % n;
      Implementation &impl = *lanes[l].impl;
      impl.before_sample(pass);
      open[l].device->flush_caches();
      open[l].timer->start();
      impl.run(pass);
      open[l].timer->stop();
      ms[l].push_back(open[l].timer->elapsed_ns() * 1e-6);
      if (lanes[l].after_sample) lanes[l].after_sample(*open[l].timer);
    }
  return ms;
}

// One implementation's cold samples: interleaved_cold_samples_ms with one lane.
inline std::vector<double> cold_samples_ms(Implementation &impl, Pass pass, int warmup, int samples,
                                           const std::function<void(SampleTimer &)> &after_sample = {}) {
  return interleaved_cold_samples_ms({{.impl = &impl, .after_sample = after_sample}}, pass, warmup, samples)
      .front();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace kibench::dev
