#include "kernels/cuda/l2_flush.hpp"

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu {

namespace {

std::size_t flush_bytes(int device) {
  int l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  return 2 * static_cast<std::size_t>(l2_bytes);
}

} // namespace

L2Flush::L2Flush(DeviceAllocator &allocator, int device)
    : buffer_(allocator, flush_bytes(device), MemoryTag::workspace) {}

void L2Flush::flush(cudaStream_t stream) {
  if (buffer_.empty()) return; // a device reporting no L2
  CUDA_CHECK(cudaMemsetAsync(buffer_.data(), 0, buffer_.bytes(), stream));
}

} // namespace kibench::gpu
