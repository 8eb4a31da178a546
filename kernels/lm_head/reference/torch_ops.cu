// The reference's kernels: one per PyTorch eager op it mirrors. Each is a
// plain, bandwidth-bound pass like ATen's own (16-byte loads where the
// tensor allows, fp32 arithmetic, fp32 accumulation in reductions), and
// none fuses two ops: the reference must cost what eager PyTorch costs, so
// every intermediate makes its full round trip through device memory.
// Row reductions take one block per row, as ATen's softmax kernels do for
// rows far wider than a block (V = 128256 floats = 513 KB per row).
#include "kernels/lm_head/reference/torch_ops.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu::torch_ops {

namespace {

constexpr int kThreads = 256;    // elementwise blocks
constexpr int kRowThreads = 512; // one block per row

unsigned grid_for(std::int64_t items) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((items + kThreads - 1) / kThreads, 1, 65536));
}

bool aligned16(const void *p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

__device__ __forceinline__ std::int64_t thread_index() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ std::int64_t thread_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}
__device__ __forceinline__ std::int64_t column_index() {
  return thread_index();
}
__device__ __forceinline__ std::int64_t column_stride() {
  return thread_stride();
}

// A 2-D grid over [rows, cols]: enough column blocks to fill the GPU with
// the rows in y, each thread handling a few elements of its row.
dim3 grid_2d(std::int64_t rows, std::int64_t cols) {
  const std::int64_t y = std::min<std::int64_t>(rows, 65535);
  const std::int64_t want = std::max<std::int64_t>(1, 16384 / y); // ~16k blocks in all
  const std::int64_t x =
      std::clamp<std::int64_t>((cols + kThreads - 1) / kThreads, 1, std::min<std::int64_t>(want, 65536));
  return dim3(static_cast<unsigned>(x), static_cast<unsigned>(y));
}

// --- generic maps: float4 body when every pointer is 16-byte aligned -------

template <class Op>
__global__ void map1_kernel(const float *in, float *out, std::int64_t n, bool vec, Op op) {
  std::int64_t start = 0;
  if (vec) {
    const std::int64_t n4 = n / 4;
    for (std::int64_t v = thread_index(); v < n4; v += thread_stride()) {
      float4 x = reinterpret_cast<const float4 *>(in)[v];
      x = make_float4(op(x.x), op(x.y), op(x.z), op(x.w));
      reinterpret_cast<float4 *>(out)[v] = x;
    }
    start = n4 * 4;
  }
  for (std::int64_t i = start + thread_index(); i < n; i += thread_stride()) out[i] = op(in[i]);
}

template <class Op>
__global__ void map2_kernel(const float *a, const float *b, float *out, std::int64_t n, bool vec, Op op) {
  std::int64_t start = 0;
  if (vec) {
    const std::int64_t n4 = n / 4;
    for (std::int64_t v = thread_index(); v < n4; v += thread_stride()) {
      const float4 x = reinterpret_cast<const float4 *>(a)[v];
      const float4 y = reinterpret_cast<const float4 *>(b)[v];
      reinterpret_cast<float4 *>(out)[v] =
          make_float4(op(x.x, y.x), op(x.y, y.y), op(x.z, y.z), op(x.w, y.w));
    }
    start = n4 * 4;
  }
  for (std::int64_t i = start + thread_index(); i < n; i += thread_stride()) out[i] = op(a[i], b[i]);
}

template <class Op> void map1(const float *in, float *out, std::int64_t n, cudaStream_t s, Op op) {
  if (n == 0) return;
  const bool vec = aligned16(in) && aligned16(out);
  map1_kernel<<<grid_for(vec ? n / 4 : n), kThreads, 0, s>>>(in, out, n, vec, op);
  CUDA_CHECK_LAUNCH();
}

template <class Op>
void map2(const float *a, const float *b, float *out, std::int64_t n, cudaStream_t s, Op op) {
  if (n == 0) return;
  const bool vec = aligned16(a) && aligned16(b) && aligned16(out);
  map2_kernel<<<grid_for(vec ? n / 4 : n), kThreads, 0, s>>>(a, b, out, n, vec, op);
  CUDA_CHECK_LAUNCH();
}

struct MulScalar {
  float c;
  __device__ float operator()(float x) const { return x * c; }
};
struct AddScalar {
  float c;
  __device__ float operator()(float x) const { return x + c; }
};
struct Exp {
  __device__ float operator()(float x) const { return expf(x); }
};
struct Log {
  __device__ float operator()(float x) const { return logf(x); }
};
struct Neg {
  __device__ float operator()(float x) const { return -x; }
};
struct Abs {
  __device__ float operator()(float x) const { return fabsf(x); }
};
struct Add {
  __device__ float operator()(float x, float y) const { return x + y; }
};
struct Sub {
  __device__ float operator()(float x, float y) const { return x - y; }
};
struct Mul {
  __device__ float operator()(float x, float y) const { return x * y; }
};
// ATen's max propagates NaN.
struct Max {
  __device__ float operator()(float x, float y) const { return (x != x || x > y) ? x : y; }
};

// --- conversions and broadcasts ---------------------------------------------

__global__ void to_float_kernel(const __nv_bfloat16 *in, float *out, std::int64_t n, bool vec) {
  std::int64_t start = 0;
  if (vec) {
    const std::int64_t n4 = n / 4;
    for (std::int64_t v = thread_index(); v < n4; v += thread_stride()) {
      const uint2 raw = reinterpret_cast<const uint2 *>(in)[v];
      const __nv_bfloat162 lo = *reinterpret_cast<const __nv_bfloat162 *>(&raw.x);
      const __nv_bfloat162 hi = *reinterpret_cast<const __nv_bfloat162 *>(&raw.y);
      const float2 a = __bfloat1622float2(lo), b = __bfloat1622float2(hi);
      reinterpret_cast<float4 *>(out)[v] = make_float4(a.x, a.y, b.x, b.y);
    }
    start = n4 * 4;
  }
  for (std::int64_t i = start + thread_index(); i < n; i += thread_stride()) out[i] = __bfloat162float(in[i]);
}

__global__ void to_bfloat16_kernel(const float *in, __nv_bfloat16 *out, std::int64_t n, bool vec) {
  std::int64_t start = 0;
  if (vec) {
    const std::int64_t n4 = n / 4;
    for (std::int64_t v = thread_index(); v < n4; v += thread_stride()) {
      const float4 x = reinterpret_cast<const float4 *>(in)[v];
      const __nv_bfloat162 lo = __floats2bfloat162_rn(x.x, x.y), hi = __floats2bfloat162_rn(x.z, x.w);
      uint2 raw;
      raw.x = *reinterpret_cast<const unsigned *>(&lo);
      raw.y = *reinterpret_cast<const unsigned *>(&hi);
      reinterpret_cast<uint2 *>(out)[v] = raw;
    }
    start = n4 * 4;
  }
  for (std::int64_t i = start + thread_index(); i < n; i += thread_stride())
    out[i] = __float2bfloat16_rn(in[i]);
}

// Row broadcasts run on a 2-D grid (rows in y, columns in x), so no thread
// divides a linear index by the row length.
__global__ void add_bias_bf16_kernel(const __nv_bfloat16 *in, const __nv_bfloat16 *bias, __nv_bfloat16 *out,
                                     std::int64_t rows, std::int64_t cols) {
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (std::int64_t c = column_index(); c < cols; c += column_stride())
      out[r * cols + c] = __float2bfloat16_rn(__bfloat162float(in[r * cols + c]) + __bfloat162float(bias[c]));
}

__global__ void eq_infinity_kernel(const float *in, bool *out, std::int64_t n) {
  for (std::int64_t i = thread_index(); i < n; i += thread_stride()) out[i] = in[i] == INFINITY;
}

__global__ void masked_fill_zero_kernel(float *inout, const bool *mask, std::int64_t n) {
  for (std::int64_t i = thread_index(); i < n; i += thread_stride())
    if (mask[i]) inout[i] = 0.0f;
}

__global__ void sub_planes_kernel(const float *a, const float *b, float *out, std::int64_t planes,
                                  std::int64_t n) {
  for (std::int64_t p = blockIdx.y; p < planes; p += gridDim.y)
    for (std::int64_t i = column_index(); i < n; i += column_stride()) out[p * n + i] = a[p * n + i] - b[i];
}

__global__ void mul_planes_kernel(const float *a, const float *b, float *out, std::int64_t planes,
                                  std::int64_t n) {
  for (std::int64_t p = blockIdx.y; p < planes; p += gridDim.y)
    for (std::int64_t i = column_index(); i < n; i += column_stride()) out[p * n + i] = a[i] * b[p * n + i];
}

__global__ void expand_rows_kernel(const float *g, float scale, float *out, std::int64_t rows,
                                   std::int64_t cols) {
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const float value = scale * g[r];
    for (std::int64_t c = column_index(); c < cols; c += column_stride()) out[r * cols + c] = value;
  }
}

__global__ void mul_rows_kernel(const float *g, const float *b, float *out, std::int64_t rows,
                                std::int64_t cols) {
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const float value = g[r];
    for (std::int64_t c = column_index(); c < cols; c += column_stride())
      out[r * cols + c] = value * b[r * cols + c];
  }
}

// --- block reductions -----------------------------------------------------

template <class Op> __device__ float block_reduce(float value, Op op, float identity, float *scratch) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  __syncthreads(); // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x) / 32;
  value = lane < warps ? scratch[lane] : identity;
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

__global__ void log_softmax_kernel(const float *in, float *out, std::int64_t cols) {
  __shared__ float scratch[32];
  const float *row = in + blockIdx.x * cols;
  float *out_row = out + blockIdx.x * cols;
  float max_value = -INFINITY;
  for (std::int64_t k = threadIdx.x; k < cols; k += blockDim.x) max_value = Max{}(max_value, row[k]);
  max_value = block_reduce(max_value, Max{}, -INFINITY, scratch);
  float sum = 0.0f;
  for (std::int64_t k = threadIdx.x; k < cols; k += blockDim.x) sum += expf(row[k] - max_value);
  sum = block_reduce(sum, Add{}, 0.0f, scratch);
  const float log_sum = logf(sum);
  for (std::int64_t k = threadIdx.x; k < cols; k += blockDim.x) out_row[k] = row[k] - max_value - log_sum;
}

__global__ void log_softmax_backward_kernel(const float *grad, const float *out, float *grad_in,
                                            std::int64_t cols) {
  __shared__ float scratch[32];
  const std::int64_t base = blockIdx.x * cols;
  float sum = 0.0f;
  for (std::int64_t k = threadIdx.x; k < cols; k += blockDim.x) sum += grad[base + k];
  sum = block_reduce(sum, Add{}, 0.0f, scratch);
  for (std::int64_t k = threadIdx.x; k < cols; k += blockDim.x)
    grad_in[base + k] = grad[base + k] - expf(out[base + k]) * sum;
}

__global__ void row_sum_kernel(const float *in, float *out, std::int64_t cols) {
  __shared__ float scratch[32];
  const float *row = in + blockIdx.x * cols;
  float sum = 0.0f;
  for (std::int64_t k = threadIdx.x; k < cols; k += blockDim.x) sum += row[k];
  sum = block_reduce(sum, Add{}, 0.0f, scratch);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

__global__ void column_sum_bf16_kernel(const __nv_bfloat16 *in, __nv_bfloat16 *out, std::int64_t rows,
                                       std::int64_t cols) {
  const std::int64_t k = thread_index();
  if (k >= cols) return;
  float sum = 0.0f;
  for (std::int64_t i = 0; i < rows; ++i) sum += __bfloat162float(in[i * cols + k]);
  out[k] = __float2bfloat16_rn(sum);
}

// --- loss scalars (single block: T values) --------------------------------

__global__ void count_valid_kernel(const std::int64_t *target, std::int64_t rows, std::int64_t ignore_index,
                                   LossScalars *scalars) {
  __shared__ float scratch[32];
  float count = 0.0f; // exact: T < 2^24
  for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x)
    count += target[i] != ignore_index ? 1.0f : 0.0f;
  count = block_reduce(count, Add{}, 0.0f, scratch);
  if (threadIdx.x == 0) {
    scalars->valid = static_cast<long long>(count);
    scalars->inv_valid = 1.0f / fmaxf(count, 1.0f);
  }
}

__global__ void nll_loss_kernel(const float *log_probs, const std::int64_t *target, std::int64_t rows,
                                std::int64_t cols, std::int64_t ignore_index, LossScalars *scalars) {
  __shared__ float scratch[32];
  float sum = 0.0f, weight = 0.0f;
  for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) {
    const std::int64_t y = target[i];
    if (y != ignore_index) {
      sum -= log_probs[i * cols + y];
      weight += 1.0f;
    }
  }
  sum = block_reduce(sum, Add{}, 0.0f, scratch);
  weight = block_reduce(weight, Add{}, 0.0f, scratch);
  if (threadIdx.x == 0) scalars->cross_entropy = sum / weight; // ATen: NaN when all are ignored
}

__global__ void nll_loss_backward_kernel(const std::int64_t *target, float scale, std::int64_t rows,
                                         std::int64_t cols, std::int64_t ignore_index,
                                         const LossScalars *scalars, float *grad) {
  const float value = -(scale / static_cast<float>(scalars->valid));
  for (std::int64_t i = thread_index(); i < rows; i += thread_stride()) {
    const std::int64_t y = target[i];
    if (y != ignore_index) grad[i * cols + y] = value;
  }
}

__global__ void masked_mean_and_loss_kernel(const float *per_row, const std::int64_t *target,
                                            std::int64_t rows, std::int64_t ignore_index, float weight_hard,
                                            float weight_soft, LossScalars *scalars) {
  __shared__ float scratch[32];
  float sum = 0.0f;
  for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x)
    sum += per_row[i] * (target[i] != ignore_index ? 1.0f : 0.0f);
  sum = block_reduce(sum, Add{}, 0.0f, scratch);
  if (threadIdx.x == 0) {
    const float n = fmaxf(static_cast<float>(scalars->valid), 1.0f);
    scalars->soft = sum / n;
    scalars->loss = weight_hard * scalars->cross_entropy + weight_soft * scalars->soft;
  }
}

__global__ void masked_mean_backward_kernel(const std::int64_t *target, std::int64_t rows,
                                            std::int64_t ignore_index, float scale,
                                            const LossScalars *scalars, float *grad_row) {
  const float g = scale / fmaxf(static_cast<float>(scalars->valid), 1.0f);
  for (std::int64_t i = thread_index(); i < rows; i += thread_stride())
    grad_row[i] = g * (target[i] != ignore_index ? 1.0f : 0.0f);
}

unsigned row_grid(std::int64_t rows) {
  return static_cast<unsigned>(rows);
}

} // namespace

void to_float(const __nv_bfloat16 *in, float *out, std::int64_t n, cudaStream_t s) {
  if (n == 0) return;
  const bool vec = reinterpret_cast<std::uintptr_t>(in) % 8 == 0 && aligned16(out);
  to_float_kernel<<<grid_for(vec ? n / 4 : n), kThreads, 0, s>>>(in, out, n, vec);
  CUDA_CHECK_LAUNCH();
}

void to_bfloat16(const float *in, __nv_bfloat16 *out, std::int64_t n, cudaStream_t s) {
  if (n == 0) return;
  const bool vec = aligned16(in) && reinterpret_cast<std::uintptr_t>(out) % 8 == 0;
  to_bfloat16_kernel<<<grid_for(vec ? n / 4 : n), kThreads, 0, s>>>(in, out, n, vec);
  CUDA_CHECK_LAUNCH();
}

void add_bias_bf16(const __nv_bfloat16 *in, const __nv_bfloat16 *bias, __nv_bfloat16 *out, std::int64_t rows,
                   std::int64_t cols, cudaStream_t s) {
  if (rows * cols == 0) return;
  add_bias_bf16_kernel<<<grid_2d(rows, cols), kThreads, 0, s>>>(in, bias, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

void mul_scalar(const float *in, float scalar, float *out, std::int64_t n, cudaStream_t s) {
  map1(in, out, n, s, MulScalar{scalar});
}
void add_scalar(const float *in, float scalar, float *out, std::int64_t n, cudaStream_t s) {
  map1(in, out, n, s, AddScalar{scalar});
}
void exp(const float *in, float *out, std::int64_t n, cudaStream_t s) {
  map1(in, out, n, s, Exp{});
}
void log(const float *in, float *out, std::int64_t n, cudaStream_t s) {
  map1(in, out, n, s, Log{});
}
void neg(const float *in, float *out, std::int64_t n, cudaStream_t s) {
  map1(in, out, n, s, Neg{});
}
void abs(const float *in, float *out, std::int64_t n, cudaStream_t s) {
  map1(in, out, n, s, Abs{});
}
void add(const float *a, const float *b, float *out, std::int64_t n, cudaStream_t s) {
  map2(a, b, out, n, s, Add{});
}
void sub(const float *a, const float *b, float *out, std::int64_t n, cudaStream_t s) {
  map2(a, b, out, n, s, Sub{});
}
void mul(const float *a, const float *b, float *out, std::int64_t n, cudaStream_t s) {
  map2(a, b, out, n, s, Mul{});
}
void maximum(const float *a, const float *b, float *out, std::int64_t n, cudaStream_t s) {
  map2(a, b, out, n, s, Max{});
}

void eq_infinity(const float *in, bool *out, std::int64_t n, cudaStream_t s) {
  if (n == 0) return;
  eq_infinity_kernel<<<grid_for(n), kThreads, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

void masked_fill_zero(float *inout, const bool *mask, std::int64_t n, cudaStream_t s) {
  if (n == 0) return;
  masked_fill_zero_kernel<<<grid_for(n), kThreads, 0, s>>>(inout, mask, n);
  CUDA_CHECK_LAUNCH();
}

void sub_planes(const float *a, const float *b, float *out, std::int64_t planes, std::int64_t n,
                cudaStream_t s) {
  if (planes * n == 0) return;
  sub_planes_kernel<<<grid_2d(planes, n), kThreads, 0, s>>>(a, b, out, planes, n);
  CUDA_CHECK_LAUNCH();
}

void mul_planes(const float *a, const float *b, float *out, std::int64_t planes, std::int64_t n,
                cudaStream_t s) {
  if (planes * n == 0) return;
  mul_planes_kernel<<<grid_2d(planes, n), kThreads, 0, s>>>(a, b, out, planes, n);
  CUDA_CHECK_LAUNCH();
}

void expand_rows(const float *g, float scale, float *out, std::int64_t rows, std::int64_t cols,
                 cudaStream_t s) {
  if (rows * cols == 0) return;
  expand_rows_kernel<<<grid_2d(rows, cols), kThreads, 0, s>>>(g, scale, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

void mul_rows(const float *g, const float *b, float *out, std::int64_t rows, std::int64_t cols,
              cudaStream_t s) {
  if (rows * cols == 0) return;
  mul_rows_kernel<<<grid_2d(rows, cols), kThreads, 0, s>>>(g, b, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

void log_softmax(const float *in, float *out, std::int64_t rows, std::int64_t cols, cudaStream_t s) {
  if (rows == 0) return;
  log_softmax_kernel<<<row_grid(rows), kRowThreads, 0, s>>>(in, out, cols);
  CUDA_CHECK_LAUNCH();
}

void log_softmax_backward(const float *grad, const float *out, float *grad_in, std::int64_t rows,
                          std::int64_t cols, cudaStream_t s) {
  if (rows == 0) return;
  log_softmax_backward_kernel<<<row_grid(rows), kRowThreads, 0, s>>>(grad, out, grad_in, cols);
  CUDA_CHECK_LAUNCH();
}

void row_sum(const float *in, float *out, std::int64_t rows, std::int64_t cols, cudaStream_t s) {
  if (rows == 0) return;
  row_sum_kernel<<<row_grid(rows), kRowThreads, 0, s>>>(in, out, cols);
  CUDA_CHECK_LAUNCH();
}

void column_sum_bf16(const __nv_bfloat16 *in, __nv_bfloat16 *out, std::int64_t rows, std::int64_t cols,
                     cudaStream_t s) {
  if (cols == 0) return;
  column_sum_bf16_kernel<<<static_cast<unsigned>((cols + kThreads - 1) / kThreads), kThreads, 0, s>>>(
      in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

void count_valid(const std::int64_t *target, std::int64_t rows, std::int64_t ignore_index,
                 LossScalars *scalars, cudaStream_t s) {
  count_valid_kernel<<<1, 1024, 0, s>>>(target, rows, ignore_index, scalars);
  CUDA_CHECK_LAUNCH();
}

void nll_loss(const float *log_probs, const std::int64_t *target, std::int64_t rows, std::int64_t cols,
              std::int64_t ignore_index, LossScalars *scalars, cudaStream_t s) {
  nll_loss_kernel<<<1, 1024, 0, s>>>(log_probs, target, rows, cols, ignore_index, scalars);
  CUDA_CHECK_LAUNCH();
}

void nll_loss_backward(const std::int64_t *target, float scale, std::int64_t rows, std::int64_t cols,
                       std::int64_t ignore_index, const LossScalars *scalars, float *grad, cudaStream_t s) {
  // at::zeros_like, then the scatter of −scale/N at each valid target.
  CUDA_CHECK(cudaMemsetAsync(grad, 0, static_cast<std::size_t>(rows * cols) * sizeof(float), s));
  if (rows == 0) return;
  nll_loss_backward_kernel<<<grid_for(rows), kThreads, 0, s>>>(target, scale, rows, cols, ignore_index,
                                                               scalars, grad);
  CUDA_CHECK_LAUNCH();
}

void masked_mean_and_loss(const float *per_row, const std::int64_t *target, std::int64_t rows,
                          std::int64_t ignore_index, float weight_hard, float weight_soft,
                          LossScalars *scalars, cudaStream_t s) {
  masked_mean_and_loss_kernel<<<1, 1024, 0, s>>>(per_row, target, rows, ignore_index, weight_hard,
                                                 weight_soft, scalars);
  CUDA_CHECK_LAUNCH();
}

void masked_mean_backward(const std::int64_t *target, std::int64_t rows, std::int64_t ignore_index,
                          float scale, const LossScalars *scalars, float *grad_row, cudaStream_t s) {
  if (rows == 0) return;
  masked_mean_backward_kernel<<<grid_for(rows), kThreads, 0, s>>>(target, rows, ignore_index, scale, scalars,
                                                                  grad_row);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu::torch_ops
