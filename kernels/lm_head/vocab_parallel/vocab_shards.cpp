#include "kernels/lm_head/vocab_parallel/vocab_shards.hpp"

#include <stdexcept>
#include <string>

namespace kibench::vocab_parallel {

std::vector<VocabShard> vocab_shards(std::int64_t vocab, int ranks) {
  if (ranks < 1 || vocab < ranks)
    throw std::invalid_argument("vocab_shards: " + std::to_string(ranks) + " ranks for a vocabulary of " +
                                std::to_string(vocab) + " (1 to V ranks)");
  std::vector<VocabShard> shards;
  const std::int64_t base = vocab / ranks, longer = vocab % ranks;
  std::int64_t begin = 0;
  for (int r = 0; r < ranks; ++r) {
    const std::int64_t size = base + (r < longer ? 1 : 0);
    shards.push_back({.rank = r, .begin = begin, .end = begin + size});
    begin += size;
  }
  return shards;
}

} // namespace kibench::vocab_parallel
