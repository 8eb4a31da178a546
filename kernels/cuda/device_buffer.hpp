// DeviceBuffer<T>: an owned, typed, counted device array. Its bytes come
// from a DeviceAllocator (which must outlive it) under one MemoryTag.
// Move-only; freed on destruction or reset().
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <cuda_bf16.h>

#include "kernels/cuda/device_allocator.hpp"
#include "lib/implementation/tensor_ref.hpp"

namespace kibench::gpu {

template <class T> struct element_type_of;
template <> struct element_type_of<__nv_bfloat16> { static constexpr ElementType value = ElementType::bf16; };
template <> struct element_type_of<float> { static constexpr ElementType value = ElementType::fp32; };
template <> struct element_type_of<double> { static constexpr ElementType value = ElementType::fp64; };

template <class T> class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceAllocator &allocator, std::size_t count, MemoryTag tag = MemoryTag::workspace)
      : allocator_(&allocator), count_(count), tag_(tag) {
    if (count_ != 0) data_ = static_cast<T *>(allocator.allocate(count_ * sizeof(T), tag_));
  }
  ~DeviceBuffer() { reset(); }

  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&other) noexcept
      : allocator_(other.allocator_), data_(std::exchange(other.data_, nullptr)),
        count_(std::exchange(other.count_, 0)), tag_(other.tag_) {}
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    if (this != &other) {
      reset();
      allocator_ = other.allocator_;
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
      tag_ = other.tag_;
    }
    return *this;
  }

  void reset() noexcept {
    if (data_ != nullptr) allocator_->deallocate(data_, count_ * sizeof(T), tag_);
    data_ = nullptr;
    count_ = 0;
  }

  [[nodiscard]] T *data() { return data_; }
  [[nodiscard]] const T *data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return count_; }
  [[nodiscard]] std::size_t bytes() const { return count_ * sizeof(T); }
  [[nodiscard]] bool empty() const { return count_ == 0; }
  [[nodiscard]] MemoryTag tag() const { return tag_; }

  // A read-only view for OutputView and the device comparison.
  [[nodiscard]] TensorRef view() const requires requires { element_type_of<T>::value; }
  { return TensorRef{data_, element_type_of<T>::value, static_cast<std::int64_t>(count_), true}; }

private:
  DeviceAllocator *allocator_ = nullptr;
  T *data_ = nullptr;
  std::size_t count_ = 0;
  MemoryTag tag_ = MemoryTag::workspace;
};

} // namespace kibench::gpu
