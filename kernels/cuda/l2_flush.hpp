// Evicts the GPU's L2 before a cold sample by writing a buffer twice the
// L2's size (read from cudaDeviceProp), so no line of the previous sample's
// data survives. The buffer is counted as workspace of `allocator`.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

#include "kernels/cuda/device_buffer.hpp"

namespace kibench::gpu {

class L2Flush {
public:
  L2Flush(DeviceAllocator &allocator, int device);
  // Enqueues the flush on `stream`.
  void flush(cudaStream_t stream);
  [[nodiscard]] std::size_t bytes() const { return buffer_.bytes(); }

private:
  DeviceBuffer<std::byte> buffer_;
};

} // namespace kibench::gpu
