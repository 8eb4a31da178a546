// PowerTelemetry (lib/environment/power_telemetry.hpp) through NVML: the
// SM clock and the board's instantaneous power of one CUDA device.
#pragma once

#include "kernels/cuda/nvml.hpp"
#include "lib/environment/power_telemetry.hpp"

namespace kibench::gpu {

class NvmlPowerTelemetry final : public PowerTelemetry {
public:
  NvmlPowerTelemetry(const Nvml &nvml, int device) : nvml_(nvml), device_(device) {}
  BoardReading read() override;

private:
  const Nvml &nvml_;
  int device_;
};

} // namespace kibench::gpu
