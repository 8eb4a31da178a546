#include "kernels/cuda/block_pool.hpp"

#include <algorithm>
#include <vector>

namespace kibench::gpu {

namespace {

std::size_t round_up(std::size_t bytes, std::size_t multiple) {
  return (bytes + multiple - 1) / multiple * multiple;
}

} // namespace

BlockPool::~BlockPool() {
  release_free_segments();
}

void *BlockPool::allocate(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (auto fit = free_.lower_bound({bytes, nullptr}); fit != free_.end())
    return take(blocks_.find(fit->second), bytes);

  const std::size_t segment_bytes = round_up(bytes, kSegmentRounding);
  void *segment = source_.allocate(segment_bytes);
  if (segment == nullptr) {
    ++counters_.out_of_memory_retries;
    if (release_for(segment_bytes) > 0) segment = source_.allocate(segment_bytes);
    if (segment == nullptr && release_free_segments() > 0) segment = source_.allocate(segment_bytes);
    if (segment == nullptr) return nullptr;
  }
  ++counters_.segments_allocated;
  char *base = static_cast<char *>(segment);
  segments_.emplace(base, segment_bytes);
  reserved_ += segment_bytes;
  auto block = blocks_.emplace(base, Block{segment_bytes, base, true}).first;
  free_.emplace(segment_bytes, base);
  return take(block, bytes);
}

// Hands out `block` (free, at least `bytes`), splitting off the rest when
// it is worth keeping.
void *BlockPool::take(Blocks::iterator block, std::size_t bytes) {
  Block &b = block->second;
  free_.erase({b.size, block->first});
  b.free = false;
  if (b.size - bytes >= kMinSplitRemainder) {
    char *rest = block->first + bytes;
    blocks_.emplace(rest, Block{b.size - bytes, b.segment, true});
    free_.emplace(b.size - bytes, rest);
    b.size = bytes;
  }
  allocated_ += b.size;
  return block->first;
}

void BlockPool::deallocate(void *pointer) noexcept {
  auto block = blocks_.find(static_cast<char *>(pointer));
  if (block == blocks_.end() || block->second.free) return;
  allocated_ -= block->second.size;
  block->second.free = true;
  // Merge with the next block, then the previous one, where free and of the
  // same segment.
  if (auto next = std::next(block);
      next != blocks_.end() && next->second.free && next->second.segment == block->second.segment) {
    free_.erase({next->second.size, next->first});
    block->second.size += next->second.size;
    blocks_.erase(next);
  }
  if (block != blocks_.begin()) {
    auto previous = std::prev(block);
    if (previous->second.free && previous->second.segment == block->second.segment) {
      free_.erase({previous->second.size, previous->first});
      previous->second.size += block->second.size;
      blocks_.erase(block);
      block = previous;
    }
  }
  free_.emplace(block->second.size, block->first);
}

bool BlockPool::wholly_free(const Blocks::const_iterator &block) const {
  const Block &b = block->second;
  return b.free && block->first == b.segment && segments_.at(b.segment) == b.size;
}

void BlockPool::release_segment(char *base) noexcept {
  const std::size_t bytes = segments_.at(base);
  free_.erase({bytes, base});
  blocks_.erase(base);
  segments_.erase(base);
  reserved_ -= bytes;
  source_.release(base);
  ++counters_.segments_released;
}

std::size_t BlockPool::release_for(std::size_t wanted) noexcept {
  std::vector<std::pair<std::size_t, char *>> candidates;
  for (auto it = blocks_.cbegin(); it != blocks_.cend(); ++it)
    if (wholly_free(it)) candidates.emplace_back(it->second.size, it->first);
  if (candidates.empty()) return 0;
  source_.synchronize();
  std::sort(candidates.begin(), candidates.end());
  // One segment large enough, the smallest such; else the largest first.
  if (auto one =
          std::lower_bound(candidates.begin(), candidates.end(), std::make_pair(wanted, (char *)nullptr));
      one != candidates.end()) {
    release_segment(one->second);
    return one->first;
  }
  std::size_t released = 0;
  for (auto it = candidates.rbegin(); it != candidates.rend() && released < wanted; ++it) {
    release_segment(it->second);
    released += it->first;
  }
  return released;
}

std::size_t BlockPool::release_free_segments() noexcept {
  std::vector<char *> bases;
  for (auto it = blocks_.cbegin(); it != blocks_.cend(); ++it)
    if (wholly_free(it)) bases.push_back(it->first);
  if (bases.empty()) return 0;
  source_.synchronize();
  std::size_t released = 0;
  for (char *base : bases) {
    released += segments_.at(base);
    release_segment(base);
  }
  return released;
}

} // namespace kibench::gpu
