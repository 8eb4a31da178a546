// The clocks of every GPU a multi-GPU run holds (kibench run --gpus), as
// one ClockControl: a lock locks all of them or none (the ones locked
// before a refusal are reset), an unlock resets all, and a reading is
// locked only where every device's is (clock_state of each), so a run
// records clocksLocked only when no GPU of it ran free.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lib/environment/clock_control.hpp"

namespace kibench {

class ClockControlSet final : public ClockControl {
public:
  // At least one control; device i's at i.
  explicit ClockControlSet(std::vector<std::unique_ptr<ClockControl>> devices);
  // The first device's readings, unless some device's state differs from
  // it: then the first unlocked device's, so clock_state says unlocked.
  [[nodiscard]] ClockReadings read() const override;
  // Locks each in turn; on a refusal resets those locked and returns
  // "GPU i: <reason>". `locked_mhz`: the first device's clock.
  std::string lock(ClockTarget target, std::optional<unsigned> &locked_mhz) override;
  void unlock() noexcept override;

private:
  std::vector<std::unique_ptr<ClockControl>> devices_;
};

} // namespace kibench
