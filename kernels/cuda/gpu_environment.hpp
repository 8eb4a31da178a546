// What the GPU side of an ExecutionEnvironment manifest records: the
// device's identity and shape, the software versions that change numbers
// (driver, CUDA runtime, cuBLASLt), and the clocks, ECC mode, persistence
// mode and power limit NVML reports (optional: NVML is loaded at run time and may be absent).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kibench::gpu {

struct GpuEnvironment {
  int device = 0;
  std::string name;       // "NVIDIA H200"
  std::string uuid;       // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string pci_bus_id; // "0000:19:00.0"
  std::uint64_t total_memory_bytes = 0;
  int sm_count = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  std::uint64_t l2_bytes = 0;
  int driver_version = 0;                         // cudaDriverGetVersion: 1000*major + 10*minor (e.g. 13000)
  int runtime_version = 0;                        // cudaRuntimeGetVersion, same encoding
  std::uint64_t cublaslt_version = 0;             // cublasLtGetVersion: e.g. 130001
  std::optional<std::string> nvml_driver_version; // "580.159.04"
  std::optional<unsigned> sm_clock_mhz, max_sm_clock_mhz;
  std::optional<unsigned> memory_clock_mhz, max_memory_clock_mhz;
  int memory_bus_width_bits = 0; // cudaDeviceProp::memoryBusWidth
  std::optional<bool> ecc_enabled;
  std::optional<bool> persistence_mode;
  std::optional<double> power_limit_watts; // enforced now
  std::string nvml_status;                 // "ok", or why NVML readings are missing
};

// "13.0" from 13000 (the CUDA encoding of driver and runtime versions).
std::string cuda_version_string(int version);

// Probes `device`. Needs gpu_available(); throws std::runtime_error otherwise.
GpuEnvironment probe_gpu_environment(int device = 0);

} // namespace kibench::gpu
