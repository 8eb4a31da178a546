#include "lib/environment/clock_control_set.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace kibench {

ClockControlSet::ClockControlSet(std::vector<std::unique_ptr<ClockControl>> devices)
    : devices_(std::move(devices)) {
  if (devices_.empty()) throw std::invalid_argument("ClockControlSet: no devices");
  for (const auto &d : devices_)
    if (d == nullptr) throw std::invalid_argument("ClockControlSet: a device without a clock control");
}

ClockReadings ClockControlSet::read() const {
  const ClockReadings first = devices_.front()->read();
  if (!clock_state(first).locked) return first;
  for (std::size_t i = 1; i < devices_.size(); ++i) {
    ClockReadings other = devices_[i]->read();
    if (!clock_state(other).locked) return other;
  }
  return first;
}

std::string ClockControlSet::lock(ClockTarget target, std::optional<unsigned> &locked_mhz) {
  std::optional<unsigned> first_mhz;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    std::optional<unsigned> mhz;
    if (const std::string why = devices_[i]->lock(target, mhz); !why.empty()) {
      for (std::size_t j = 0; j < i; ++j) devices_[j]->unlock();
      return fmt::format("GPU {}: {}", i, why);
    }
    if (i == 0) first_mhz = mhz;
  }
  locked_mhz = first_mhz;
  return {};
}

void ClockControlSet::unlock() noexcept {
  for (const auto &d : devices_) d->unlock();
}

} // namespace kibench
