// N = max(1, #valid targets), counted on the device at the start of every
// run, before any chunk: the loss and every gradient are divided by it, and
// counting on the device keeps the run free of host synchronization.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace kibench::gpu {

// The count and its reciprocals, written by count_valid_tokens.
struct TokenCount {
  std::int64_t valid;  // N = max(1, #valid)
  double inverse;      // 1 / N, for the loss
  float inverse_float; // 1 / N, for the gradient conversions (and as a GEMM's device alpha)
  float zero;          // 0: the beta beside that alpha (cuBLASLt reads both from the device)
};

// A target is valid when it is not ignore_index and lies in [0, vocab).
void count_valid_tokens(const std::int64_t *target, std::int64_t tokens, std::int64_t vocab,
                        std::int64_t ignore_index, TokenCount *out, cudaStream_t stream);

} // namespace kibench::gpu
