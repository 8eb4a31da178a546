#include "kernels/cuda/gpu_environment.hpp"

#include <array>
#include <stdexcept>

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/gpu_available.hpp"
#include "kernels/cuda/nvml.hpp"

namespace kibench::gpu {

namespace {

std::string format_uuid(const cudaUUID_t &uuid) {
  const auto *b = reinterpret_cast<const unsigned char *>(uuid.bytes);
  return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{"
                     ":02x}{:02x}{:02x}",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                     b[14], b[15]);
}

} // namespace

std::string cuda_version_string(int version) {
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

GpuEnvironment probe_gpu_environment(int device) {
  if (const auto &availability = gpu_availability(); !availability.available)
    throw std::runtime_error("no GPU: " + availability.reason);
  GpuEnvironment env;
  env.device = device;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  env.name = prop.name;
  env.uuid = format_uuid(prop.uuid);
  env.total_memory_bytes = prop.totalGlobalMem;
  env.sm_count = prop.multiProcessorCount;
  env.compute_capability_major = prop.major;
  env.compute_capability_minor = prop.minor;
  env.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  env.memory_bus_width_bits = prop.memoryBusWidth;
  std::array<char, 32> bus_id{};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), device));
  env.pci_bus_id = bus_id.data();
  CUDA_CHECK(cudaDriverGetVersion(&env.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&env.runtime_version));
  env.cublaslt_version = cublasLtGetVersion();

  if (const Nvml *nvml = Nvml::instance()) {
    env.nvml_status = "ok";
    env.nvml_driver_version = nvml->driver_version();
    env.sm_clock_mhz = nvml->clock_mhz(device, Nvml::Clock::sm);
    env.max_sm_clock_mhz = nvml->max_clock_mhz(device, Nvml::Clock::sm);
    env.memory_clock_mhz = nvml->clock_mhz(device, Nvml::Clock::memory);
    env.max_memory_clock_mhz = nvml->max_clock_mhz(device, Nvml::Clock::memory);
    env.ecc_enabled = nvml->ecc_enabled(device);
    env.persistence_mode = nvml->persistence_mode(device);
    if (const auto mw = nvml->enforced_power_limit_mw(device)) env.power_limit_watts = *mw / 1000.0;
  } else {
    env.nvml_status = Nvml::load_failure();
  }
  return env;
}

} // namespace kibench::gpu
