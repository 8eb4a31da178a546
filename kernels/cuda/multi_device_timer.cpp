#include "kernels/cuda/multi_device_timer.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_guard.hpp"
#include "kernels/cuda/nvml.hpp"

namespace kibench::gpu {

MultiDeviceTimer::MultiDeviceTimer(std::vector<DeviceStream> streams) : streams_(std::move(streams)) {
  if (streams_.empty()) throw std::invalid_argument("MultiDeviceTimer: no devices");
  for (const DeviceStream &s : streams_) {
    // Events belong to the device current when they are made.
    DeviceGuard guard(s.device);
    starts_.emplace_back();
    stops_.emplace_back();
  }
}

void MultiDeviceTimer::start() {
  for (const DeviceStream &s : streams_) CUDA_CHECK(cudaStreamSynchronize(s.stream));
  for (std::size_t r = 0; r < streams_.size(); ++r) {
    DeviceGuard guard(streams_[r].device);
    starts_[r].record(streams_[r].stream);
  }
}

void MultiDeviceTimer::stop() {
  for (std::size_t r = 0; r < streams_.size(); ++r) {
    DeviceGuard guard(streams_[r].device);
    stops_[r].record(streams_[r].stream);
  }
  clock_mhz_.reset();
  power_w_.reset();
  const Nvml *nvml = Nvml::instance();
  if (nvml == nullptr) return;
  std::optional<double> clock, power = 0.0;
  for (const DeviceStream &s : streams_) {
    if (const auto mhz = nvml->clock_mhz(s.device, Nvml::Clock::sm))
      clock = clock ? std::min(*clock, static_cast<double>(*mhz)) : static_cast<double>(*mhz);
    const auto mw = nvml->instant_power_mw(s.device);
    if (mw && power) {
      *power += static_cast<double>(*mw) * 1e-3;
    } else {
      power.reset(); // a sum over some boards only would mislead
    }
  }
  clock_mhz_ = clock;
  power_w_ = power;
}

double MultiDeviceTimer::elapsed_ns() {
  device_ns_.clear();
  for (std::size_t r = 0; r < streams_.size(); ++r) {
    stops_[r].synchronize();
    device_ns_.push_back(static_cast<double>(Event::elapsed_ms(starts_[r], stops_[r])) * 1.0e6);
  }
  return slowest_device_ns(device_ns_);
}

double slowest_device_ns(const std::vector<double> &device_ns) {
  if (device_ns.empty()) throw std::invalid_argument("slowest_device_ns: no devices");
  return *std::max_element(device_ns.begin(), device_ns.end());
}

} // namespace kibench::gpu
