// `fused-vp<n>-emulated`: the vocabulary-parallel fused loss (the LM heads
// sharded along V over n ranks, as tensor parallelism shards them) with
// every rank emulated on one GPU, one after another, and the collectives
// done by LocalDeviceCommunicator through the DeviceCommunicator interface
// a NCCL communicator would implement. Per chunk of R token rows, per
// shard r with vocabulary rows [b_r, e_r):
//   z_s,r = x_s W_s[b_r:e_r]ᵀ (+ b_s), z_t,r likewise   cuBLASLt, bf16 [R, ld_r]
//   row maxima                → all-reduce max
//   Σ exp, target logit       → all-reduce sum
//   KL partial sums           → all-reduce sum;  the row loss terms
//   G'_r over z_s,r (shard_row_loss.hpp; without the one-hot term), then
//   grad x partial_r = G'_r W_s[b_r:e_r]   fp32 [R, Hs], less w_h W_s[y_i]
//                                           where the shard holds y_i
//                                           → all-reduce sum
//   grad W_s,r += G'_rᵀ x_s                 fp32 [e_r − b_r, Hs], the shard's own
//   grad b_s,r += column sums of G'_r       fp32, the shard's own
// After the last chunk each shard subtracts the one-hot term of the
// targets it holds from its grad W and grad b rows (shard_one_hot.hpp),
// which go, divided by N and rounded once, into their rows of the outputs;
// grad x leaves each chunk's reduced sum the same way. Correctness, not speed, is the point:
// it tests on one GPU the data flow a multi-GPU run takes
// (docs/loss-math.md, "Vocabulary-parallel").
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "lib/implementation/implementation.hpp"

namespace kibench {

struct VocabParallelEmulationOptions {
  // Registry name: Implementation::name(), and "kibench-" + name in the revision.
  std::string name = "fused-vp2-emulated";
  int shards = 2; // n, at least 1 (std::invalid_argument otherwise); at most V to run
  // Token rows per chunk; 0: the most whose per-chunk buffers fit chunk_budget.
  std::int64_t chunk_rows = 0;
  // Bytes the per-chunk buffers of all shards may take; 0: 2 GiB.
  std::uint64_t chunk_budget = 0;
};

// The registry's name for n shards: "fused-vp<n>-emulated".
[[nodiscard]] std::string vocab_parallel_emulation_name(int shards);

std::unique_ptr<Implementation> make_vocab_parallel_emulated(VocabParallelEmulationOptions options = {});

} // namespace kibench
