#include "kernels/cuda/device_allocator.hpp"

#include <cstdio>
#include <stdexcept>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu {

namespace {

constexpr std::size_t kRounding = 512;

std::size_t index_of(MemoryTag tag) {
  return static_cast<std::size_t>(tag);
}

// Destructors and deallocate() cannot throw: a failing cudaFree is reported.
void free_quietly(void *pointer, const std::string &owner) noexcept {
  const cudaError_t status = cudaFree(pointer);
  if (status != cudaSuccess)
    std::fprintf(stderr, "kibench: cudaFree in allocator '%s' failed: %s\n", owner.c_str(),
                 cudaGetErrorString(status));
}

} // namespace

std::string_view to_string(MemoryTag tag) {
  switch (tag) {
  case MemoryTag::input:
    return "input";
  case MemoryTag::output:
    return "output";
  case MemoryTag::workspace:
    return "workspace";
  }
  return "unknown";
}

DeviceAllocator::DeviceAllocator(std::string name, bool caching)
    : name_(std::move(name)), caching_(caching) {}

DeviceAllocator::DeviceAllocator(std::string name, ProcessTag) : name_(std::move(name)), is_process_(true) {}

DeviceAllocator::~DeviceAllocator() {
  trim();
  const std::uint64_t live = live_bytes();
  if (live != 0 && !is_process_)
    std::fprintf(stderr, "kibench: allocator '%s' destroyed with %llu bytes still allocated\n", name_.c_str(),
                 static_cast<unsigned long long>(live));
}

DeviceAllocator &DeviceAllocator::process() {
  static DeviceAllocator instance("process", ProcessTag{});
  return instance;
}

std::size_t DeviceAllocator::rounded(std::size_t bytes) {
  return (bytes + kRounding - 1) / kRounding * kRounding;
}

void *DeviceAllocator::allocate(std::size_t bytes, MemoryTag tag) {
  const std::size_t size = rounded(bytes == 0 ? 1 : bytes);
  void *pointer = nullptr;
  if (caching_) {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(size); it != cache_.end()) {
      pointer = it->second;
      cache_.erase(it);
      cached_bytes_ -= size;
    }
  }
  if (pointer != nullptr) process().adjust_cached(-static_cast<std::int64_t>(size));
  if (pointer == nullptr) {
    cudaError_t status = cudaMalloc(&pointer, size);
    if (status == cudaErrorMemoryAllocation && caching_) {
      // As PyTorch does: give the cached blocks back and try once more.
      (void)cudaGetLastError();
      trim();
      status = cudaMalloc(&pointer, size);
    }
    if (status != cudaSuccess) {
      (void)cudaGetLastError(); // an out-of-memory error is not sticky; clear it
      std::size_t free_bytes = 0, total_bytes = 0;
      CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      throw std::runtime_error(
          fmt::format("cudaMalloc of {} bytes ({} for '{}') failed: {}; device has {} of {} bytes free, "
                      "kibench holds {}",
                      size, to_string(tag), name_, cudaGetErrorString(status), free_bytes, total_bytes,
                      process().reserved_bytes()));
    }
  }
  count_allocation(size, tag);
  return pointer;
}

void DeviceAllocator::deallocate(void *pointer, std::size_t bytes, MemoryTag tag) noexcept {
  if (pointer == nullptr) return;
  const std::size_t size = rounded(bytes == 0 ? 1 : bytes);
  count_free(size, tag);
  if (caching_) {
    std::lock_guard lock(mutex_);
    cache_.emplace(size, pointer);
    cached_bytes_ += size;
  }
  if (caching_) {
    process().adjust_cached(static_cast<std::int64_t>(size));
    return;
  }
  free_quietly(pointer, name_);
}

void DeviceAllocator::trim() noexcept {
  std::multimap<std::size_t, void *> blocks;
  {
    std::lock_guard lock(mutex_);
    blocks.swap(cache_);
    cached_bytes_ = 0;
  }
  if (!blocks.empty()) {
    // The blocks may still be in use by queued work on their stream.
    const cudaError_t status = cudaDeviceSynchronize();
    if (status != cudaSuccess)
      std::fprintf(stderr, "kibench: cudaDeviceSynchronize before trimming '%s' failed: %s\n", name_.c_str(),
                   cudaGetErrorString(status));
  }
  for (const auto &[size, pointer] : blocks) {
    free_quietly(pointer, name_);
    process().adjust_cached(-static_cast<std::int64_t>(size));
  }
}

void DeviceAllocator::count_allocation(std::size_t bytes, MemoryTag tag) {
  {
    std::lock_guard lock(mutex_);
    live_[index_of(tag)] += bytes;
    const std::uint64_t live = live_[0] + live_[1] + live_[2];
    if (live > peak_) peak_ = live;
  }
  if (!is_process_) process().count_allocation(bytes, tag);
}

void DeviceAllocator::count_free(std::size_t bytes, MemoryTag tag) {
  {
    std::lock_guard lock(mutex_);
    live_[index_of(tag)] -= bytes;
  }
  if (!is_process_) process().count_free(bytes, tag);
}

void DeviceAllocator::adjust_cached(std::int64_t delta) {
  std::lock_guard lock(mutex_);
  cached_bytes_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(cached_bytes_) + delta);
}

std::uint64_t DeviceAllocator::live_bytes() const {
  std::lock_guard lock(mutex_);
  return live_[0] + live_[1] + live_[2];
}

std::uint64_t DeviceAllocator::live_bytes(MemoryTag tag) const {
  std::lock_guard lock(mutex_);
  return live_[index_of(tag)];
}

std::uint64_t DeviceAllocator::peak_bytes() const {
  std::lock_guard lock(mutex_);
  return peak_;
}

std::uint64_t DeviceAllocator::reserved_bytes() const {
  std::lock_guard lock(mutex_);
  return live_[0] + live_[1] + live_[2] + cached_bytes_;
}

void DeviceAllocator::reset_peak() {
  std::lock_guard lock(mutex_);
  peak_ = live_[0] + live_[1] + live_[2];
}

} // namespace kibench::gpu
