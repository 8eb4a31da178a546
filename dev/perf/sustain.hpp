// Work back to back at the board's power limit, for the dev/perf studies:
// time a call and the energy it costs once the power controller has
// settled, as the sustained phase of `kibench run` does for a whole pass
// (docs/protocol.md).
#pragma once

#include <algorithm>
#include <functional>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/nvml_power_monitor.hpp"
#include "kernels/cuda/stream.hpp"
#include "lib/harness/sustained.hpp"

namespace kibench::dev {

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
