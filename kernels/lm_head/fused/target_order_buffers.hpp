// The device buffers a TargetOrder (one_hot.hpp) points into, owned: the
// four [T] int32 arrays of the targets' sort and its scratch. `fused`, the
// vocabulary-parallel emulation and each GPU of `fused-vocab-parallel`
// hold one, for the one-hot term of grad W in token order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/lm_head/fused/one_hot.hpp"

namespace kibench::gpu::fused {

class TargetOrderBuffers {
public:
  TargetOrderBuffers() = default;
  // For `tokens` targets, with `temp_bytes` of scratch (target_sort_temp_bytes),
  // from `allocator` on the current device. The scratch is never empty: a
  // null scratch pointer would make the sort a size query.
  TargetOrderBuffers(DeviceAllocator &allocator, std::int64_t tokens, std::size_t temp_bytes)
      : keys_(allocator, static_cast<std::size_t>(tokens)),
        tokens_(allocator, static_cast<std::size_t>(tokens)),
        sorted_keys_(allocator, static_cast<std::size_t>(tokens)),
        sorted_tokens_(allocator, static_cast<std::size_t>(tokens)),
        temp_(allocator, std::max<std::size_t>(temp_bytes, 1)), order_{keys_.data(),
                                                                       tokens_.data(),
                                                                       sorted_keys_.data(),
                                                                       sorted_tokens_.data(),
                                                                       temp_.data(),
                                                                       temp_.bytes()} {}

  // Moving keeps the device pointers, so order() stays valid.
  [[nodiscard]] const TargetOrder &order() const { return order_; }

private:
  DeviceBuffer<std::int32_t> keys_, tokens_, sorted_keys_, sorted_tokens_; // [T]
  DeviceBuffer<std::byte> temp_;
  TargetOrder order_;
};

} // namespace kibench::gpu::fused
