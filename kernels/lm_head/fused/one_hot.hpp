// The one-hot term of the gradient, applied in fp32 instead of through
// the bf16 gradient rows.
//
// G'_i = w_h (sigma_i - onehot(y_i)) + w_s dJ_i carries nearly all of its
// norm in the single entry w_h (sigma_y - 1) ~ -w_h. Stored in bf16 with
// the rest of the row, that entry loses sigma_y (8 bits of mantissa): at
// V ~ 500, sigma_y ~ 2e-3 and the rounding alone costs up to 2e-3 relative
// in grad x_s and grad W_s. So the row kernel writes only the smooth part
// w_h sigma_i + w_s dJ_i (every entry small, each rounded relative to
// itself) and the one-hot term is added exactly here:
//   grad x_s,i   -= w_h W_s[y_i]                 (while converting a chunk)
//   grad W_s[k]  -= w_h sum_{i: y_i = k} x_s,i   (after the last chunk)
//   grad b_s[k]  -= w_h #{i: y_i = k}
// The sums over tokens sharing a target run in token order (a stable
// radix sort of the targets), so the result is deterministic.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "kernels/common/token_count.hpp"

namespace kibench::gpu::fused {

// Device buffers for the targets in sorted order, each [T] int32, and the
// sort's temporary storage.
struct TargetOrder {
  std::int32_t *keys = nullptr;   // y_i, or V for an ignored token
  std::int32_t *tokens = nullptr; // i
  std::int32_t *sorted_keys = nullptr;
  std::int32_t *sorted_tokens = nullptr; // token order within equal keys
  void *temp = nullptr;
  std::size_t temp_bytes = 0;
};

// Temporary storage the sort needs for T tokens (asks the GPU's library).
[[nodiscard]] std::size_t target_sort_temp_bytes(std::int64_t tokens, std::int64_t vocab);

void sort_targets(const std::int64_t *target, std::int64_t tokens, std::int64_t vocab,
                  std::int64_t ignore_index, const TargetOrder &order, cudaStream_t stream);

// The fp32 grad W accumulator [V, Hs] in two pieces (grad_weight_split.hpp):
// rows [0, split) at `low` (the bf16 output buffer, read as float), rows
// [split, V) at `high` (workspace). Either piece may be empty.
struct SplitAccumulator {
  float *low = nullptr;
  float *high = nullptr;
  std::int64_t split = 0;

  // Row k of [V, hidden].
  __host__ __device__ float *row(std::int64_t k, std::int64_t hidden) const {
    return k < split ? low + k * hidden : high + (k - split) * hidden;
  }
};

// grad_weight_sum row k -= w_h sum x_s,i and (if not null) grad_bias_sum[k]
// -= w_h count, over the valid tokens with target k, in token order.
void subtract_one_hot_weight(const TargetOrder &order, std::int64_t tokens, std::int64_t vocab,
                             const __nv_bfloat16 *student_input, std::int64_t student_hidden,
                             float weight_hard, const SplitAccumulator &grad_weight_sum, float *grad_bias_sum,
                             cudaStream_t stream);

// The same term for single-chunk plans, whose grad W left its GEMM already
// divided by N and rounded to bf16: row k becomes bf16(row k - w_h sum
// x_s,i / N). The second rounding matters only where row k's smooth part is
// not small against the term, i.e. where tokens are not few against V
// (the fused path uses it only for 8 T <= V). grad_bias_sum as above
// (still an fp32 sum, divided by N afterwards).
void add_one_hot_to_scaled_weight(const TargetOrder &order, std::int64_t tokens, std::int64_t vocab,
                                  const __nv_bfloat16 *student_input, std::int64_t student_hidden,
                                  float weight_hard, const TokenCount *n, __nv_bfloat16 *grad_weight,
                                  float *grad_bias_sum, cudaStream_t stream);

// out[i] = bf16((sum[i] - w_h W_s[y_i] [valid]) / N) for the chunk's rows:
// sum is the chunk's fp32 G'_smooth W_s [rows, Hs].
void finish_grad_input(const float *sum, const std::int64_t *target, std::int64_t rows, std::int64_t vocab,
                       std::int64_t ignore_index, const __nv_bfloat16 *student_weight,
                       std::int64_t student_hidden, float weight_hard, const TokenCount *n,
                       __nv_bfloat16 *out, cudaStream_t stream);

} // namespace kibench::gpu::fused
