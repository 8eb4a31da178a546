// Samples for the dev/perf studies. Cold samples of an implementation's
// pass, taken as `kibench run` takes them: `warmup` untimed runs, then each sample after
// the implementation's before_sample() and an L2 flush, through its own
// timer. `after_sample`, if given, runs once each sample's time has been
// read (the pass has finished): to read the timer's clock, or a stage
// clock the pass marked.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/nvml_power_monitor.hpp"
#include "kernels/cuda/stream.hpp"
#include "lib/harness/sustained.hpp"
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

// Work back to back at the board's power limit, as the sustained phase of
// `kibench run` runs a whole pass (docs/protocol.md): the time of a call
// and the energy it costs once the power controller has settled.
struct Sustained {
  double ms = 0.0, watts = 0.0, joules = 0.0, mhz = 0.0; // watts and after: 0 without NVML
};

// `call` (which enqueues on `stream`, and may fork to other streams as long
// as it joins back) back to back for about `seconds`, a quarter of that
// untimed first; the time of one call from events on `stream`, its power
// and SM clock from the energy counter over the timed calls.
inline Sustained sustain(const std::function<void()> &call, double once_ms, double seconds,
                         gpu::Stream &stream, int device) {
  const int timed = std::max(3, static_cast<int>(seconds * 1e3 / once_ms));
  Sustained out;
  auto monitor = gpu::make_nvml_power_monitor(device);
  if (monitor) monitor->start();
  for (int i = 0; i < timed / 4; ++i) call();
  gpu::Event warm, start, stop;
  warm.record(stream);
  start.record(stream);
  for (int i = 0; i < timed; ++i) call();
  stop.record(stream);
  warm.synchronize();
  const double begin = steady_seconds();
  stop.synchronize();
  const double end = steady_seconds();
  out.ms = static_cast<double>(gpu::Event::elapsed_ms(start, stop)) / timed;
  if (monitor)
    if (const auto power = summarize_power(monitor->stop(), begin, end)) {
      out.watts = power->power_w;
      out.joules = power->power_w * out.ms * 1e-3;
      out.mhz = power->sm_clock_mhz.value_or(0.0);
    }
  return out;
}

} // namespace kibench::dev
