// Tensors with PyTorch's lifetimes. The reference allocates each
// intermediate when the eager op would and frees it when Python would drop
// it (end of an expression, of a function, or when autograd releases a
// saved tensor), from a caching DeviceAllocator, as PyTorch's caching
// allocator serves it. In counting mode nothing is allocated: the arena
// only adds up the same sizes, so the chain can be "run" on the host to
// predict its peak before any memory is taken.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <cuda_bf16.h>

#include "kernels/cuda/device_allocator.hpp"

namespace kibench::gpu {

class TensorArena;

// A move-only owned block of device memory (untyped, as a torch storage).
class Tensor {
public:
  Tensor() = default;
  ~Tensor() { reset(); }
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  Tensor(Tensor &&other) noexcept
      : arena_(std::exchange(other.arena_, nullptr)), data_(std::exchange(other.data_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  Tensor &operator=(Tensor &&other) noexcept {
    if (this != &other) {
      reset();
      arena_ = std::exchange(other.arena_, nullptr);
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  void reset() noexcept;

  [[nodiscard]] float *f32() const { return static_cast<float *>(data_); }
  [[nodiscard]] __nv_bfloat16 *bf16() const { return static_cast<__nv_bfloat16 *>(data_); }
  [[nodiscard]] bool *boolean() const { return static_cast<bool *>(data_); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

private:
  friend class TensorArena;
  Tensor(TensorArena *arena, void *data, std::size_t bytes) : arena_(arena), data_(data), bytes_(bytes) {}
  TensorArena *arena_ = nullptr;
  void *data_ = nullptr;
  std::size_t bytes_ = 0;
};

class TensorArena {
public:
  // Allocates from `allocator` (workspace bytes); nullptr: counting mode.
  explicit TensorArena(DeviceAllocator *allocator) : allocator_(allocator), launches_(allocator != nullptr) {}
  // Allocates from `allocator` but the chain launches nothing: the memory
  // pattern of a pass on a simulated device (a DeviceAllocator over a
  // SegmentSource that hands out addresses only).
  static TensorArena without_launches(DeviceAllocator &allocator) {
    TensorArena arena(&allocator);
    arena.launches_ = false;
    return arena;
  }

  [[nodiscard]] Tensor make(std::size_t bytes);
  [[nodiscard]] Tensor f32(std::int64_t n) { return make(static_cast<std::size_t>(n) * 4); }
  [[nodiscard]] Tensor bf16(std::int64_t n) { return make(static_cast<std::size_t>(n) * 2); }
  [[nodiscard]] Tensor boolean(std::int64_t n) { return make(static_cast<std::size_t>(n)); }

  // No kernel is launched (the counting and simulated modes).
  [[nodiscard]] bool counting() const { return !launches_; }
  // Live and peak bytes held through this arena (rounded as allocated).
  [[nodiscard]] std::uint64_t live_bytes() const { return live_; }
  [[nodiscard]] std::uint64_t peak_bytes() const { return peak_; }

private:
  friend class Tensor;
  void release(void *data, std::size_t bytes) noexcept;

  DeviceAllocator *allocator_;
  bool launches_ = false;
  std::uint64_t live_ = 0;
  std::uint64_t peak_ = 0;
};

} // namespace kibench::gpu
