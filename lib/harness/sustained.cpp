#include "lib/harness/sustained.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "lib/stats/summary.hpp"

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

std::optional<double> SustainedRound::energy_j() const {
  if (!power) return std::nullopt;
  return power->power_w * latency_ns * 1e-9;
}

SustainedMeasurement combine_sustained_rounds(std::vector<SustainedRound> rounds, std::string monitor) {
  if (rounds.empty()) throw std::invalid_argument("a sustained measurement of no rounds");
  SustainedMeasurement m;
  std::vector<double> latencies, powers, energies;
  double clock_sum = 0.0, window_s = 0.0;
  std::size_t clocks = 0, steps = 0;
  for (const SustainedRound &r : rounds) {
    m.warmup_invocations += r.warmup_invocations;
    m.invocations += r.invocations;
    latencies.push_back(r.latency_ns);
    if (!r.power) continue;
    powers.push_back(r.power->power_w);
    energies.push_back(*r.energy_j());
    window_s += r.power->window_s;
    steps += r.power->steps;
    if (r.power->sm_clock_mhz) {
      clock_sum += *r.power->sm_clock_mhz;
      ++clocks;
    }
  }
  m.latency_ns = stats::median(std::move(latencies));
  if (!powers.empty()) {
    PowerSummary p;
    p.power_w = stats::median(std::move(powers));
    p.window_s = window_s;
    p.steps = steps;
    if (clocks > 0) p.sm_clock_mhz = clock_sum / static_cast<double>(clocks);
    m.power = p;
    m.energy_j = stats::median(std::move(energies));
  }
  m.rounds = std::move(rounds);
  m.monitor = std::move(monitor);
  return m;
}

SustainedMeasurement merge_sustained(const std::vector<SustainedMeasurement> &measurements) {
  std::vector<SustainedRound> rounds;
  for (const SustainedMeasurement &m : measurements) rounds.insert(rounds.end(), m.rounds.begin(), m.rounds.end());
  return combine_sustained_rounds(std::move(rounds), measurements.empty() ? std::string() : measurements.front().monitor);
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
  SustainedRound round;
  round.invocations = sustained_invocations(settings, median_ns);
  round.warmup_invocations = (round.invocations + 3) / 4;

  // The host waits for the warm-up, then enqueues the timed invocations:
  // the GPU idles only while the first of them is enqueued, and the power
  // window opens as they start, so it spans them all. (Had the warm-up's
  // end been read after everything was enqueued, a pass of many short
  // kernels would fill the launch queue, enqueueing would return only near
  // the end of the work, and the window would shrink to the last queue's
  // worth: at T = 1000 too short for two counter steps.) The window closes
  // when the timer's completion is seen, so it lies inside the timed work
  // but for the enqueueing of its first invocation.
  const auto warmup_timer = device.make_timer();
  const auto timer = device.make_timer();
  monitor->start();
  warmup_timer->start();
  for (std::size_t i = 0; i < round.warmup_invocations; ++i) impl.run(settings.pass);
  warmup_timer->stop();
  (void)warmup_timer->elapsed_ns();
  const double busy_begin = steady_seconds();
  timer->start();
  for (std::size_t i = 0; i < round.invocations; ++i) impl.run(settings.pass);
  timer->stop();
  const double total_ns = timer->elapsed_ns();
  const double busy_end = steady_seconds();
  const std::vector<PowerReading> readings = monitor->stop();
  round.latency_ns = total_ns / static_cast<double>(round.invocations);
  round.power = summarize_power(readings, busy_begin, busy_end);
  return combine_sustained_rounds({round}, monitor->name());
}

} // namespace kibench
