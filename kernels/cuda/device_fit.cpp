#include "kernels/cuda/device_fit.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/gpu_available.hpp"

namespace kibench::gpu {

namespace {

// The CUDA context, cuBLASLt's kernels and the other implementations of a
// run hold some memory too.
constexpr std::uint64_t kMarginBytes = std::uint64_t{2} << 30;

double gib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(1u << 30);
}

} // namespace

int current_device() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

std::optional<std::string> device_fit(std::string_view implementation, std::uint64_t needed_bytes) {
  if (const auto &availability = gpu_availability(); !availability.available)
    return fmt::format("no GPU: {}", availability.reason);
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, current_device()));
  const std::uint64_t total = prop.totalGlobalMem;
  if (needed_bytes + kMarginBytes <= total) return std::nullopt;
  return fmt::format("{} needs {:.1f} GiB of device memory at its peak; {} has {:.1f} GiB", implementation,
                     gib(needed_bytes), prop.name, gib(total));
}

} // namespace kibench::gpu
