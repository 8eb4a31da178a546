// A caching pool of device memory in the manner of PyTorch's CUDA caching
// allocator (c10/cuda/CUDACachingAllocator.cpp, its large-block pool),
// reduced to what kibench's single-stream users need:
//
//   - a request takes the best-fitting free block (the smallest at least as
//     large, then the lowest address), split when the rest is 1 MiB or more;
//   - a freed block merges with its free neighbours of the same segment;
//   - only when no free block fits is a new segment (the request rounded up
//     to 2 MiB) taken from the source;
//   - when the source is out of memory, wholly free segments go back to it
//     (one large enough if there is one, else the largest first until enough
//     is back), then every free segment, before the request fails.
//
// Splitting is what keeps a torch-like op chain from going back to the
// driver every pass: with blocks reused only at their exact size, the
// reference's seed pass needs its largest count of each tensor size at
// once, more than an 80 GB board holds, and every pass gave all its blocks
// back and took them again (docs/perf.md, "The reference on the H100").
//
// Host code only, no CUDA: the segments come from a SegmentSource
// (cudaMalloc in device_allocator.cpp, a counter of addresses in the
// tests). Not thread-safe: its owner locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

namespace kibench::gpu {

class SegmentSource {
public:
  virtual ~SegmentSource() = default;
  // A segment of `bytes`, or nullptr when the source is out of memory;
  // any other failure throws.
  virtual void *allocate(std::size_t bytes) = 0;
  virtual void release(void *segment) noexcept = 0;
  // Waits until no queued work can still use a free block: called once
  // before segments are given back.
  virtual void synchronize() noexcept {}
};

class BlockPool {
public:
  static constexpr std::size_t kSegmentRounding = std::size_t{2} << 20; // as PyTorch rounds large segments
  static constexpr std::size_t kMinSplitRemainder = std::size_t{1} << 20;

  explicit BlockPool(SegmentSource &source) : source_(source) {}
  // Gives every free segment back; a block still in use is its owner's leak.
  ~BlockPool();
  BlockPool(const BlockPool &) = delete;
  BlockPool &operator=(const BlockPool &) = delete;

  // A block of at least `bytes`, or nullptr when the source cannot supply
  // one even after every free segment went back to it.
  [[nodiscard]] void *allocate(std::size_t bytes);
  // `block` must come from allocate() and not be freed yet.
  void deallocate(void *block) noexcept;
  // Gives every wholly free segment back to the source; returns the bytes.
  std::size_t release_free_segments() noexcept;

  // Bytes taken from the source and not given back.
  [[nodiscard]] std::size_t reserved_bytes() const { return reserved_; }
  // Bytes of the blocks handed out (a block may be up to 1 MiB larger than
  // its request: a smaller remainder is not split off).
  [[nodiscard]] std::size_t allocated_bytes() const { return allocated_; }

  struct Counters {
    std::uint64_t segments_allocated = 0; // source allocations that succeeded
    std::uint64_t segments_released = 0;
    std::uint64_t out_of_memory_retries = 0; // times the source said no and segments went back
  };
  [[nodiscard]] const Counters &counters() const { return counters_; }

private:
  struct Block {
    std::size_t size = 0;
    char *segment = nullptr;
    bool free = false;
  };
  using Blocks = std::map<char *, Block>;

  void *take(Blocks::iterator block, std::size_t bytes);
  // Gives back wholly free segments until `wanted` bytes are back, as
  // PyTorch's release_available_cached_blocks does; returns the bytes.
  std::size_t release_for(std::size_t wanted) noexcept;
  void release_segment(char *base) noexcept;
  [[nodiscard]] bool wholly_free(const Blocks::const_iterator &block) const;

  SegmentSource &source_;
  Blocks blocks_;                                 // every block, by address
  std::set<std::pair<std::size_t, char *>> free_; // free blocks, by size then address
  std::map<char *, std::size_t> segments_;        // segment base -> size
  std::size_t reserved_ = 0;
  std::size_t allocated_ = 0;
  Counters counters_;
};

} // namespace kibench::gpu
