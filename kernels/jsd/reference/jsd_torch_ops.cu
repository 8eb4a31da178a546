#include "kernels/jsd/reference/jsd_torch_ops.hpp"

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/common/token_count.hpp"

namespace kibench::gpu::jsd::torch_ops {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) {
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535u * 32u ? (blocks == 0 ? 1 : blocks) : 65535u * 32u);
}

// Grid-stride over n elements: every elementwise op below.
#define KIBENCH_FOR_EACH(k, n)                                                                               \
  for (std::size_t k = std::size_t{blockIdx.x} * kThreads + threadIdx.x; k < (n);                            \
       k += std::size_t{gridDim.x} * kThreads)

__global__ void exp_kernel(const float *in, std::size_t n, float *out) {
  KIBENCH_FOR_EACH(k, n) out[k] = expf(in[k]);
}
__global__ void log_kernel(const float *in, std::size_t n, float *out) {
  KIBENCH_FOR_EACH(k, n) out[k] = logf(in[k]);
}
// ATen's lerp: weight < 0.5 ? start + weight * (end - start) : end - (end - start) * (1 - weight)
__global__ void lerp_kernel(const float *start, const float *end, float weight, std::size_t n, float *out) {
  KIBENCH_FOR_EACH(k, n) {
    const float diff = end[k] - start[k];
    out[k] = weight < 0.5f ? start[k] + weight * diff : end[k] - diff * (1.0f - weight);
  }
}
__global__ void kl_div_kernel(const float *input, const float *target, std::size_t n, float *out) {
  KIBENCH_FOR_EACH(k, n) out[k] = expf(target[k]) * (target[k] - input[k]);
}
__global__ void row_sum_kernel(const float *in, std::int64_t rows, std::int64_t columns, float *out) {
  __shared__ float shared[kThreads];
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    float sum = 0.0f;
    for (std::int64_t k = threadIdx.x; k < columns; k += kThreads) sum += in[row * columns + k];
    shared[threadIdx.x] = sum;
    __syncthreads();
    for (int width = kThreads / 2; width > 0; width /= 2) {
      if (static_cast<int>(threadIdx.x) < width) shared[threadIdx.x] += shared[threadIdx.x + width];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[row] = shared[0];
    __syncthreads();
  }
}
__global__ void axpby_kernel(float a, const float *x, float b, const float *y, std::int64_t n, float *out) {
  KIBENCH_FOR_EACH(k, static_cast<std::size_t>(n)) out[k] = a * x[k] + b * y[k];
}
__device__ bool counts(const std::int64_t *label, std::int64_t i, std::int64_t ignore_index, std::int64_t vocab) {
  return label[i] != ignore_index && label[i] >= 0 && label[i] < vocab;
}
__global__ void masked_scale_kernel(const float *rows, const std::int64_t *label, std::int64_t ignore_index,
                                    std::int64_t vocab, std::int64_t tokens, const TokenCount *count,
                                    float *scaled) {
  const auto n = static_cast<float>(count->valid);
  KIBENCH_FOR_EACH(k, static_cast<std::size_t>(tokens))
    scaled[k] = (counts(label, static_cast<std::int64_t>(k), ignore_index, vocab) ? rows[k] : 0.0f) / n;
}
__global__ void __launch_bounds__(1024) sum_kernel(const float *values, std::int64_t n, double *loss) {
  __shared__ float partial[1024];
  float sum = 0.0f; // torch sums fp32 in fp32
  for (std::int64_t i = threadIdx.x; i < n; i += 1024) sum += values[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int width = 512; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = static_cast<double>(partial[0]);
}
__global__ void masked_mean_backward_kernel(const std::int64_t *label, std::int64_t ignore_index,
                                            std::int64_t vocab, std::int64_t tokens,
                                            const TokenCount *count, float weight, float *g) {
  const auto n = static_cast<float>(count->valid);
  KIBENCH_FOR_EACH(k, static_cast<std::size_t>(tokens))
    g[k] = counts(label, static_cast<std::int64_t>(k), ignore_index, vocab) ? weight / n : 0.0f;
}
__global__ void kl_div_backward_input_kernel(const float *target, const float *g, std::int64_t columns,
                                             std::size_t n, bool accumulate, float *out) {
  KIBENCH_FOR_EACH(k, n) {
    const float value = -expf(target[k]) * g[k / static_cast<std::size_t>(columns)];
    out[k] = accumulate ? out[k] + value : value;
  }
}
__global__ void kl_div_backward_target_kernel(const float *input, const float *target, const float *g,
                                              std::int64_t columns, std::size_t n, bool accumulate, float *out) {
  KIBENCH_FOR_EACH(k, n) {
    const float value = expf(target[k]) * (target[k] - input[k] + 1.0f) * g[k / static_cast<std::size_t>(columns)];
    out[k] = accumulate ? out[k] + value : value;
  }
}
__global__ void div_kernel(const float *grad, const float *m, std::size_t n, float *out) {
  KIBENCH_FOR_EACH(k, n) out[k] = grad[k] / m[k];
}
__global__ void scale_kernel(const float *grad, float factor, std::size_t n, float *out) {
  KIBENCH_FOR_EACH(k, n) out[k] = grad[k] * factor;
}
__global__ void mul_kernel(const float *grad, const float *result, std::size_t n, bool accumulate, float *out) {
  KIBENCH_FOR_EACH(k, n) {
    const float value = grad[k] * result[k];
    out[k] = accumulate ? out[k] + value : value;
  }
}

#undef KIBENCH_FOR_EACH

} // namespace

void exp(const float *in, std::size_t n, float *out, cudaStream_t stream) {
  exp_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}
void log(const float *in, std::size_t n, float *out, cudaStream_t stream) {
  log_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}
void lerp(const float *start, const float *end, float weight, std::size_t n, float *out, cudaStream_t stream) {
  lerp_kernel<<<blocks_for(n), kThreads, 0, stream>>>(start, end, weight, n, out);
  CUDA_CHECK_LAUNCH();
}
void kl_div(const float *input, const float *target, std::size_t n, float *out, cudaStream_t stream) {
  kl_div_kernel<<<blocks_for(n), kThreads, 0, stream>>>(input, target, n, out);
  CUDA_CHECK_LAUNCH();
}
void row_sum(const float *in, std::int64_t rows, std::int64_t columns, float *out, cudaStream_t stream) {
  if (rows == 0) return;
  const auto grid = static_cast<unsigned>(rows < 65535 ? rows : 65535);
  row_sum_kernel<<<grid, kThreads, 0, stream>>>(in, rows, columns, out);
  CUDA_CHECK_LAUNCH();
}
void axpby(float a, const float *x, float b, const float *y, std::int64_t n, float *out, cudaStream_t stream) {
  axpby_kernel<<<blocks_for(static_cast<std::size_t>(n)), kThreads, 0, stream>>>(a, x, b, y, n, out);
  CUDA_CHECK_LAUNCH();
}
void masked_mean(const float *rows, const std::int64_t *label, std::int64_t ignore_index, std::int64_t vocab,
                 std::int64_t tokens, const void *count, float *scaled, double *loss, cudaStream_t stream) {
  masked_scale_kernel<<<blocks_for(static_cast<std::size_t>(tokens)), kThreads, 0, stream>>>(
      rows, label, ignore_index, vocab, tokens, static_cast<const TokenCount *>(count), scaled);
  CUDA_CHECK_LAUNCH();
  sum_kernel<<<1, 1024, 0, stream>>>(scaled, tokens, loss);
  CUDA_CHECK_LAUNCH();
}
void masked_mean_backward(const std::int64_t *label, std::int64_t ignore_index, std::int64_t vocab,
                          std::int64_t tokens, const void *count, float weight, float *g, cudaStream_t stream) {
  masked_mean_backward_kernel<<<blocks_for(static_cast<std::size_t>(tokens)), kThreads, 0, stream>>>(
      label, ignore_index, vocab, tokens, static_cast<const TokenCount *>(count), weight, g);
  CUDA_CHECK_LAUNCH();
}
void kl_div_backward_input(const float *target, const float *g, std::int64_t rows, std::int64_t columns,
                           bool accumulate, float *out, cudaStream_t stream) {
  const auto n = static_cast<std::size_t>(rows * columns);
  kl_div_backward_input_kernel<<<blocks_for(n), kThreads, 0, stream>>>(target, g, columns, n, accumulate, out);
  CUDA_CHECK_LAUNCH();
}
void kl_div_backward_target(const float *input, const float *target, const float *g, std::int64_t rows,
                            std::int64_t columns, bool accumulate, float *out, cudaStream_t stream) {
  const auto n = static_cast<std::size_t>(rows * columns);
  kl_div_backward_target_kernel<<<blocks_for(n), kThreads, 0, stream>>>(input, target, g, columns, n,
                                                                        accumulate, out);
  CUDA_CHECK_LAUNCH();
}
void div(const float *grad, const float *m, std::size_t n, float *out, cudaStream_t stream) {
  div_kernel<<<blocks_for(n), kThreads, 0, stream>>>(grad, m, n, out);
  CUDA_CHECK_LAUNCH();
}
void scale(const float *grad, float factor, std::size_t n, float *out, cudaStream_t stream) {
  scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(grad, factor, n, out);
  CUDA_CHECK_LAUNCH();
}
void mul(const float *grad, const float *result, std::size_t n, bool accumulate, float *out, cudaStream_t stream) {
  mul_kernel<<<blocks_for(n), kThreads, 0, stream>>>(grad, result, n, accumulate, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu::jsd::torch_ops
