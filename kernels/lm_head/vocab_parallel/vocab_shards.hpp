// How a vocabulary-parallel loss splits the LM heads over ranks: rank r
// holds rows [begin, end) of W_s and W_t (tensor parallelism along V, as
// Megatron shards an output embedding), contiguous, in rank order, their
// sizes differing by at most one, so any V and any rank count up to V
// work (V need not be divisible by n).
#pragma once

#include <cstdint>
#include <vector>

namespace kibench::vocab_parallel {

struct VocabShard {
  int rank = 0;
  std::int64_t begin = 0; // first vocabulary row of this rank
  std::int64_t end = 0;   // one past its last
  [[nodiscard]] std::int64_t size() const { return end - begin; }
  [[nodiscard]] bool holds(std::int64_t row) const { return row >= begin && row < end; }
};

// n shards of [0, vocab): the first vocab % n one row longer. Throws
// std::invalid_argument unless 1 <= ranks <= vocab.
[[nodiscard]] std::vector<VocabShard> vocab_shards(std::int64_t vocab, int ranks);

} // namespace kibench::vocab_parallel
