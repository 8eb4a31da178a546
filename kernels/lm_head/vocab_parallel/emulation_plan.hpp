// What each shard of the single-GPU vocabulary-parallel emulation holds,
// and how many token rows run per chunk: host arithmetic only, so it is
// tested without a device.
//
// Shard r owns vocabulary rows [b_r, e_r) of W_s, W_t (and b_s, b_t)
// (vocab_shards.hpp), and per chunk of R token rows its own
//   z_s,r and z_t,r  [R, ld_r] bf16, ld_r = e_r − b_r rounded up to 8
//                    (16-byte rows); z_s,r becomes G'_r
//   statistics       [R, 3] maxima, [R, 4] sums, [R, 2] KL partial sums (fp32)
//   grad x partial   [R, Hs] fp32, summed over the shards
// and for the whole pass its grad W rows [e_r − b_r, Hs] and grad b rows
// [e_r − b_r] in fp32.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/lm_head/vocab_parallel/vocab_shards.hpp"

namespace kibench::vocab_parallel {

// Statistic slots per token row, as sharded_loss.cpp numbers them.
inline constexpr std::int64_t kMaximumSlots = 3; // max z_s, max z_s/τ, max z_t/τ
inline constexpr std::int64_t kSumSlots = 4;     // Σ exp of each under its max, target logit
inline constexpr std::int64_t kKlSlots = 2;      // the divergence's KL partial sums

// What one GPU's per-chunk buffers (or, emulated, all shards' together)
// may take when the caller names no budget.
inline constexpr std::uint64_t kDefaultChunkBudget = std::uint64_t{2} << 30;

struct ShardLayout {
  VocabShard shard;
  std::int64_t ld = 0; // row stride of z_s,r and z_t,r: size rounded up to 8
};

struct EmulationPlan {
  std::vector<ShardLayout> shards;
  std::int64_t rows = 0;   // R, token rows per chunk
  std::int64_t chunks = 0; // ceil(T / R)
};

// Per-chunk bytes one token row costs over all shards: both logit rows
// (2 · 2 · ld_r bytes each), the statistics (4 · 9) and the grad x partial
// (4 · Hs), for every shard.
[[nodiscard]] std::uint64_t bytes_per_chunk_row(const std::vector<ShardLayout> &shards,
                                                std::int64_t student_hidden);

// The fp32 grad W and grad b accumulators over all shards: 4 · V · Hs
// (+ 4 · V with a bias).
[[nodiscard]] std::uint64_t accumulator_bytes(std::int64_t vocab, std::int64_t student_hidden, bool bias);

// `ranks` shards of the vocabulary and R: `chunk_rows` when nonzero (at
// most T), else the fewest chunks whose per-chunk buffers fit
// `chunk_budget` bytes, with their rows evened out: ceil(T / chunks)
// (at least 1, at most T). Throws std::invalid_argument for a shape
// vocab_shards rejects, T < 1 or a negative chunk_rows.
[[nodiscard]] EmulationPlan plan_emulation(std::int64_t tokens, std::int64_t vocab,
                                           std::int64_t student_hidden, int ranks, std::int64_t chunk_rows,
                                           std::uint64_t chunk_budget);

} // namespace kibench::vocab_parallel
