#include "kernels/cuda/nvml_power_monitor.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "kernels/cuda/nvml.hpp"

namespace kibench::gpu {

namespace {

class NvmlPowerMonitor final : public PowerMonitor {
public:
  NvmlPowerMonitor(const Nvml &nvml, std::vector<int> devices) : nvml_(nvml), devices_(std::move(devices)) {}
  ~NvmlPowerMonitor() override { halt(); }
  NvmlPowerMonitor(const NvmlPowerMonitor &) = delete;
  NvmlPowerMonitor &operator=(const NvmlPowerMonitor &) = delete;

  void start() override {
    if (reader_.joinable()) throw std::logic_error("NvmlPowerMonitor::start: already started");
    readings_.clear();
    readings_.reserve(16384);
    running_.store(true);
    reader_ = std::thread([this] { read_until_stopped(); });
  }

  std::vector<PowerReading> stop() override {
    halt();
    return std::move(readings_);
  }

  [[nodiscard]] std::string name() const override { return "nvml_total_energy"; }

private:
  void halt() {
    running_.store(false);
    if (reader_.joinable()) reader_.join();
  }

  // Only this thread touches readings_ until halt() has joined it.
  void read_until_stopped() {
    while (running_.load()) {
      // Several devices: the sum of their counters (each rises in its own
      // steps, so a window between steps of the sum is off by at most one
      // step of each), and the lowest SM clock among them.
      PowerReading r;
      bool complete = true;
      for (const int device : devices_) {
        const auto mj = nvml_.total_energy_mj(device);
        if (!mj) {
          complete = false;
          break;
        }
        r.energy_j += static_cast<double>(*mj) * 1e-3;
        if (const auto mhz = nvml_.clock_mhz(device, Nvml::Clock::sm))
          r.sm_clock_mhz = r.sm_clock_mhz ? std::min(*r.sm_clock_mhz, static_cast<double>(*mhz))
                                          : static_cast<double>(*mhz);
      }
      if (complete) {
        r.time_s = steady_seconds();
        readings_.push_back(r);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  const Nvml &nvml_;
  std::vector<int> devices_;
  std::atomic<bool> running_{false};
  std::thread reader_;
  std::vector<PowerReading> readings_;
};

} // namespace

std::unique_ptr<PowerMonitor> make_nvml_power_monitor(int device) {
  return make_nvml_power_monitor(std::vector<int>{device});
}

std::unique_ptr<PowerMonitor> make_nvml_power_monitor(std::vector<int> devices) {
  const Nvml *nvml = Nvml::instance();
  if (nvml == nullptr || devices.empty()) return nullptr;
  for (const int device : devices)
    if (!nvml->total_energy_mj(device)) return nullptr;
  return std::make_unique<NvmlPowerMonitor>(*nvml, std::move(devices));
}

} // namespace kibench::gpu
