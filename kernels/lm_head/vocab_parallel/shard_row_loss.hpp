// The row kernels of the vocabulary-parallel emulation: the fused row
// kernel (kernels/lm_head/fused/row_loss.cu) split at the points where a sharded
// row needs numbers from the other shards. Each phase reads one shard's
// slice of a chunk's logits and writes per-row partial results; between
// phases the communicator makes them global (docs/loss-math.md,
// "Vocabulary-parallel"). For token row i of the chunk and the shard's
// columns k (vocabulary index v = b_r + k), with a = z_s/τ, b = z_t/τ:
//
//   1. maxima: max_k z_s, max_k a, max_k b           → all-reduce max
//   2. sums:   Σ_k exp(z_s − M_raw), Σ_k exp(a − M_a), Σ_k exp(b − M_b),
//              and z_s[y_i] (x_s,i · W_s[y_i] + b_s[y_i], fp32, exact as the
//              fused kernel takes it) where y_i lies in the shard, else 0
//                                                    → all-reduce sum
//      then every shard has lse_raw = M_raw + log S_raw, lse_q = M_a +
//      log S_a, lse_p = M_b + log S_b and the target logit;
//   3. KL partial sums over the slice, log q = a − lse_q, log p = b − lse_p,
//      m = (1 − β) q + β p:
//        0 < β < 1: kl[0] = Σ p (log p − log m), kl[1] = Σ q (log q − log m)
//        β = 0:     kl[0] = Σ p (log p − log q)
//        β = 1:     kl[0] = Σ q (log q − log p)     → all-reduce sum
//   4. the loss term of each row (from any shard's copy, shard 0's):
//        w_h (lse_raw − z_s[y]) + w_s J, J = β kl[0] + (1 − β) kl[1] for
//        the mixture, kl[0] otherwise; 0 for an ignored row;
//   5. G' over the slice, written over z_s,r in bf16: N times the gradient
//      of the loss with respect to z_s less its one-hot term −w_h [v = y],
//      which the shard holding y adds in fp32 (shard_one_hot.hpp):
//        G'_k = w_h softmax(z_s)_k + w_s dJ/dz_k
//        dJ/dz_k = (1 − β)/τ · q_k (log q_k − log m_k − KL(q‖m))   0 < β < 1
//                = (q_k − p_k)/τ                                 β = 0
//                = q_k (log q_k − log p_k − KL(q‖p))/τ            β = 1
//      and 0 for every column of an ignored row.
// A row is valid when y ≠ ignore_index and 0 ≤ y < V (as token_count.hpp
// counts N). All math in fp32; one CTA per row, the column loop strided
// over its threads and reduced in a fixed order (deterministic).
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace kibench::vocab_parallel {

struct ShardRowArgs {
  // z_s,r and z_t,r: [rows, ld] bf16, columns [0, columns) of each row the
  // shard's vocabulary rows [column_begin, column_begin + columns).
  // gradient() overwrites z_s,r's columns [0, columns) with G'.
  __nv_bfloat16 *student_logits = nullptr;
  const __nv_bfloat16 *teacher_logits = nullptr;
  std::int64_t rows = 0;
  std::int64_t columns = 0;
  std::int64_t ld = 0;
  std::int64_t column_begin = 0;
  std::int64_t vocab = 0;               // V, for the target's validity
  const std::int64_t *target = nullptr; // y [rows], the chunk's
  // For the exact target logit: x_s [rows, Hs] (the chunk's), the shard's
  // rows of W_s, [columns, Hs] from vocabulary row column_begin on (row
  // y − column_begin is read where the shard holds y), and its slice of
  // b_s, [columns] from column_begin on (or null).
  const __nv_bfloat16 *student_input = nullptr;
  const __nv_bfloat16 *student_weight = nullptr;
  const __nv_bfloat16 *student_bias = nullptr;
  std::int64_t student_hidden = 0;
  // This shard's statistics, [rows, 3], [rows, 4], [rows, 2] fp32.
  float *maxima = nullptr;
  float *sums = nullptr;
  float *kl = nullptr;
  double beta = 0.5;
  double temperature = 1.0;
  double weight_hard = 0.5;
  double weight_soft = 0.5;
  std::int64_t ignore_index = -100;
};

// Phases 1, 2, 3 and 5 above on one shard, enqueued on `stream`; each reads
// the statistics the earlier phases and their all-reduces left. Throw
// std::invalid_argument on bad arguments, and on a launch error.
void shard_row_maxima(const ShardRowArgs &args, cudaStream_t stream);
void shard_row_sums(const ShardRowArgs &args, cudaStream_t stream);
void shard_row_kl(const ShardRowArgs &args, cudaStream_t stream);
void shard_row_gradient(const ShardRowArgs &args, cudaStream_t stream);

// Phase 4 from `args`' (reduced) statistics: row_loss[i] for i < rows.
void shard_row_loss_terms(const ShardRowArgs &args, float *row_loss, cudaStream_t stream);

} // namespace kibench::vocab_parallel
