#include "kernels/cuda/bf16_ones.hpp"

#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu {

DeviceBuffer<__nv_bfloat16> bf16_ones(DeviceAllocator &allocator, std::size_t count) {
  constexpr std::uint16_t kOne = 0x3F80; // bf16 1.0: sign 0, exponent 127, mantissa 0
  DeviceBuffer<__nv_bfloat16> ones(allocator, count);
  const std::vector<std::uint16_t> host(count, kOne);
  if (count != 0) {
    CUDA_CHECK(cudaMemcpy(ones.data(), host.data(), ones.bytes(), cudaMemcpyHostToDevice));
    // From pageable memory cudaMemcpy may return before its DMA has landed,
    // and the GEMMs that read the ones run on non-blocking streams, which
    // do not wait for the default stream the copy is on.
    CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
  return ones;
}

} // namespace kibench::gpu
