// The boards of every GPU a multi-GPU run holds, read as one for
// `--power-state rested`: the lowest SM clock and the highest board power
// among them, so a sample starts rested only once the slowest-clocked GPU
// is back up and the hottest board back down (the idle band is taken from
// the same readings, so it is each GPU's band at its worst). A reading a
// board does not give leaves the combined one empty.
#pragma once

#include <memory>
#include <vector>

#include "lib/environment/power_telemetry.hpp"

namespace kibench {

class PowerTelemetrySet final : public PowerTelemetry {
public:
  // At least one; device i's at i.
  explicit PowerTelemetrySet(std::vector<std::unique_ptr<PowerTelemetry>> devices);
  BoardReading read() override;

private:
  std::vector<std::unique_ptr<PowerTelemetry>> devices_;
};

} // namespace kibench
