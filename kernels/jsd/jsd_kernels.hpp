// The device code of jsd (docs/loss-math.md, "jsd"): Liger's generalized
// JSD between student and teacher log-probabilities, X = log q and
// Y = log p, both fp32 [T, V] row-major.
//   fused_rows   the fused kernel: one read of X and Y, the row's loss and
//                (full pass) one write of dloss/dX; bandwidth-bound
//   oracle_rows  the same math in fp64, for the GPU oracle
//   copy_floor   the bytes the fused kernel must move, moved by a
//                vectorized copy (read X and Y, write one [T, V] tensor)
//   read_floor   the forward's bytes: read X and Y, write a few partial sums
// Every count of valid rows is TokenCount (kernels/common/token_count.hpp),
// computed on the device before the rows: N = max(1, #valid).
// (No JSON headers: this is included from CUDA sources.)
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/common/token_count.hpp"

namespace kibench::gpu::jsd {

// Liger's three forms: beta = 0 forward KL(p || q), beta = 1 reverse
// KL(q || p), else the beta-mixture.
enum class Divergence { forward_kl, reverse_kl, mixture };
Divergence divergence_of(double beta);

struct RowArgs {
  const float *student = nullptr;       // X [T, V]
  const float *teacher = nullptr;       // Y [T, V]
  const std::int64_t *target = nullptr; // [T]: a row whose label is ignore_index (or outside [0, V)) is left out
  const TokenCount *count = nullptr; // N and 1/N on the device
  std::int64_t tokens = 0;
  std::int64_t vocab = 0;
  std::int64_t ignore_index = -100;
  double beta = 0.5;
};

// row_loss[i] = J_i / N (fp32; 0 for a left-out row); grad (when not null)
// = dJ_i/dX / N, 0 on left-out rows.
void fused_rows(const RowArgs &args, float *grad, float *row_loss, cudaStream_t stream);

// The same in fp64 from the fp32 inputs widened exactly: row_loss [T] and
// grad [T, V] (when not null) in double.
void oracle_rows(const RowArgs &args, double *grad, double *row_loss, cudaStream_t stream);

// *loss = sum of rows[0..T) in index order, in double (deterministic; one block).
void sum_rows(const float *rows, std::int64_t tokens, double *loss, cudaStream_t stream);
void sum_rows(const double *rows, std::int64_t tokens, double *loss, cudaStream_t stream);

// out[k] = a[k] + b[k] for k < count: two reads and one write per element.
void copy_floor(const float *a, const float *b, std::size_t count, float *out, cudaStream_t stream);
// partial[block] = a sum over the block's share of a[k] + b[k]; `partial`
// holds read_floor_blocks() floats.
void read_floor(const float *a, const float *b, std::size_t count, float *partial, cudaStream_t stream);
int read_floor_blocks();

} // namespace kibench::gpu::jsd
