#include "kernels/cuda/nvml_clock_control.hpp"

namespace kibench::gpu {

ClockReadings NvmlClockControl::read() const {
  ClockReadings r;
  r.applications_sm_mhz = nvml_.applications_sm_clock_mhz(device_);
  r.default_applications_sm_mhz = nvml_.default_applications_sm_clock_mhz(device_);
  r.event_reasons = nvml_.clocks_event_reasons(device_);
  r.locked_by_kibench = locked_;
  r.locked_mhz = locked_mhz_;
  return r;
}

std::string NvmlClockControl::lock(ClockTarget target, std::optional<unsigned> &locked_mhz) {
  locked_mhz.reset();
  unsigned low = Nvml::kClockLimitTdp, high = Nvml::kClockLimitTdp;
  if (target == ClockTarget::max) {
    const auto max = nvml_.max_clock_mhz(device_, Nvml::Clock::sm);
    if (!max) return "NVML gives no maximum SM clock";
    low = high = *max;
    locked_mhz = *max;
  }
  reset_ = nvml_.lock_reset(device_);
  if (std::string refused = nvml_.set_locked_clocks(device_, low, high); !refused.empty()) {
    locked_mhz.reset();
    return refused;
  }
  locked_ = target;
  locked_mhz_ = locked_mhz;
  return "";
}

void NvmlClockControl::unlock() noexcept {
  if (locked_ && reset_.reset != nullptr && reset_.device != nullptr) (void)reset_.reset(reset_.device);
  locked_.reset();
  locked_mhz_.reset();
}

} // namespace kibench::gpu
