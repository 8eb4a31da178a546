#include "lib/harness/power_conditioner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/core.h>

#include "lib/stats/summary.hpp"

namespace kibench {

bool IdleBand::holds(const BoardReading &r) const {
  return r.sm_clock_mhz && r.power_w && *r.sm_clock_mhz >= min_clock_mhz && *r.power_w <= max_power_w;
}

std::string IdleBand::describe() const {
  return fmt::format("SM clock >= {:.0f} MHz and board power <= {:.0f} W", std::ceil(min_clock_mhz),
                     std::floor(max_power_w));
}

std::optional<IdleBand> idle_band(const std::vector<BoardReading> &idle) {
  if (idle.empty()) return std::nullopt;
  std::vector<double> clocks, powers;
  for (const BoardReading &r : idle) {
    if (!r.sm_clock_mhz || !r.power_w) return std::nullopt;
    clocks.push_back(*r.sm_clock_mhz);
    powers.push_back(*r.power_w);
  }
  return IdleBand{power_state::kRestClockFraction * stats::median(std::move(clocks)),
                  stats::median(std::move(powers)) + power_state::kRestPowerMarginW};
}

WaitClock WaitClock::steady() {
  return {[] {
            return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
          },
          [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }};
}

RestOutcome rest_until_in_band(PowerTelemetry &telemetry, const IdleBand &band, double bound_s, double poll_s,
                               const WaitClock &clock) {
  const double start = clock.now_s();
  for (;;) {
    const bool in_band = band.holds(telemetry.read());
    const double waited = clock.now_s() - start;
    if (in_band) return {waited, false};
    if (waited >= bound_s) return {waited, true};
    clock.sleep_s(std::min(poll_s, bound_s - waited));
  }
}

std::vector<BoardReading> read_idle(PowerTelemetry &telemetry, const WaitClock &clock) {
  std::vector<BoardReading> readings;
  for (int i = 0; i < power_state::kIdleReadings; ++i) {
    if (i > 0) clock.sleep_s(power_state::kPollIntervalS);
    readings.push_back(telemetry.read());
  }
  return readings;
}

std::optional<RestOutcome> RestedConditioner::condition(const Implementation &impl, Device &device) {
  if (!impl.needs_gpu()) return std::nullopt;
  // The band is read from the board: the flush must be over, or the reading
  // is of the flush.
  device.wait_idle();
  return rest_until_in_band(telemetry_, band_, power_state::kRestBoundS, power_state::kPollIntervalS, clock_);
}

std::optional<RestOutcome> LoadedConditioner::condition(const Implementation &impl, Device &device) {
  if (impl.needs_gpu()) device.enqueue_power_load(power_state::kLoadS);
  return std::nullopt;
}

} // namespace kibench
