// The GPU's SM clock and board power as they are now, for
// `--power-state rested` (lib/harness/power_conditioner.hpp). The CUDA
// build reads them from NVML (kernels/cuda/nvml_power_telemetry.hpp).
#pragma once

#include <optional>

namespace kibench {

struct BoardReading {
  std::optional<double> sm_clock_mhz;
  std::optional<double> power_w; // instantaneous, not a trailing average
};

class PowerTelemetry {
public:
  virtual ~PowerTelemetry() = default;
  virtual BoardReading read() = 0;
};

} // namespace kibench
