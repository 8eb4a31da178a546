// NVML, loaded at run time with dlopen("libnvidia-ml.so.1"). kibench does
// not link it: machines without a driver (CI) have no such library, and
// every reading here is optional. Devices are found by PCI bus id, which
// is the same for CUDA and NVML whatever CUDA_VISIBLE_DEVICES says.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace kibench::gpu {

class Nvml {
public:
  // The process-wide instance, or nullptr when NVML cannot be loaded or
  // initialized (the reason is in load_failure()).
  static const Nvml *instance();
  static const std::string &load_failure();

  enum class Clock { sm, memory };
  // Current and maximum clocks in MHz of the CUDA device `device`.
  [[nodiscard]] std::optional<unsigned> clock_mhz(int device, Clock clock) const;
  [[nodiscard]] std::optional<unsigned> max_clock_mhz(int device, Clock clock) const;
  // Current ECC mode; nullopt where the device has no ECC or NVML says nothing.
  [[nodiscard]] std::optional<bool> ecc_enabled(int device) const;
  [[nodiscard]] std::optional<std::string> driver_version() const;
  // The board's energy counter in millijoules since the driver loaded
  // (Volta and later); it advances in steps, at the sensor's update rate.
  [[nodiscard]] std::optional<std::uint64_t> total_energy_mj(int device) const;
  // The power limit the board enforces now, in milliwatts.
  [[nodiscard]] std::optional<unsigned> enforced_power_limit_mw(int device) const;
  [[nodiscard]] std::optional<bool> persistence_mode(int device) const;
  // The board's power now in milliwatts (NVML's instantaneous field, not
  // nvmlDeviceGetPowerUsage's one-second average); nullopt where the driver
  // has no such field.
  [[nodiscard]] std::optional<unsigned> instant_power_mw(int device) const;

  // The SM's applications clock and its default (`nvidia-smi -ac`), in MHz.
  [[nodiscard]] std::optional<unsigned> applications_sm_clock_mhz(int device) const;
  [[nodiscard]] std::optional<unsigned> default_applications_sm_clock_mhz(int device) const;
  // nvmlClocksEventReasons bits now (NVML 12.x names them throttle reasons).
  [[nodiscard]] std::optional<std::uint64_t> clocks_event_reasons(int device) const;
  // nvmlDeviceSetGpuLockedClocks(min, max) (MHz, or NVML's TDP limit id);
  // "" on success, else NVML's reason. Needs root.
  [[nodiscard]] std::string set_locked_clocks(int device, unsigned min_mhz, unsigned max_mhz) const;
  static constexpr unsigned kClockLimitTdp = 0xffffff01u; // NVML_CLOCK_LIMIT_ID_TDP

  // nvmlDeviceResetGpuLockedClocks, resolved for a signal handler: a plain
  // function and the device's handle, no lookup or mutex when called.
  struct LockReset {
    int (*reset)(void *) = nullptr;
    void *device = nullptr;
  };
  [[nodiscard]] LockReset lock_reset(int device) const;

  struct Api; // the resolved entry points (nvml.cpp)
  explicit Nvml(const Api *api) : api_(api) {}

private:
  // NVML's handle for a CUDA device, looked up once (timers ask per sample).
  [[nodiscard]] void *handle(int device) const;
  const Api *api_;
  mutable std::mutex mutex_;
  mutable std::map<int, void *> handles_;
};

} // namespace kibench::gpu
