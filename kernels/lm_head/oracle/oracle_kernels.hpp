// The fp64 oracle's device kernels (plain types: host C++ and nvcc).
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace kibench::gpu::oracle {

// out[i] = (double) in[i]: exact, every bf16 is a double.
void widen(const __nv_bfloat16 *in, double *out, std::int64_t n, cudaStream_t s);

// z[i, k] += bias[k] over `rows` rows of `cols`.
void add_row_bias(double *z, const double *bias, std::int64_t rows, std::int64_t cols, cudaStream_t s);

// valid[0] = #(target ≠ ignore_index) over `rows` tokens.
void count_valid(const std::int64_t *target, std::int64_t rows, std::int64_t ignore_index, long long *valid,
                 cudaStream_t s);

struct RowLossParams {
  std::int64_t rows = 0, vocab = 0;
  double beta = 0.5, temperature = 1.0, weight_hard = 0.5, weight_soft = 0.5;
  std::int64_t ignore_index = -100;
  double inv_valid = 1.0; // 1 / max(1, N)
  bool write_grad = false;
};

// One block per token row i of z_s, z_t [rows, vocab]: ce[i] = CE_i and
// soft[i] = J_i (0 for ignored rows); with write_grad, z_s row i is
// overwritten by g_i (docs/loss-math.md). All in fp64.
void row_loss(double *student_logits, const double *teacher_logits, const std::int64_t *target,
              const RowLossParams &params, double *ce, double *soft, cudaStream_t s);

// out[k] (+)= Σ_i g[i, k], in row order (deterministic); accumulate = false
// overwrites.
void column_sum(const double *g, double *out, std::int64_t rows, std::int64_t cols, bool accumulate,
                cudaStream_t s);

} // namespace kibench::gpu::oracle
