// The one-hot term of the gradient for one vocabulary shard, in fp32, as
// kernels/lm_head/fused/one_hot.hpp applies it for the whole vocabulary (it says
// why: stored in the bf16 G' row, the entry w_h (σ_y − 1) would lose σ_y).
// The shard's G' holds only the smooth part w_h σ + w_s dJ/dz; the shard
// that owns y_i, rows [begin, end) of the vocabulary, adds the rest:
//   grad x partial_i  −= w_h W_s[y_i]                   (per chunk, before
//                                                       the all-reduce)
//   grad W_s[k]       −= w_h Σ_{i: y_i = k} x_s,i       (after the last chunk)
//   grad b_s[k]       −= w_h #{i: y_i = k}
// for begin ≤ k < end, over valid tokens, the sums in token order (the
// stable sort of fused::sort_targets), so the result is deterministic.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "kernels/lm_head/fused/one_hot.hpp"

namespace kibench::vocab_parallel {

// partial [rows, Hs] fp32: row i −= w_h W_s[y_i] where y_i is valid (not
// ignore_index, in [0, vocab)) and in [begin, end). `target` is the chunk's
// [rows]; `student_weight` the shard's rows of W_s, [end − begin, Hs] from
// vocabulary row `begin` on.
void subtract_shard_one_hot_input(float *partial, const std::int64_t *target, std::int64_t rows,
                                  std::int64_t vocab, std::int64_t ignore_index, std::int64_t begin,
                                  std::int64_t end, const __nv_bfloat16 *student_weight,
                                  std::int64_t student_hidden, float weight_hard, cudaStream_t stream);

// grad_weight_rows [end − begin, Hs] and grad_bias_rows [end − begin] (or
// null): the shard's fp32 sums, row k − begin for vocabulary row k. `order`
// holds all T tokens sorted by fused::sort_targets (invalid ones keyed V).
void subtract_shard_one_hot_weight(const gpu::fused::TargetOrder &order, std::int64_t tokens,
                                   std::int64_t begin, std::int64_t end, const __nv_bfloat16 *student_input,
                                   std::int64_t student_hidden, float weight_hard, float *grad_weight_rows,
                                   float *grad_bias_rows, cudaStream_t stream);

} // namespace kibench::vocab_parallel
