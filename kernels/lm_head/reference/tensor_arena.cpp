#include "kernels/lm_head/reference/tensor_arena.hpp"

#include <algorithm>

namespace kibench::gpu {

void Tensor::reset() noexcept {
  if (arena_ != nullptr) arena_->release(data_, bytes_);
  arena_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

Tensor TensorArena::make(std::size_t bytes) {
  void *data = allocator_ == nullptr ? nullptr : allocator_->allocate(bytes, MemoryTag::workspace);
  live_ += DeviceAllocator::rounded(bytes);
  peak_ = std::max(peak_, live_);
  return Tensor(this, data, bytes);
}

void TensorArena::release(void *data, std::size_t bytes) noexcept {
  live_ -= DeviceAllocator::rounded(bytes);
  if (allocator_ != nullptr) allocator_->deallocate(data, bytes, MemoryTag::workspace);
}

} // namespace kibench::gpu
