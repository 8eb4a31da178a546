#include "kernels/cuda/nvml.hpp"

#include <array>
#include <dlfcn.h>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace kibench::gpu {

namespace {

// The few NVML declarations kibench needs (nvml.h is not on build machines).
// nvmlReturn_t is a C enum (int); NVML_SUCCESS is 0.
using NvmlDevice = void *;
constexpr int kSuccess = 0;
constexpr int kClockSm = 1;  // NVML_CLOCK_SM
constexpr int kClockMem = 2; // NVML_CLOCK_MEM

// nvmlFieldValue_t and NVML_FI_DEV_POWER_INSTANT (nvml.h): the board's
// power now, in mW (uiVal), refreshed at the sensor's rate, where
// nvmlDeviceGetPowerUsage averages over the last second on Hopper.
constexpr unsigned kFieldPowerInstant = 186;
union FieldValue {
  double d;
  int si;
  unsigned ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  unsigned short us;
};
struct FieldReading {
  unsigned field_id = 0;
  unsigned scope_id = 0;
  long long timestamp = 0;
  long long latency_us = 0;
  int value_type = 0; // nvmlValueType_t
  int status = 0;     // nvmlReturn_t
  FieldValue value{};
};

int clock_id(Nvml::Clock clock) {
  return clock == Nvml::Clock::sm ? kClockSm : kClockMem;
}

} // namespace

struct Nvml::Api {
  void *library = nullptr;
  int (*init)() = nullptr;
  const char *(*error_string)(int) = nullptr;
  int (*handle_by_pci_bus_id)(const char *, NvmlDevice *) = nullptr;
  int (*clock_info)(NvmlDevice, int, unsigned *) = nullptr;
  int (*max_clock_info)(NvmlDevice, int, unsigned *) = nullptr;
  int (*ecc_mode)(NvmlDevice, int *, int *) = nullptr;
  int (*driver_version)(char *, unsigned) = nullptr;
  // Optional entry points: absent ones make their readings nullopt.
  int (*total_energy)(NvmlDevice, unsigned long long *) = nullptr;
  int (*enforced_power_limit)(NvmlDevice, unsigned *) = nullptr;
  int (*persistence_mode)(NvmlDevice, int *) = nullptr; // nvmlEnableState_t
  int (*field_values)(NvmlDevice, int, FieldReading *) = nullptr;
  int (*applications_clock)(NvmlDevice, int, unsigned *) = nullptr;
  int (*default_applications_clock)(NvmlDevice, int, unsigned *) = nullptr;
  int (*clocks_event_reasons)(NvmlDevice, unsigned long long *) = nullptr;
  int (*set_locked_clocks)(NvmlDevice, unsigned, unsigned) = nullptr;
  int (*reset_locked_clocks)(NvmlDevice) = nullptr;
};

namespace {

template <class F> bool resolve(void *library, const char *symbol, F &target) {
  target = reinterpret_cast<F>(dlsym(library, symbol));
  return target != nullptr;
}

// Built in place once (the Nvml object points at the Api beside it).
struct Loaded {
  Nvml::Api api;
  std::optional<Nvml> nvml;
  std::string failure;

  Loaded() {
    api.library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (api.library == nullptr) {
      const char *error = dlerror();
      failure = fmt::format("dlopen(libnvidia-ml.so.1): {}", error != nullptr ? error : "unknown error");
      return;
    }
    // The library stays loaded for the life of the process (no dlclose):
    // timers may read clocks until exit.
    const bool ok = resolve(api.library, "nvmlInit_v2", api.init) &&
                    resolve(api.library, "nvmlErrorString", api.error_string) &&
                    resolve(api.library, "nvmlDeviceGetHandleByPciBusId_v2", api.handle_by_pci_bus_id) &&
                    resolve(api.library, "nvmlDeviceGetClockInfo", api.clock_info) &&
                    resolve(api.library, "nvmlDeviceGetMaxClockInfo", api.max_clock_info) &&
                    resolve(api.library, "nvmlDeviceGetEccMode", api.ecc_mode) &&
                    resolve(api.library, "nvmlSystemGetDriverVersion", api.driver_version);
    if (!ok) {
      failure = "libnvidia-ml.so.1 lacks an expected symbol";
      return;
    }
    (void)resolve(api.library, "nvmlDeviceGetTotalEnergyConsumption", api.total_energy);
    (void)resolve(api.library, "nvmlDeviceGetEnforcedPowerLimit", api.enforced_power_limit);
    (void)resolve(api.library, "nvmlDeviceGetPersistenceMode", api.persistence_mode);
    (void)resolve(api.library, "nvmlDeviceGetFieldValues", api.field_values);
    (void)resolve(api.library, "nvmlDeviceGetApplicationsClock", api.applications_clock);
    (void)resolve(api.library, "nvmlDeviceGetDefaultApplicationsClock", api.default_applications_clock);
    // Renamed in NVML 12.5; the old name stays exported beside the new one.
    if (!resolve(api.library, "nvmlDeviceGetCurrentClocksEventReasons", api.clocks_event_reasons))
      (void)resolve(api.library, "nvmlDeviceGetCurrentClocksThrottleReasons", api.clocks_event_reasons);
    (void)resolve(api.library, "nvmlDeviceSetGpuLockedClocks", api.set_locked_clocks);
    (void)resolve(api.library, "nvmlDeviceResetGpuLockedClocks", api.reset_locked_clocks);
    if (const int status = api.init(); status != kSuccess) {
      failure = fmt::format("nvmlInit_v2: {}", api.error_string(status));
      return;
    }
    nvml.emplace(&api);
  }
  Loaded(const Loaded &) = delete;
  Loaded &operator=(const Loaded &) = delete;
};

Loaded &loaded() {
  static Loaded instance;
  return instance;
}

} // namespace

const Nvml *Nvml::instance() {
  Loaded &l = loaded();
  return l.nvml ? &*l.nvml : nullptr;
}

const std::string &Nvml::load_failure() {
  return loaded().failure;
}

void *Nvml::handle(int device) const {
  std::lock_guard lock(mutex_);
  if (auto it = handles_.find(device); it != handles_.end()) return it->second;
  std::array<char, 32> bus_id{};
  if (cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), device) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  NvmlDevice nvml_device = nullptr;
  if (api_->handle_by_pci_bus_id(bus_id.data(), &nvml_device) != kSuccess) return nullptr;
  handles_.emplace(device, nvml_device);
  return nvml_device;
}

std::optional<unsigned> Nvml::clock_mhz(int device, Clock clock) const {
  void *h = handle(device);
  unsigned mhz = 0;
  if (h == nullptr || api_->clock_info(h, clock_id(clock), &mhz) != kSuccess) return std::nullopt;
  return mhz;
}

std::optional<unsigned> Nvml::max_clock_mhz(int device, Clock clock) const {
  void *h = handle(device);
  unsigned mhz = 0;
  if (h == nullptr || api_->max_clock_info(h, clock_id(clock), &mhz) != kSuccess) return std::nullopt;
  return mhz;
}

std::optional<bool> Nvml::ecc_enabled(int device) const {
  void *h = handle(device);
  int current = 0, pending = 0;
  if (h == nullptr || api_->ecc_mode(h, &current, &pending) != kSuccess) return std::nullopt;
  return current != 0;
}

std::optional<std::string> Nvml::driver_version() const {
  std::array<char, 96> version{};
  if (api_->driver_version(version.data(), static_cast<unsigned>(version.size())) != kSuccess)
    return std::nullopt;
  return std::string(version.data());
}

std::optional<std::uint64_t> Nvml::total_energy_mj(int device) const {
  if (api_->total_energy == nullptr) return std::nullopt;
  void *h = handle(device);
  unsigned long long mj = 0;
  if (h == nullptr || api_->total_energy(h, &mj) != kSuccess) return std::nullopt;
  return static_cast<std::uint64_t>(mj);
}

std::optional<unsigned> Nvml::enforced_power_limit_mw(int device) const {
  if (api_->enforced_power_limit == nullptr) return std::nullopt;
  void *h = handle(device);
  unsigned mw = 0;
  if (h == nullptr || api_->enforced_power_limit(h, &mw) != kSuccess) return std::nullopt;
  return mw;
}

std::optional<bool> Nvml::persistence_mode(int device) const {
  if (api_->persistence_mode == nullptr) return std::nullopt;
  void *h = handle(device);
  int state = 0;
  if (h == nullptr || api_->persistence_mode(h, &state) != kSuccess) return std::nullopt;
  return state != 0;
}

std::optional<unsigned> Nvml::instant_power_mw(int device) const {
  if (api_->field_values == nullptr) return std::nullopt;
  void *h = handle(device);
  FieldReading reading;
  reading.field_id = kFieldPowerInstant;
  if (h == nullptr || api_->field_values(h, 1, &reading) != kSuccess || reading.status != kSuccess)
    return std::nullopt;
  return reading.value.ui;
}

std::optional<unsigned> Nvml::applications_sm_clock_mhz(int device) const {
  if (api_->applications_clock == nullptr) return std::nullopt;
  void *h = handle(device);
  unsigned mhz = 0;
  if (h == nullptr || api_->applications_clock(h, kClockSm, &mhz) != kSuccess) return std::nullopt;
  return mhz;
}

std::optional<unsigned> Nvml::default_applications_sm_clock_mhz(int device) const {
  if (api_->default_applications_clock == nullptr) return std::nullopt;
  void *h = handle(device);
  unsigned mhz = 0;
  if (h == nullptr || api_->default_applications_clock(h, kClockSm, &mhz) != kSuccess) return std::nullopt;
  return mhz;
}

std::optional<std::uint64_t> Nvml::clocks_event_reasons(int device) const {
  if (api_->clocks_event_reasons == nullptr) return std::nullopt;
  void *h = handle(device);
  unsigned long long reasons = 0;
  if (h == nullptr || api_->clocks_event_reasons(h, &reasons) != kSuccess) return std::nullopt;
  return static_cast<std::uint64_t>(reasons);
}

std::string Nvml::set_locked_clocks(int device, unsigned min_mhz, unsigned max_mhz) const {
  if (api_->set_locked_clocks == nullptr || api_->reset_locked_clocks == nullptr)
    return "this driver's NVML has no nvmlDeviceSetGpuLockedClocks";
  void *h = handle(device);
  if (h == nullptr) return "no NVML handle for the device";
  if (const int status = api_->set_locked_clocks(h, min_mhz, max_mhz); status != kSuccess)
    return api_->error_string(status);
  return "";
}

Nvml::LockReset Nvml::lock_reset(int device) const {
  return LockReset{api_->reset_locked_clocks, handle(device)};
}

} // namespace kibench::gpu
