#include "kernels/cuda/nvml_power_telemetry.hpp"

namespace kibench::gpu {

BoardReading NvmlPowerTelemetry::read() {
  BoardReading reading;
  if (const auto mhz = nvml_.clock_mhz(device_, Nvml::Clock::sm)) reading.sm_clock_mhz = *mhz;
  if (const auto mw = nvml_.instant_power_mw(device_)) reading.power_w = static_cast<double>(*mw) * 1e-3;
  return reading;
}

} // namespace kibench::gpu
