#include "lib/harness/sustained.hpp"

#include <algorithm>
#include <cmath>

namespace kibench {

std::optional<PowerSummary> summarize_power(const std::vector<PowerReading> &readings, double busy_begin_s,
                                            double busy_end_s) {
  // A step is a reading whose counter differs from the reading before it;
  // its time is when it was first seen (at most one read interval late,
  // for both ends alike).
  std::optional<std::size_t> first, last;
  std::size_t steps = 0;
  for (std::size_t i = 1; i < readings.size(); ++i) {
    const PowerReading &r = readings[i];
    if (r.energy_j == readings[i - 1].energy_j) continue;
    if (r.time_s < busy_begin_s || r.time_s > busy_end_s) continue;
    if (!first) first = i;
    last = i;
    ++steps;
  }
  if (!first || *last == *first) return std::nullopt;
  const PowerReading &a = readings[*first], &b = readings[*last];
  if (!(b.time_s > a.time_s) || b.energy_j < a.energy_j) return std::nullopt;
  PowerSummary s;
  s.window_s = b.time_s - a.time_s;
  s.power_w = (b.energy_j - a.energy_j) / s.window_s;
  s.steps = steps;
  double clock_sum = 0.0;
  std::size_t clocks = 0;
  for (std::size_t i = *first; i <= *last; ++i) {
    if (!readings[i].sm_clock_mhz) continue;
    clock_sum += *readings[i].sm_clock_mhz;
    ++clocks;
  }
  if (clocks > 0) s.sm_clock_mhz = clock_sum / static_cast<double>(clocks);
  return s;
}

std::optional<double> SustainedMeasurement::energy_j() const {
  if (!power) return std::nullopt;
  return power->power_w * latency_ns * 1e-9;
}

std::size_t sustained_invocations(const ProtocolSettings &settings, double median_ns) {
  // A cap, so that a timer reading ~0 cannot make the phase run for hours.
  constexpr double kMost = 1e4;
  const double wanted = median_ns > 0.0 ? std::ceil(settings.sustained_time_s * 1e9 / median_ns) : kMost;
  return static_cast<std::size_t>(std::clamp(wanted, 3.0, kMost));
}

std::optional<SustainedMeasurement> measure_sustained(Implementation &impl, Device &device,
                                                      const ProtocolSettings &settings, double median_ns) {
  if (!(settings.sustained_time_s > 0.0) || settings.pass == Pass::backward) return std::nullopt;
  if (auto *remote = dynamic_cast<RemoteSustained *>(&impl)) return remote->measure_sustained_there(settings, median_ns);
  std::unique_ptr<PowerMonitor> monitor = device.make_power_monitor();
  if (!monitor) return std::nullopt;
  SustainedMeasurement m;
  m.monitor = monitor->name();
  m.invocations = sustained_invocations(settings, median_ns);
  m.warmup_invocations = (m.invocations + 3) / 4;

  // Everything is enqueued at once; the two timers' completions mark, in
  // host time, when the warm-up has ended and when the last invocation has,
  // so the power window lies wholly inside back-to-back work. (If the
  // launch queue fills, enqueueing returns late and the window starts
  // later, still inside the work.)
  const auto warmup_timer = device.make_timer();
  const auto timer = device.make_timer();
  monitor->start();
  warmup_timer->start();
  for (std::size_t i = 0; i < m.warmup_invocations; ++i) impl.run(settings.pass);
  warmup_timer->stop();
  timer->start();
  for (std::size_t i = 0; i < m.invocations; ++i) impl.run(settings.pass);
  timer->stop();
  (void)warmup_timer->elapsed_ns();
  const double busy_begin = steady_seconds();
  const double total_ns = timer->elapsed_ns();
  const double busy_end = steady_seconds();
  const std::vector<PowerReading> readings = monitor->stop();
  m.latency_ns = total_ns / static_cast<double>(m.invocations);
  m.power = summarize_power(readings, busy_begin, busy_end);
  return m;
}

} // namespace kibench
