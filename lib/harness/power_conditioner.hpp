// What brings the GPU to the power state a timed sample starts from
// (power_state.hpp). The harness calls a PowerConditioner once before each
// timed sample: after the cache flush and the sample's untimed work, before
// the timer starts, so its work and its waiting are never timed.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/environment/power_telemetry.hpp"
#include "lib/harness/power_state.hpp"
#include "lib/implementation/implementation.hpp"

namespace kibench {

// rested: how long one sample waited for the idle band, and whether it
// stopped at the bound instead.
struct RestOutcome {
  double waited_s = 0.0;
  bool hit_bound = false;
};

// The SM clock and board power a rested sample starts within.
struct IdleBand {
  double min_clock_mhz = 0.0;
  double max_power_w = 0.0;
  // Both readings present and within the band.
  [[nodiscard]] bool holds(const BoardReading &reading) const;
  // e.g. "SM clock >= 1921 MHz and board power <= 112 W"
  [[nodiscard]] std::string describe() const;
};

// The band from readings of the idle GPU: kRestClockFraction of their
// median clock and kRestPowerMarginW above their median power; nullopt
// when any reading lacks the clock or the power.
std::optional<IdleBand> idle_band(const std::vector<BoardReading> &idle);

// Time as the wait sees it, so tests can run it on a clock of their own.
struct WaitClock {
  std::function<double()> now_s;
  std::function<void(double)> sleep_s;
  static WaitClock steady(); // std::chrono::steady_clock and this_thread::sleep_for
};

// Reads `telemetry` every `poll_s` until a reading is in `band` or `bound_s`
// has passed (one last reading at the bound decides).
RestOutcome rest_until_in_band(PowerTelemetry &telemetry, const IdleBand &band, double bound_s, double poll_s,
                               const WaitClock &clock);

// kIdleReadings readings, kPollIntervalS apart, of the GPU before any work.
std::vector<BoardReading> read_idle(PowerTelemetry &telemetry, const WaitClock &clock);

class PowerConditioner {
public:
  virtual ~PowerConditioner() = default;
  // Before a timed sample of `impl`, on the device it runs on; the rest
  // outcome where it waited.
  virtual std::optional<RestOutcome> condition(const Implementation &impl, Device &device) = 0;
};

// rested: for a GPU implementation, waits for its device work (the flush)
// to finish, then for the band. Host implementations are not conditioned.
class RestedConditioner final : public PowerConditioner {
public:
  RestedConditioner(PowerTelemetry &telemetry, IdleBand band, WaitClock clock = WaitClock::steady())
      : telemetry_(telemetry), band_(band), clock_(std::move(clock)) {}
  std::optional<RestOutcome> condition(const Implementation &impl, Device &device) override;

private:
  PowerTelemetry &telemetry_;
  IdleBand band_;
  WaitClock clock_;
};

// loaded: for a GPU implementation, enqueues kLoadS of preconditioning load
// on its stream. Host implementations are not conditioned.
class LoadedConditioner final : public PowerConditioner {
public:
  std::optional<RestOutcome> condition(const Implementation &impl, Device &device) override;
};

} // namespace kibench
