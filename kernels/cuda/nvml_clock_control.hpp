// The GPU's clock state and --lock-clocks through NVML
// (lib/environment/clock_control.hpp): base locks the SM clock at the
// board's TDP clock (NVML_CLOCK_LIMIT_ID_TDP), max at its maximum SM clock,
// as NVBench's --lgc does.
#pragma once

#include <optional>
#include <string>

#include "kernels/cuda/nvml.hpp"
#include "lib/environment/clock_control.hpp"

namespace kibench::gpu {

class NvmlClockControl final : public ClockControl {
public:
  NvmlClockControl(const Nvml &nvml, int device) : nvml_(nvml), device_(device) {}
  [[nodiscard]] ClockReadings read() const override;
  std::string lock(ClockTarget target, std::optional<unsigned> &locked_mhz) override;
  void unlock() noexcept override;

private:
  const Nvml &nvml_;
  int device_;
  Nvml::LockReset reset_; // resolved when locked, so unlock() looks nothing up
  std::optional<ClockTarget> locked_;
  std::optional<unsigned> locked_mhz_;
};

} // namespace kibench::gpu
