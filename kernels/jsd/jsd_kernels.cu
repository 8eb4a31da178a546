#include "kernels/jsd/jsd_kernels.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu::jsd {
namespace {

constexpr int kThreads = 256;          // per block, every kernel here
constexpr int kUnroll = 4;             // float4 loads in flight per thread and tensor
constexpr int kRowBlocksPerSm = 8;     // 8 × 256 threads: a full SM
constexpr int kFloorBlocks = 132 * 8;  // the H200's SMs × 8 (a grid-stride loop covers any count)

Divergence divergence_host(double beta) {
  if (beta == 0.0) return Divergence::forward_kl;
  if (beta == 1.0) return Divergence::reverse_kl;
  return Divergence::mixture;
}

// Sum over the block, the result in thread 0. `shared` holds kThreads / 32
// values; the trailing __syncthreads lets the caller reuse it at once.
template <typename T> __device__ T block_sum(T value, T *shared) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  T total = 0;
  if (warp == 0) {
    total = lane < kThreads / 32 ? shared[lane] : T(0);
    for (int offset = 16; offset > 0; offset /= 2) total += __shfl_down_sync(0xffffffffu, total, offset);
  }
  __syncthreads();
  return total;
}

__device__ bool row_counts(const RowArgs &a, std::int64_t row) {
  const std::int64_t y = a.target[row];
  return y != a.ignore_index && y >= 0 && y < a.vocab;
}

// One element's J term and dJ/dX (unscaled), fp32. x = log q, y = log p.
// A zero probability contributes 0 (the limit), never 0 · -inf.
template <Divergence D> __device__ __forceinline__ float element(float x, float y, float beta, float &dx) {
  if constexpr (D == Divergence::forward_kl) { // p (y - x)
    const float p = expf(y);
    dx = -p;
    return p > 0.0f ? p * (y - x) : 0.0f;
  } else if constexpr (D == Divergence::reverse_kl) { // q (x - y)
    const float q = expf(x);
    const float term = q > 0.0f ? q * (x - y) : 0.0f;
    dx = term + q;
    return term;
  } else {
    const float q = expf(x), p = expf(y);
    const float m = beta * p + (1.0f - beta) * q;
    float log_m;
    if (m >= FLT_MIN) {
      log_m = logf(m);
    } else { // m underflows: log m from the shifted mixture, as Liger's kernel computes it
      const float peak = fmaxf(x, y);
      log_m = peak == -INFINITY ? -INFINITY
                                : peak + logf(beta * expf(y - peak) + (1.0f - beta) * expf(x - peak));
    }
    const float student = q > 0.0f ? q * (x - log_m) : 0.0f;
    const float teacher = p > 0.0f ? p * (y - log_m) : 0.0f;
    dx = (1.0f - beta) * student;
    return beta * teacher + (1.0f - beta) * student;
  }
}

// One block per row (grid-stride over rows). Each element of X and Y is read
// once with streaming loads; the gradient written once with streaming stores.
// `vectorized`: V % 4 == 0 and every pointer 16-byte aligned, so each row
// is whole float4s.
template <Divergence D, bool kGrad>
__global__ void __launch_bounds__(kThreads)
    fused_rows_kernel(RowArgs a, float *__restrict__ grad, float *__restrict__ row_loss, bool vectorized) {
  __shared__ float shared[kThreads / 32];
  const float beta = static_cast<float>(a.beta);
  const auto V = static_cast<std::size_t>(a.vocab);
  for (std::int64_t row = blockIdx.x; row < a.tokens; row += gridDim.x) {
    const std::size_t first = static_cast<std::size_t>(row) * V;
    if (!row_counts(a, row)) { // uniform over the block: every thread skips the same row
      if constexpr (kGrad)
        for (std::size_t k = threadIdx.x; k < V; k += kThreads) grad[first + k] = 0.0f;
      if (threadIdx.x == 0) row_loss[row] = 0.0f;
      continue;
    }
    const float scale = a.count->inverse_float;
    float sum = 0.0f;
    if (vectorized) {
      const auto *x4 = reinterpret_cast<const float4 *>(a.student + first);
      const auto *y4 = reinterpret_cast<const float4 *>(a.teacher + first);
      auto *g4 = reinterpret_cast<float4 *>(kGrad ? grad + first : nullptr);
      const std::size_t n4 = V / 4;
      for (std::size_t base = threadIdx.x; base < n4; base += std::size_t{kThreads} * kUnroll) {
        float4 xs[kUnroll], ys[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const std::size_t k = base + static_cast<std::size_t>(u) * kThreads;
          if (k < n4) {
            xs[u] = __ldcs(x4 + k);
            ys[u] = __ldcs(y4 + k);
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const std::size_t k = base + static_cast<std::size_t>(u) * kThreads;
          if (k >= n4) break;
          float4 d;
          sum += element<D>(xs[u].x, ys[u].x, beta, d.x);
          sum += element<D>(xs[u].y, ys[u].y, beta, d.y);
          sum += element<D>(xs[u].z, ys[u].z, beta, d.z);
          sum += element<D>(xs[u].w, ys[u].w, beta, d.w);
          if constexpr (kGrad) __stcs(g4 + k, make_float4(d.x * scale, d.y * scale, d.z * scale, d.w * scale));
        }
      }
    } else {
      for (std::size_t k = threadIdx.x; k < V; k += kThreads) {
        float d;
        sum += element<D>(__ldcs(a.student + first + k), __ldcs(a.teacher + first + k), beta, d);
        if constexpr (kGrad) __stcs(grad + first + k, d * scale);
      }
    }
    const float total = block_sum(sum, shared);
    if (threadIdx.x == 0) row_loss[row] = total * scale;
  }
}

// log(e^a + e^b); -inf when both are -inf.
__device__ double log_add_exp(double a, double b) {
  const double peak = fmax(a, b);
  if (peak == -INFINITY) return peak;
  return peak + log1p(exp(-fabs(a - b)));
}

// fp64 oracle: one block per row; docs/loss-math.md's formulas in double.
__global__ void __launch_bounds__(kThreads)
    oracle_rows_kernel(RowArgs a, double *__restrict__ grad, double *__restrict__ row_loss) {
  __shared__ double shared[kThreads / 32];
  const auto V = static_cast<std::size_t>(a.vocab);
  const double beta = a.beta, log_beta = log(a.beta), log_student_share = log1p(-a.beta);
  for (std::int64_t row = blockIdx.x; row < a.tokens; row += gridDim.x) {
    const std::size_t first = static_cast<std::size_t>(row) * V;
    const bool counts = row_counts(a, row);
    const double scale = a.count->inverse;
    double sum = 0.0;
    for (std::size_t k = threadIdx.x; k < V; k += kThreads) {
      double term = 0.0, derivative = 0.0;
      if (counts) {
        const double x = a.student[first + k], y = a.teacher[first + k];
        const double q = exp(x), p = exp(y);
        if (beta == 0.0) {
          term = p == 0.0 ? 0.0 : p * (y - x);
          derivative = -p;
        } else if (beta == 1.0) {
          term = q == 0.0 ? 0.0 : q * (x - y);
          derivative = term + q;
        } else {
          const double log_m = log_add_exp(y + log_beta, x + log_student_share);
          const double student = q == 0.0 ? 0.0 : q * (x - log_m);
          const double teacher = p == 0.0 ? 0.0 : p * (y - log_m);
          term = beta * teacher + (1.0 - beta) * student;
          derivative = (1.0 - beta) * student;
        }
      }
      sum += term;
      if (grad != nullptr) grad[first + k] = derivative * scale;
    }
    const double total = block_sum(sum, shared);
    if (threadIdx.x == 0) row_loss[row] = counts ? total * scale : 0.0;
  }
}

// One block: thread t sums rows t, t + 1024, ... in order, then a fixed tree.
template <typename T> __global__ void __launch_bounds__(1024) sum_rows_kernel(const T *rows, std::int64_t n, double *loss) {
  __shared__ double partial[1024];
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < n; i += 1024) sum += static_cast<double>(rows[i]);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int width = 512; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = partial[0];
}

// out = a + b over float4s (grid-stride, kUnroll loads in flight per tensor).
__global__ void __launch_bounds__(kThreads) copy_floor_vector_kernel(const float4 *__restrict__ a,
                                                                     const float4 *__restrict__ b,
                                                                     std::size_t n4, float4 *__restrict__ out) {
  const std::size_t stride = std::size_t{gridDim.x} * kThreads;
  for (std::size_t base = std::size_t{blockIdx.x} * kThreads + threadIdx.x; base < n4; base += stride * kUnroll) {
    float4 as[kUnroll], bs[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t k = base + u * stride;
      if (k < n4) {
        as[u] = __ldcs(a + k);
        bs[u] = __ldcs(b + k);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t k = base + u * stride;
      if (k < n4)
        __stcs(out + k, make_float4(as[u].x + bs[u].x, as[u].y + bs[u].y, as[u].z + bs[u].z, as[u].w + bs[u].w));
    }
  }
}

__global__ void __launch_bounds__(kThreads) copy_floor_scalar_kernel(const float *__restrict__ a,
                                                                     const float *__restrict__ b, std::size_t n,
                                                                     float *__restrict__ out) {
  const std::size_t stride = std::size_t{gridDim.x} * kThreads;
  for (std::size_t k = std::size_t{blockIdx.x} * kThreads + threadIdx.x; k < n; k += stride)
    __stcs(out + k, __ldcs(a + k) + __ldcs(b + k));
}

// partial[block] = the block's sum of a + b (vectorized where aligned).
__global__ void __launch_bounds__(kThreads) read_floor_kernel(const float *__restrict__ a,
                                                              const float *__restrict__ b, std::size_t n,
                                                              bool vectorized, float *__restrict__ partial) {
  __shared__ float shared[kThreads / 32];
  const std::size_t stride = std::size_t{gridDim.x} * kThreads;
  const std::size_t start = std::size_t{blockIdx.x} * kThreads + threadIdx.x;
  float sum = 0.0f;
  std::size_t tail = 0;
  if (vectorized) {
    const auto *a4 = reinterpret_cast<const float4 *>(a);
    const auto *b4 = reinterpret_cast<const float4 *>(b);
    const std::size_t n4 = n / 4;
    for (std::size_t k = start; k < n4; k += stride) {
      const float4 x = __ldcs(a4 + k), y = __ldcs(b4 + k);
      sum += (x.x + y.x) + (x.y + y.y) + (x.z + y.z) + (x.w + y.w);
    }
    tail = n4 * 4;
  }
  for (std::size_t k = tail + start; k < n; k += stride) sum += __ldcs(a + k) + __ldcs(b + k);
  const float total = block_sum(sum, shared);
  if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

bool aligned16(const void *pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
}

int row_grid(std::int64_t tokens) {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return static_cast<int>(std::min<std::int64_t>(tokens, std::int64_t{sms} * kRowBlocksPerSm));
}

template <Divergence D>
void launch_fused(const RowArgs &a, float *grad, float *row_loss, bool vectorized, int grid, cudaStream_t stream) {
  if (grad != nullptr)
    fused_rows_kernel<D, true><<<grid, kThreads, 0, stream>>>(a, grad, row_loss, vectorized);
  else
    fused_rows_kernel<D, false><<<grid, kThreads, 0, stream>>>(a, grad, row_loss, vectorized);
}

} // namespace

Divergence divergence_of(double beta) {
  return divergence_host(beta);
}

void fused_rows(const RowArgs &a, float *grad, float *row_loss, cudaStream_t stream) {
  if (a.tokens == 0) return;
  const bool vectorized = a.vocab % 4 == 0 && aligned16(a.student) && aligned16(a.teacher) &&
                          (grad == nullptr || aligned16(grad));
  const int grid = row_grid(a.tokens);
  switch (divergence_of(a.beta)) {
  case Divergence::forward_kl:
    launch_fused<Divergence::forward_kl>(a, grad, row_loss, vectorized, grid, stream);
    break;
  case Divergence::reverse_kl:
    launch_fused<Divergence::reverse_kl>(a, grad, row_loss, vectorized, grid, stream);
    break;
  case Divergence::mixture:
    launch_fused<Divergence::mixture>(a, grad, row_loss, vectorized, grid, stream);
    break;
  }
  CUDA_CHECK_LAUNCH();
}

void oracle_rows(const RowArgs &a, double *grad, double *row_loss, cudaStream_t stream) {
  if (a.tokens == 0) return;
  oracle_rows_kernel<<<row_grid(a.tokens), kThreads, 0, stream>>>(a, grad, row_loss);
  CUDA_CHECK_LAUNCH();
}

void sum_rows(const float *rows, std::int64_t tokens, double *loss, cudaStream_t stream) {
  sum_rows_kernel<float><<<1, 1024, 0, stream>>>(rows, tokens, loss);
  CUDA_CHECK_LAUNCH();
}

void sum_rows(const double *rows, std::int64_t tokens, double *loss, cudaStream_t stream) {
  sum_rows_kernel<double><<<1, 1024, 0, stream>>>(rows, tokens, loss);
  CUDA_CHECK_LAUNCH();
}

void copy_floor(const float *a, const float *b, std::size_t count, float *out, cudaStream_t stream) {
  if (count == 0) return;
  if (count % 4 == 0 && aligned16(a) && aligned16(b) && aligned16(out)) {
    copy_floor_vector_kernel<<<kFloorBlocks, kThreads, 0, stream>>>(reinterpret_cast<const float4 *>(a),
                                                                     reinterpret_cast<const float4 *>(b),
                                                                     count / 4, reinterpret_cast<float4 *>(out));
  } else {
    copy_floor_scalar_kernel<<<kFloorBlocks, kThreads, 0, stream>>>(a, b, count, out);
  }
  CUDA_CHECK_LAUNCH();
}

int read_floor_blocks() {
  return kFloorBlocks;
}

void read_floor(const float *a, const float *b, std::size_t count, float *partial, cudaStream_t stream) {
  const bool vectorized = aligned16(a) && aligned16(b);
  read_floor_kernel<<<kFloorBlocks, kThreads, 0, stream>>>(a, b, count, vectorized, partial);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu::jsd
