// `fused-vocab-parallel`: the vocabulary-parallel fused loss on n GPUs, the
// LM heads sharded along V as tensor parallelism shards them. Rank r, on
// CUDA device r, holds rows [b_r, e_r) of W_s and W_t (and of b_s, b_t),
// copied there in prepare() (the state a sharded model starts a step in),
// and replicas of x_s, x_t and the targets; per chunk of R token rows it
// runs the data flow of emulated_implementation.hpp on its own stream:
//   its logit slices (cuBLASLt, bf16) and row maxima   → all-reduce max
//   Σ exp and the target logit                          → all-reduce sum
//   KL partial sums                                     → all-reduce sum
//   G'_r and its grad x partial                         → all-reduce sum, on a second
//                                                         stream, beside
//   grad W_s,r and grad b_s,r (the rank's own GEMMs)
// the collectives over NCCL (nccl_communicator.hpp: one process, every
// rank's call in one group). The loss and grad x leave rank 0 (device 0);
// grad W_s and grad b_s stay sharded, each rank's rows on its device.
// For the oracle check, outputs() gathers them to device 0 (untimed).
//
// Timing (multi_device_timer.hpp): a barrier over every device before each
// sample, events on every rank, the slowest rank's time. Cache flushes and
// power-state loads run on every device.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "lib/implementation/implementation.hpp"

namespace kibench {

struct VocabParallelOptions {
  std::string name = "fused-vocab-parallel";
  // Ranks: CUDA devices 0 .. gpus − 1 (kibench run --gpus); at least 1.
  int gpus = 1;
  // Token rows per chunk; 0: the most whose per-chunk buffers fit chunk_budget.
  std::int64_t chunk_rows = 0;
  // Bytes one rank's per-chunk buffers may take; 0: 2 GiB.
  std::uint64_t chunk_budget = 0;
  // false: every rank's work without the all-reduces (each rank then
  // works on its own partial statistics): not the loss, so never checked
  // (computes_loss() is false), but timed beside the real pass it gives
  // the collectives' share of it.
  bool collectives = true;
};

inline constexpr const char *kVocabParallelName = "fused-vocab-parallel";
inline constexpr const char *kVocabParallelComputeOnlyName = "fused-vocab-parallel-compute-only";

std::unique_ptr<Implementation> make_vocab_parallel(VocabParallelOptions options = {});

} // namespace kibench
