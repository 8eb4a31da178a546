#include "kernels/cuda/gpu_available.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace kibench::gpu {

namespace {

GpuAvailability probe() {
  GpuAvailability result;
  const cudaError_t status = cudaGetDeviceCount(&result.device_count);
  if (status != cudaSuccess) {
    // Not an error of kibench's: the machine has no usable driver or device.
    // The sticky-less error is cleared so later runtime calls start clean.
    (void)cudaGetLastError();
    result.device_count = 0;
    result.reason =
        fmt::format("cudaGetDeviceCount: {} ({})", cudaGetErrorString(status), cudaGetErrorName(status));
    return result;
  }
  if (result.device_count == 0) {
    result.reason = "no CUDA device found";
    return result;
  }
  result.available = true;
  return result;
}

} // namespace

const GpuAvailability &gpu_availability() {
  static const GpuAvailability availability = probe();
  return availability;
}

} // namespace kibench::gpu
