// Cold samples of an implementation's pass for the dev/perf studies, taken
// as `kibench run` takes them: `warmup` untimed runs, then each sample after
// the implementation's before_sample() and an L2 flush, through its own
// timer. `after_sample`, if given, runs once each sample's time has been
// read (the pass has finished): to read the timer's clock, or a stage
// clock the pass marked.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "lib/implementation/implementation.hpp"

namespace kibench::dev {

inline std::vector<double> cold_samples_ms(Implementation &impl, Pass pass, int warmup, int samples,
                                           const std::function<void(SampleTimer &)> &after_sample = {}) {
  for (int i = 0; i < warmup; ++i) {
    impl.before_sample(pass);
    impl.run(pass);
  }
  (void)impl.outputs(); // the warm-up has finished
  const auto device = impl.open_device();
  auto timer = device->make_timer();
  std::vector<double> ms;
  for (int i = 0; i < samples; ++i) {
    impl.before_sample(pass);
    device->flush_caches();
    timer->start();
    impl.run(pass);
    timer->stop();
    ms.push_back(timer->elapsed_ns() * 1e-6);
    if (after_sample) after_sample(*timer);
  }
  return ms;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace kibench::dev
