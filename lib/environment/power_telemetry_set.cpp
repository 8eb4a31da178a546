#include "lib/environment/power_telemetry_set.hpp"

#include <algorithm>
#include <stdexcept>

namespace kibench {

PowerTelemetrySet::PowerTelemetrySet(std::vector<std::unique_ptr<PowerTelemetry>> devices)
    : devices_(std::move(devices)) {
  if (devices_.empty()) throw std::invalid_argument("PowerTelemetrySet: no devices");
  for (const auto &d : devices_)
    if (d == nullptr) throw std::invalid_argument("PowerTelemetrySet: a device without telemetry");
}

BoardReading PowerTelemetrySet::read() {
  BoardReading combined = devices_.front()->read();
  for (std::size_t i = 1; i < devices_.size(); ++i) {
    const BoardReading r = devices_[i]->read();
    combined.sm_clock_mhz = combined.sm_clock_mhz && r.sm_clock_mhz
                                ? std::optional(std::min(*combined.sm_clock_mhz, *r.sm_clock_mhz))
                                : std::nullopt;
    combined.power_w = combined.power_w && r.power_w ? std::optional(std::max(*combined.power_w, *r.power_w))
                                                     : std::nullopt;
  }
  return combined;
}

} // namespace kibench
