#include "kernels/cuda/device_allocator.hpp"

#include <cstdio>
#include <stdexcept>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"
#include "lib/enum_names.hpp"
#include "lib/implementation/implementation_failure.hpp"

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
  static constexpr EnumName<MemoryTag> kNames[] = {
      {MemoryTag::input, "input"}, {MemoryTag::output, "output"}, {MemoryTag::workspace, "workspace"}};
  return name_in(kNames, tag, "unknown");
}

// cudaMalloc's segments for a caching allocator's pool.
class CudaSegments final : public SegmentSource {
public:
  explicit CudaSegments(const std::string &owner) : owner_(owner) {}
  void *allocate(std::size_t bytes) override {
    void *pointer = nullptr;
    const cudaError_t status = cudaMalloc(&pointer, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError(); // an out-of-memory error is not sticky; clear it
      return nullptr;
    }
    CUDA_CHECK(status);
    return pointer;
  }
  void release(void *segment) noexcept override { free_quietly(segment, owner_); }
  void synchronize() noexcept override {
    // The blocks may still be in use by queued work on their stream.
    const cudaError_t status = cudaDeviceSynchronize();
    if (status != cudaSuccess)
      std::fprintf(stderr, "kibench: cudaDeviceSynchronize before trimming '%s' failed: %s\n", owner_.c_str(),
                   cudaGetErrorString(status));
  }

private:
  const std::string &owner_;
};

DeviceAllocator::DeviceAllocator(std::string name, bool caching) : name_(std::move(name)) {
  if (caching) {
    own_source_ = std::make_unique<CudaSegments>(name_);
    pool_ = std::make_unique<BlockPool>(*own_source_);
  }
}

DeviceAllocator::DeviceAllocator(std::string name, SegmentSource &source)
    : name_(std::move(name)), pool_(std::make_unique<BlockPool>(source)) {}

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
  cudaError_t status = cudaSuccess;
  if (pool_ != nullptr) {
    std::lock_guard lock(mutex_);
    pointer = pool_->allocate(size);
    if (pointer == nullptr) status = cudaErrorMemoryAllocation;
  } else {
    status = cudaMalloc(&pointer, size);
    if (status == cudaErrorMemoryAllocation)
      (void)cudaGetLastError(); // not sticky; clear it
    else
      CUDA_CHECK(status);
  }
  if (pointer == nullptr) {
    std::size_t free_bytes = 0, total_bytes = 0;
    if (own_source_ != nullptr || pool_ == nullptr) CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // Out of device memory is the lane's resource_exceeded, with the numbers.
    throw ImplementationFailure(
        RunStatus::resource_exceeded,
        fmt::format("cudaMalloc of {} bytes ({} for '{}') failed: {}; device has {} of {} bytes free, "
                    "kibench holds {}",
                    size, to_string(tag), name_, cudaGetErrorString(status), free_bytes, total_bytes,
                    process().reserved_bytes()));
  }
  count_allocation(size, tag);
  if (pool_ != nullptr) {
    std::lock_guard lock(mutex_);
    sync_cached_locked();
  }
  return pointer;
}

void DeviceAllocator::deallocate(void *pointer, std::size_t bytes, MemoryTag tag) noexcept {
  if (pointer == nullptr) return;
  const std::size_t size = rounded(bytes == 0 ? 1 : bytes);
  count_free(size, tag);
  if (pool_ != nullptr) {
    std::lock_guard lock(mutex_);
    pool_->deallocate(pointer);
    sync_cached_locked();
    return;
  }
  free_quietly(pointer, name_);
}

void DeviceAllocator::trim() noexcept {
  if (pool_ == nullptr) return;
  std::lock_guard lock(mutex_);
  pool_->release_free_segments();
  sync_cached_locked();
}

void DeviceAllocator::sync_cached_locked() {
  const std::uint64_t live = live_[0] + live_[1] + live_[2];
  const std::uint64_t reserved = pool_->reserved_bytes();
  const std::uint64_t cached = reserved > live ? reserved - live : 0;
  const auto delta = static_cast<std::int64_t>(cached) - static_cast<std::int64_t>(cached_bytes_);
  cached_bytes_ = cached;
  if (delta != 0) process().adjust_cached(delta);
}

BlockPool::Counters DeviceAllocator::pool_counters() const {
  std::lock_guard lock(mutex_);
  return pool_ ? pool_->counters() : BlockPool::Counters{};
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
