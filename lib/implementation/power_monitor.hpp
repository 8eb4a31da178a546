// Reads a device's energy counter in the background while work runs, for
// the sustained phase of the harness (harness/sustained.hpp): what a pass
// costs in joules, and at what power and clock, when it runs back to back
// as in a training loop.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace kibench {

// One reading: host time (seconds on std::chrono::steady_clock since its
// epoch), the device's cumulative energy counter in joules, and the SM
// clock if the device reports it.
struct PowerReading {
  double time_s = 0.0;
  double energy_j = 0.0;
  std::optional<double> sm_clock_mhz;
};

// Now, on PowerReading::time_s's clock: what monitors stamp readings with
// and what the harness bounds its busy window with.
inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class PowerMonitor {
public:
  virtual ~PowerMonitor() = default;
  // Starts reading in the background, about once a millisecond.
  virtual void start() = 0;
  // Stops, and returns every reading since start(), in time order.
  virtual std::vector<PowerReading> stop() = 0;
  // e.g. "nvml_total_energy".
  [[nodiscard]] virtual std::string name() const = 0;
};

} // namespace kibench
