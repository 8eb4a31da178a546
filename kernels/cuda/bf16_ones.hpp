// A device vector of bf16 ones: the left operand that turns a column sum
// into a GEMM (grad b = 1ᵀ G', the bias gradient every fused design takes
// from cuBLASLt rather than from a reduction kernel of its own).
#pragma once

#include <cstddef>

#include <cuda_bf16.h>

#include "kernels/cuda/device_buffer.hpp"

namespace kibench::gpu {

// `count` ones from `allocator` (workspace), on the current device; the
// copy completes before it returns.
[[nodiscard]] DeviceBuffer<__nv_bfloat16> bf16_ones(DeviceAllocator &allocator, std::size_t count);

} // namespace kibench::gpu
