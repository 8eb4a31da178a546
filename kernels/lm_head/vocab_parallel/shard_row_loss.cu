// The emulation's row kernels (shard_row_loss.hpp has the math). One CTA
// of kThreads per token row; thread t takes the columns t, t + kThreads, …
// of the shard's slice, and a block reduction in a fixed order (butterfly
// in the warp, then the warps in order) combines them. Simple on purpose:
// they run once per shard and phase, and their job is to be right.
#include "kernels/lm_head/vocab_parallel/shard_row_loss.hpp"

#include <climits>
#include <stdexcept>
#include <string>

#include <math_constants.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/vocab_parallel/emulation_plan.hpp"
#include "kernels/lm_head/vocab_parallel/local_reduction.hpp"

namespace kibench::vocab_parallel {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

enum class Divergence { mixture, forward_kl, reverse_kl };

struct Params {
  __nv_bfloat16 *student;
  const __nv_bfloat16 *teacher;
  std::int64_t rows, columns, ld, column_begin, vocab;
  const std::int64_t *target;
  const __nv_bfloat16 *student_input, *student_weight, *student_bias;
  std::int64_t student_hidden;
  float *maxima, *sums, *kl;
  Divergence divergence;
  float inverse_temperature;
  float beta, one_minus_beta;
  float grad_scale; // (1 − β)/τ for the mixture, 1/τ for either KL
  float weight_hard, weight_soft;
  std::int64_t ignore_index;
};

Params params_of(const ShardRowArgs &a, const char *phase) {
  const auto fail = [&](const std::string &why) {
    throw std::invalid_argument(std::string("shard row kernel (") + phase + "): " + why);
  };
  if (a.rows < 0 || a.rows > INT_MAX) fail("rows " + std::to_string(a.rows));
  if (a.columns < 1 || a.ld < a.columns)
    fail("columns " + std::to_string(a.columns) + ", ld " + std::to_string(a.ld));
  if (a.column_begin < 0 || a.column_begin + a.columns > a.vocab)
    fail("columns [" + std::to_string(a.column_begin) + ", " + std::to_string(a.column_begin + a.columns) +
         ") outside V = " + std::to_string(a.vocab));
  if (a.student_logits == nullptr || a.teacher_logits == nullptr || a.target == nullptr ||
      a.student_input == nullptr || a.student_weight == nullptr || a.maxima == nullptr || a.sums == nullptr ||
      a.kl == nullptr)
    fail("null buffer");
  if (a.student_hidden < 1) fail("student hidden " + std::to_string(a.student_hidden));
  if (a.temperature == 0.0 || !(a.beta >= 0.0 && a.beta <= 1.0)) fail("temperature 0 or beta outside [0, 1]");
  Params p{};
  p.student = a.student_logits;
  p.teacher = a.teacher_logits;
  p.rows = a.rows;
  p.columns = a.columns;
  p.ld = a.ld;
  p.column_begin = a.column_begin;
  p.vocab = a.vocab;
  p.target = a.target;
  p.student_input = a.student_input;
  p.student_weight = a.student_weight;
  p.student_bias = a.student_bias;
  p.student_hidden = a.student_hidden;
  p.maxima = a.maxima;
  p.sums = a.sums;
  p.kl = a.kl;
  p.divergence = a.beta == 0.0   ? Divergence::forward_kl
                 : a.beta == 1.0 ? Divergence::reverse_kl
                                 : Divergence::mixture;
  p.inverse_temperature = static_cast<float>(1.0 / a.temperature);
  p.beta = static_cast<float>(a.beta);
  p.one_minus_beta = static_cast<float>(1.0 - a.beta);
  p.grad_scale = static_cast<float>(p.divergence == Divergence::mixture ? (1.0 - a.beta) / a.temperature
                                                                        : 1.0 / a.temperature);
  p.weight_hard = static_cast<float>(a.weight_hard);
  p.weight_soft = static_cast<float>(a.weight_soft);
  p.ignore_index = a.ignore_index;
  return p;
}

__device__ bool valid_target(const Params &p, std::int64_t y) {
  return y != p.ignore_index && y >= 0 && y < p.vocab;
}

// Reduces v[] over the CTA with `op`; every thread returns the same values.
template <int N, class Op> __device__ void block_reduce(float (&v)[N], Op op) {
  __shared__ float partial[kWarps][N];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
      v[i] = op(v[i], __shfl_xor_sync(0xffffffffu, v[i], offset));
  if (lane == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) partial[warp][i] = v[i];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < N; ++i) {
    float acc = partial[0][i];
    for (int w = 1; w < kWarps; ++w) acc = op(acc, partial[w][i]);
    v[i] = acc;
  }
  __syncthreads(); // partial is free for the next reduction
}

// The global log-sum-exps and target logit of row `row` (after phase 2's
// all-reduces).
struct RowStatistics {
  float lse_raw, lse_q, lse_p, target_logit;
};

__device__ RowStatistics row_statistics(const Params &p, std::int64_t row) {
  const float *m = p.maxima + row * kMaximumSlots;
  const float *s = p.sums + row * kSumSlots;
  return {m[0] + logf(s[0]), m[1] + logf(s[1]), m[2] + logf(s[2]), s[3]};
}

__global__ void __launch_bounds__(kThreads) maxima_kernel(Params p) {
  const std::int64_t row = blockIdx.x;
  const __nv_bfloat16 *zs = p.student + row * p.ld, *zt = p.teacher + row * p.ld;
  float m[3] = {-CUDART_INF_F, -CUDART_INF_F, -CUDART_INF_F};
  for (std::int64_t k = threadIdx.x; k < p.columns; k += kThreads) {
    const float s = __bfloat162float(zs[k]), t = __bfloat162float(zt[k]);
    m[0] = fmaxf(m[0], s);
    m[1] = fmaxf(m[1], s * p.inverse_temperature);
    m[2] = fmaxf(m[2], t * p.inverse_temperature);
  }
  block_reduce(m, MaxOf{});
  if (threadIdx.x == 0)
    for (int i = 0; i < 3; ++i) p.maxima[row * kMaximumSlots + i] = m[i];
}

__global__ void __launch_bounds__(kThreads) sums_kernel(Params p) {
  const std::int64_t row = blockIdx.x;
  const __nv_bfloat16 *zs = p.student + row * p.ld, *zt = p.teacher + row * p.ld;
  const float *m = p.maxima + row * kMaximumSlots;
  float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (std::int64_t k = threadIdx.x; k < p.columns; k += kThreads) {
    const float s = __bfloat162float(zs[k]), t = __bfloat162float(zt[k]);
    v[0] += expf(s - m[0]);
    v[1] += expf(s * p.inverse_temperature - m[1]);
    v[2] += expf(t * p.inverse_temperature - m[2]);
  }
  // z_s[y] = x_s,i · W_s[y] (+ b_s[y]) where this shard holds y.
  const std::int64_t y = p.target[row];
  const bool holds = valid_target(p, y) && y >= p.column_begin && y < p.column_begin + p.columns;
  if (holds) {
    const __nv_bfloat16 *x = p.student_input + row * p.student_hidden,
                        *w = p.student_weight + (y - p.column_begin) * p.student_hidden;
    for (std::int64_t h = threadIdx.x; h < p.student_hidden; h += kThreads)
      v[3] = fmaf(__bfloat162float(x[h]), __bfloat162float(w[h]), v[3]);
  }
  block_reduce(v, SumOf{});
  if (threadIdx.x == 0) {
    if (holds && p.student_bias != nullptr) v[3] += __bfloat162float(p.student_bias[y - p.column_begin]);
    for (int i = 0; i < 4; ++i) p.sums[row * kSumSlots + i] = v[i];
  }
}

__global__ void __launch_bounds__(kThreads) kl_kernel(Params p) {
  const std::int64_t row = blockIdx.x;
  const __nv_bfloat16 *zs = p.student + row * p.ld, *zt = p.teacher + row * p.ld;
  const RowStatistics st = row_statistics(p, row);
  float kl[2] = {0.0f, 0.0f};
  for (std::int64_t k = threadIdx.x; k < p.columns; k += kThreads) {
    const float log_q = __bfloat162float(zs[k]) * p.inverse_temperature - st.lse_q;
    const float log_p = __bfloat162float(zt[k]) * p.inverse_temperature - st.lse_p;
    if (p.divergence == Divergence::mixture) {
      const float q = expf(log_q), pr = expf(log_p);
      const float m = fmaf(p.one_minus_beta, q, p.beta * pr);
      if (m > 0.0f) { // else q = p = 0 underflowed: both terms vanish
        const float log_m = logf(m);
        kl[0] = fmaf(pr, log_p - log_m, kl[0]); // KL(p‖m)
        kl[1] = fmaf(q, log_q - log_m, kl[1]);  // KL(q‖m)
      }
    } else if (p.divergence == Divergence::forward_kl) {
      kl[0] = fmaf(expf(log_p), log_p - log_q, kl[0]); // KL(p‖q)
    } else {
      kl[0] = fmaf(expf(log_q), log_q - log_p, kl[0]); // KL(q‖p)
    }
  }
  block_reduce(kl, SumOf{});
  if (threadIdx.x == 0)
    for (int i = 0; i < 2; ++i) p.kl[row * kKlSlots + i] = kl[i];
}

__global__ void __launch_bounds__(kThreads) gradient_kernel(Params p) {
  const std::int64_t row = blockIdx.x;
  __nv_bfloat16 *g = p.student + row * p.ld; // z_s on entry, G' on exit
  const __nv_bfloat16 *zt = p.teacher + row * p.ld;
  const std::int64_t y = p.target[row];
  if (!valid_target(p, y)) {
    for (std::int64_t k = threadIdx.x; k < p.columns; k += kThreads) g[k] = __float2bfloat16_rn(0.0f);
    return;
  }
  const RowStatistics st = row_statistics(p, row);
  const float *kl = p.kl + row * kKlSlots;
  const float kl_q = p.divergence == Divergence::reverse_kl ? kl[0] : kl[1]; // KL(q‖p) or KL(q‖m)
  for (std::int64_t k = threadIdx.x; k < p.columns; k += kThreads) {
    const float z = __bfloat162float(g[k]);
    const float log_q = z * p.inverse_temperature - st.lse_q;
    const float log_p = __bfloat162float(zt[k]) * p.inverse_temperature - st.lse_p;
    const float q = expf(log_q);
    float dj;
    if (p.divergence == Divergence::mixture) {
      const float m = fmaf(p.one_minus_beta, q, p.beta * expf(log_p));
      dj = m > 0.0f ? p.grad_scale * q * (log_q - logf(m) - kl_q) : 0.0f;
    } else if (p.divergence == Divergence::forward_kl) {
      dj = p.grad_scale * (q - expf(log_p));
    } else {
      dj = p.grad_scale * q * (log_q - log_p - kl_q);
    }
    g[k] = __float2bfloat16_rn(fmaf(p.weight_hard, expf(z - st.lse_raw), p.weight_soft * dj));
  }
}

__global__ void loss_terms_kernel(Params p, float *row_loss) {
  const std::int64_t row = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (row >= p.rows) return;
  const std::int64_t y = p.target[row];
  if (!valid_target(p, y)) {
    row_loss[row] = 0.0f;
    return;
  }
  const RowStatistics st = row_statistics(p, row);
  const float *kl = p.kl + row * kKlSlots;
  const float divergence =
      p.divergence == Divergence::mixture ? fmaf(p.beta, kl[0], p.one_minus_beta * kl[1]) : kl[0];
  row_loss[row] = fmaf(p.weight_hard, st.lse_raw - st.target_logit, p.weight_soft * divergence);
}

template <class Kernel> void launch_per_row(Kernel kernel, const Params &p, cudaStream_t stream) {
  if (p.rows == 0) return;
  kernel<<<static_cast<unsigned>(p.rows), kThreads, 0, stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

} // namespace

void shard_row_maxima(const ShardRowArgs &args, cudaStream_t stream) {
  launch_per_row(maxima_kernel, params_of(args, "maxima"), stream);
}

void shard_row_sums(const ShardRowArgs &args, cudaStream_t stream) {
  launch_per_row(sums_kernel, params_of(args, "sums"), stream);
}

void shard_row_kl(const ShardRowArgs &args, cudaStream_t stream) {
  launch_per_row(kl_kernel, params_of(args, "kl"), stream);
}

void shard_row_gradient(const ShardRowArgs &args, cudaStream_t stream) {
  launch_per_row(gradient_kernel, params_of(args, "gradient"), stream);
}

void shard_row_loss_terms(const ShardRowArgs &args, float *row_loss, cudaStream_t stream) {
  const Params p = params_of(args, "loss terms");
  if (row_loss == nullptr) throw std::invalid_argument("shard row kernel (loss terms): null row_loss");
  if (p.rows == 0) return;
  constexpr int kLossThreads = 256;
  loss_terms_kernel<<<static_cast<unsigned>((p.rows + kLossThreads - 1) / kLossThreads), kLossThreads, 0,
                      stream>>>(p, row_loss);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::vocab_parallel
