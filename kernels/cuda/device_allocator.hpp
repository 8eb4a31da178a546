// Device memory with accounting. Every byte kibench holds on the GPU comes
// from a DeviceAllocator, tagged as input, output or workspace, so an
// implementation can report its own live and peak bytes (MemoryUse) even
// when several implementations and the shared inputs coexist in one run.
// Each allocator counts its own bytes; all of them also count into
// DeviceAllocator::process(), the whole program's total.
//
// A caching allocator keeps freed blocks for reuse through a BlockPool
// (block_pool.hpp: best fit, split and merged, as PyTorch's caching
// allocator does): per-run tensors then cost no cudaMalloc/cudaFree
// (cudaFree synchronizes the device), and the counted "live" bytes are
// those handed out, which is what torch.cuda.max_memory_allocated reports.
// All users of one caching allocator must work on one stream: a freed block
// is reused in stream order, without an event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "kernels/cuda/block_pool.hpp"

namespace kibench::gpu {

enum class MemoryTag { input, output, workspace };
std::string_view to_string(MemoryTag tag);

class DeviceAllocator {
public:
  explicit DeviceAllocator(std::string name, bool caching = false);
  // A caching allocator whose segments come from `source` instead of
  // cudaMalloc (a simulated device, for tests of a chain's memory pattern).
  DeviceAllocator(std::string name, SegmentSource &source);
  // Returns cached blocks to the driver. Buffers still live leak (and are
  // reported on stderr): their owners must be destroyed first.
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator &) = delete;
  DeviceAllocator &operator=(const DeviceAllocator &) = delete;

  // Throws std::runtime_error (with the sizes) when the device is out of memory.
  [[nodiscard]] void *allocate(std::size_t bytes, MemoryTag tag);
  void deallocate(void *pointer, std::size_t bytes, MemoryTag tag) noexcept;
  // Returns every cached block to the driver (caching allocators only).
  void trim() noexcept;

  [[nodiscard]] const std::string &name() const { return name_; }
  [[nodiscard]] std::uint64_t live_bytes() const;
  [[nodiscard]] std::uint64_t live_bytes(MemoryTag tag) const;
  // High-water mark of live_bytes() since construction or reset_peak().
  [[nodiscard]] std::uint64_t peak_bytes() const;
  // Live plus cached: what this allocator holds from the driver.
  [[nodiscard]] std::uint64_t reserved_bytes() const;
  // Starts a new high-water mark at the current live bytes.
  void reset_peak();
  // A caching allocator's segment traffic since construction (all zero for
  // one that does not cache).
  [[nodiscard]] BlockPool::Counters pool_counters() const;

  // The size an allocation of `bytes` really takes (rounded up to 512).
  [[nodiscard]] static std::size_t rounded(std::size_t bytes);
  // The whole program's device bytes, over every allocator.
  static DeviceAllocator &process();

private:
  struct ProcessTag {};
  DeviceAllocator(std::string name, ProcessTag);
  void count_allocation(std::size_t bytes, MemoryTag tag);
  void count_free(std::size_t bytes, MemoryTag tag);
  // The process allocator's count of blocks other allocators keep cached.
  void adjust_cached(std::int64_t delta);
  // Sets cached_bytes_ to what the pool holds beyond the live bytes and
  // passes the change on to the process count (mutex_ held).
  void sync_cached_locked();

  std::string name_;
  bool is_process_ = false;
  mutable std::mutex mutex_;
  std::uint64_t live_[3] = {0, 0, 0};
  std::uint64_t peak_ = 0;
  std::uint64_t cached_bytes_ = 0;
  std::unique_ptr<SegmentSource> own_source_; // cudaMalloc, for a caching allocator
  std::unique_ptr<BlockPool> pool_;           // caching allocators only (null: cudaMalloc each)
};

} // namespace kibench::gpu
