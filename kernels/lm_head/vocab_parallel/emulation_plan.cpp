#include "kernels/lm_head/vocab_parallel/emulation_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kibench::vocab_parallel {

std::uint64_t bytes_per_chunk_row(const std::vector<ShardLayout> &shards, std::int64_t student_hidden) {
  std::uint64_t bytes = 0;
  for (const ShardLayout &s : shards)
    bytes += 2 * 2 * static_cast<std::uint64_t>(s.ld) +
             4 * static_cast<std::uint64_t>(kMaximumSlots + kSumSlots + kKlSlots + student_hidden);
  return bytes;
}

std::uint64_t accumulator_bytes(std::int64_t vocab, std::int64_t student_hidden, bool bias) {
  const auto V = static_cast<std::uint64_t>(vocab);
  return 4 * V * static_cast<std::uint64_t>(student_hidden) + (bias ? 4 * V : 0);
}

EmulationPlan plan_emulation(std::int64_t tokens, std::int64_t vocab, std::int64_t student_hidden, int ranks,
                             std::int64_t chunk_rows, std::uint64_t chunk_budget) {
  if (tokens < 1) throw std::invalid_argument("plan_emulation: " + std::to_string(tokens) + " tokens");
  if (chunk_rows < 0)
    throw std::invalid_argument("plan_emulation: chunk_rows " + std::to_string(chunk_rows) + " (0 or more)");
  EmulationPlan plan;
  for (const VocabShard &shard : vocab_shards(vocab, ranks))
    plan.shards.push_back({.shard = shard, .ld = (shard.size() + 7) / 8 * 8});
  if (chunk_rows > 0) {
    plan.rows = std::min(chunk_rows, tokens);
  } else {
    const std::uint64_t per_row = bytes_per_chunk_row(plan.shards, student_hidden);
    const auto fitting = std::max<std::int64_t>(
        static_cast<std::int64_t>(std::min<std::uint64_t>(chunk_budget / per_row, static_cast<std::uint64_t>(tokens))),
        1);
    // The fewest chunks that fit, evened out: at T = 8192 on two GPUs,
    // 4096 + 4096 rows rather than 8113 + 79 (a 79-row chunk runs its
    // GEMMs at a fraction of their rate).
    const std::int64_t chunks = (tokens + fitting - 1) / fitting;
    plan.rows = (tokens + chunks - 1) / chunks;
  }
  plan.chunks = (tokens + plan.rows - 1) / plan.rows;
  return plan;
}

} // namespace kibench::vocab_parallel
