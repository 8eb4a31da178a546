// The fp64 oracle's row math: loss-math.md's formulas evaluated in double
// for one token row per block, the only fusion being that a row's logits
// are read in four passes by one block (max/min; the three exponential
// sums; the KL sums; the gradient) instead of materializing q, p and m.
// Nothing here is tuned: it is the definition, run on the GPU because the
// CPU cannot hold [T, V] for the big cases. Reductions are block trees in
// a fixed order, so the oracle is deterministic run to run.
#include "kernels/lm_head/oracle/oracle_kernels.hpp"

#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu::oracle {

namespace {

constexpr int kThreads = 256;
constexpr int kRowThreads = 256;

unsigned grid_for(std::int64_t items) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((items + kThreads - 1) / kThreads, 1, 65536));
}

__device__ __forceinline__ std::int64_t thread_index() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ std::int64_t thread_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

__global__ void widen_kernel(const __nv_bfloat16 *in, double *out, std::int64_t n) {
  for (std::int64_t i = thread_index(); i < n; i += thread_stride())
    out[i] = static_cast<double>(__bfloat162float(in[i]));
}

__global__ void add_row_bias_kernel(double *z, const double *bias, std::int64_t rows, std::int64_t cols) {
  const std::int64_t n = rows * cols;
  for (std::int64_t i = thread_index(); i < n; i += thread_stride()) z[i] += bias[i % cols];
}

__global__ void count_valid_kernel(const std::int64_t *target, std::int64_t rows, std::int64_t ignore_index,
                                   long long *valid) {
  __shared__ long long partial[kThreads];
  long long count = 0;
  for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) count += target[i] != ignore_index ? 1 : 0;
  partial[threadIdx.x] = count;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) *valid = partial[0];
}

// Reduces `count` doubles per thread across the block (sum or max).
template <int kCount, bool kMax> __device__ void block_reduce(double (&values)[kCount]) {
  __shared__ double scratch[kCount][kRowThreads];
#pragma unroll
  for (int c = 0; c < kCount; ++c) scratch[c][threadIdx.x] = values[c];
  __syncthreads();
  for (int stride = kRowThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) {
#pragma unroll
      for (int c = 0; c < kCount; ++c) {
        const double other = scratch[c][threadIdx.x + stride];
        scratch[c][threadIdx.x] =
            kMax ? fmax(scratch[c][threadIdx.x], other) : scratch[c][threadIdx.x] + other;
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int c = 0; c < kCount; ++c) values[c] = scratch[c][0];
  __syncthreads(); // scratch is reused by the next reduction
}

// log(e^a + e^b) for finite a, b.
__device__ __forceinline__ double log_add_exp(double a, double b) {
  const double hi = fmax(a, b), lo = fmin(a, b);
  return hi + log1p(exp(lo - hi));
}

__global__ void row_loss_kernel(double *student, const double *teacher, const std::int64_t *target,
                                RowLossParams p, double *ce, double *soft) {
  const std::int64_t row = blockIdx.x;
  const std::int64_t V = p.vocab;
  double *zs = student + row * V;
  const double *zt = teacher + row * V;
  const std::int64_t y = target[row];
  const bool valid = y != p.ignore_index;
  if (!valid) {
    if (threadIdx.x == 0) ce[row] = soft[row] = 0.0;
    if (p.write_grad)
      for (std::int64_t k = threadIdx.x; k < V; k += blockDim.x) zs[k] = 0.0;
    return;
  }
  const double tau = p.temperature;

  // Pass 1: extremes of the raw logits; the max of z/τ is max z/τ for τ > 0
  // and min z/τ for τ < 0.
  double extremes[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY}; // max zs, −min zs, max zt, −min zt
  for (std::int64_t k = threadIdx.x; k < V; k += blockDim.x) {
    extremes[0] = fmax(extremes[0], zs[k]);
    extremes[1] = fmax(extremes[1], -zs[k]);
    extremes[2] = fmax(extremes[2], zt[k]);
    extremes[3] = fmax(extremes[3], -zt[k]);
  }
  block_reduce<4, true>(extremes);
  const double max_raw = extremes[0];
  const double max_s = tau > 0 ? extremes[0] / tau : -extremes[1] / tau;
  const double max_t = tau > 0 ? extremes[2] / tau : -extremes[3] / tau;

  // Pass 2: Σ exp(z_s − max), Σ exp(z_s/τ − max_s), Σ exp(z_t/τ − max_t).
  double sums[3] = {0.0, 0.0, 0.0};
  for (std::int64_t k = threadIdx.x; k < V; k += blockDim.x) {
    sums[0] += exp(zs[k] - max_raw);
    sums[1] += exp(zs[k] / tau - max_s);
    sums[2] += exp(zt[k] / tau - max_t);
  }
  block_reduce<3, false>(sums);
  const double lse_raw = max_raw + log(sums[0]);
  const double lse_s = max_s + log(sums[1]); // log q_k = z_s,k/τ − lse_s
  const double lse_t = max_t + log(sums[2]); // log p_k = z_t,k/τ − lse_t

  // Pass 3: the KL sums. Mixture: KL(q‖m), KL(p‖m); β = 0: KL(p‖q);
  // β = 1: KL(q‖p).
  const double beta = p.beta;
  const bool mixture = beta > 0.0 && beta < 1.0;
  const double log_one_minus_beta = mixture ? log(1.0 - beta) : 0.0;
  const double log_beta = mixture ? log(beta) : 0.0;
  double kl[2] = {0.0, 0.0};
  for (std::int64_t k = threadIdx.x; k < V; k += blockDim.x) {
    const double lq = zs[k] / tau - lse_s, lp = zt[k] / tau - lse_t;
    const double q = exp(lq), pk = exp(lp);
    if (mixture) {
      const double lm = log_add_exp(lq + log_one_minus_beta, lp + log_beta);
      kl[0] += q * (lq - lm);
      kl[1] += pk * (lp - lm);
    } else if (beta == 0.0) {
      kl[0] += pk * (lp - lq);
    } else {
      kl[0] += q * (lq - lp);
    }
  }
  block_reduce<2, false>(kl);
  const double j = mixture ? beta * kl[1] + (1.0 - beta) * kl[0] : kl[0];
  const double target_logit = zs[y]; // read before pass 4 overwrites the row
  __syncthreads();
  if (threadIdx.x == 0) {
    ce[row] = lse_raw - target_logit;
    soft[row] = j;
  }
  if (!p.write_grad) return;

  // Pass 4: g_k = (1/N)·[w_h (softmax(z_s)_k − [k = y]) + w_s ∂J/∂z_k].
  for (std::int64_t k = threadIdx.x; k < V; k += blockDim.x) {
    const double lq = zs[k] / tau - lse_s, lp = zt[k] / tau - lse_t;
    const double q = exp(lq);
    double dj;
    if (mixture) {
      const double lm = log_add_exp(lq + log_one_minus_beta, lp + log_beta);
      dj = (1.0 - beta) / tau * q * (lq - lm - kl[0]);
    } else if (beta == 0.0) {
      dj = (q - exp(lp)) / tau;
    } else {
      dj = q * (lq - lp - kl[0]) / tau;
    }
    const double softmax_raw = exp(zs[k] - lse_raw);
    const double hard = softmax_raw - (k == y ? 1.0 : 0.0);
    zs[k] = p.inv_valid * (p.weight_hard * hard + p.weight_soft * dj);
  }
}

__global__ void column_sum_kernel(const double *g, double *out, std::int64_t rows, std::int64_t cols,
                                  bool accumulate) {
  const std::int64_t k = thread_index();
  if (k >= cols) return;
  double sum = accumulate ? out[k] : 0.0;
  for (std::int64_t i = 0; i < rows; ++i) sum += g[i * cols + k];
  out[k] = sum;
}

} // namespace

void widen(const __nv_bfloat16 *in, double *out, std::int64_t n, cudaStream_t s) {
  if (n == 0) return;
  widen_kernel<<<grid_for(n), kThreads, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

void add_row_bias(double *z, const double *bias, std::int64_t rows, std::int64_t cols, cudaStream_t s) {
  if (rows * cols == 0) return;
  add_row_bias_kernel<<<grid_for(rows * cols), kThreads, 0, s>>>(z, bias, rows, cols);
  CUDA_CHECK_LAUNCH();
}

void count_valid(const std::int64_t *target, std::int64_t rows, std::int64_t ignore_index, long long *valid,
                 cudaStream_t s) {
  count_valid_kernel<<<1, kThreads, 0, s>>>(target, rows, ignore_index, valid);
  CUDA_CHECK_LAUNCH();
}

void row_loss(double *student_logits, const double *teacher_logits, const std::int64_t *target,
              const RowLossParams &params, double *ce, double *soft, cudaStream_t s) {
  if (params.rows == 0) return;
  row_loss_kernel<<<static_cast<unsigned>(params.rows), kRowThreads, 0, s>>>(student_logits, teacher_logits,
                                                                             target, params, ce, soft);
  CUDA_CHECK_LAUNCH();
}

void column_sum(const double *g, double *out, std::int64_t rows, std::int64_t cols, bool accumulate,
                cudaStream_t s) {
  if (cols == 0) return;
  column_sum_kernel<<<static_cast<unsigned>((cols + kThreads - 1) / kThreads), kThreads, 0, s>>>(
      g, out, rows, cols, accumulate);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu::oracle
