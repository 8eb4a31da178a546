// The one-hot term of the gradient in fp32 (one_hot.hpp says why). Three
// small kernels (the weight term into the fp32 accumulator or into a
// grad W already scaled and rounded), each far below a millisecond at the seed size: the sort
// keys, the per-target sums over x_s rows (one block per run of equal
// targets, T x Hs bf16 = 33 MB read), and the grad x_s conversion that
// gathers W_s[y_i] while it divides by N.
#include "kernels/lm_head/fused/one_hot.hpp"

#include <bit>
#include <stdexcept>

#include <cub/device/device_radix_sort.cuh>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu::fused {

namespace {

constexpr int kThreads = 256;

__global__ void keys_kernel(const std::int64_t *target, int tokens, std::int64_t vocab,
                            std::int64_t ignore_index, std::int32_t *keys, std::int32_t *token_ids) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= tokens) return;
  const std::int64_t y = target[i];
  const bool valid = y != ignore_index && y >= 0 && y < vocab;
  keys[i] = static_cast<std::int32_t>(valid ? y : vocab);
  token_ids[i] = i;
}

// Where the weight term goes: the fp32 accumulator, or (scaled != null)
// the bf16 grad W that its GEMM already divided by N.
struct WeightTarget {
  SplitAccumulator sum;
  __nv_bfloat16 *scaled = nullptr;
  const TokenCount *n = nullptr;
};

// Block p handles sorted position p if it starts a run of equal, valid keys.
__global__ void one_hot_weight_kernel(const std::int32_t *sorted_keys, const std::int32_t *sorted_tokens,
                                      int tokens, std::int32_t vocab, const __nv_bfloat16 *x, int hidden,
                                      float weight_hard, WeightTarget target, float *grad_bias_sum) {
  const int p = static_cast<int>(blockIdx.x);
  const std::int32_t k = sorted_keys[p];
  if (k == vocab || (p > 0 && sorted_keys[p - 1] == k)) return;
  int end = p + 1;
  while (end < tokens && sorted_keys[end] == k) ++end;
  for (int h = static_cast<int>(threadIdx.x); h < hidden; h += blockDim.x) {
    float sum = 0.0f;
    for (int q = p; q < end; ++q)
      sum += __bfloat162float(x[static_cast<std::int64_t>(sorted_tokens[q]) * hidden + h]);
    if (target.scaled != nullptr) {
      __nv_bfloat16 &out = target.scaled[static_cast<std::int64_t>(k) * hidden + h];
      out = __float2bfloat16_rn(fmaf(-weight_hard * target.n->inverse_float, sum, __bfloat162float(out)));
    } else {
      float *row = target.sum.row(k, hidden);
      row[h] = fmaf(-weight_hard, sum, row[h]);
    }
  }
  if (grad_bias_sum != nullptr && threadIdx.x == 0)
    grad_bias_sum[k] = fmaf(-weight_hard, static_cast<float>(end - p), grad_bias_sum[k]);
}

__global__ void finish_grad_input_kernel(const float *sum, const std::int64_t *target, std::int64_t vocab,
                                         std::int64_t ignore_index, const __nv_bfloat16 *w, int hidden,
                                         float weight_hard, const TokenCount *n, __nv_bfloat16 *out) {
  const std::int64_t row = blockIdx.y;
  const std::int64_t y = target[row];
  const bool valid = y != ignore_index && y >= 0 && y < vocab;
  const float scale = n->inverse_float;
  const float *in = sum + row * hidden;
  const __nv_bfloat16 *w_row = w + (valid ? y : 0) * hidden;
  __nv_bfloat16 *o = out + row * hidden;
  for (int h = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); h < hidden;
       h += static_cast<int>(gridDim.x * blockDim.x)) {
    float v = in[h];
    if (valid) v = fmaf(-weight_hard, __bfloat162float(w_row[h]), v);
    o[h] = __float2bfloat16_rn(v * scale);
  }
}

int end_bit_for(std::int64_t vocab) {
  return std::bit_width(static_cast<std::uint32_t>(vocab));
}

void check_sizes(std::int64_t tokens, std::int64_t vocab) {
  if (tokens <= 0 || tokens >= (std::int64_t{1} << 31) || vocab <= 0 || vocab >= (std::int64_t{1} << 31) - 1)
    throw std::invalid_argument("one-hot gradient: T and V must fit int32");
}

// One block per sorted position (one_hot_weight_kernel), for either target.
void launch_one_hot_weight(const TargetOrder &order, std::int64_t tokens, std::int64_t vocab,
                           const __nv_bfloat16 *student_input, std::int64_t student_hidden, float weight_hard,
                           const WeightTarget &target, float *grad_bias_sum, cudaStream_t stream) {
  check_sizes(tokens, vocab);
  one_hot_weight_kernel<<<static_cast<unsigned>(tokens), kThreads, 0, stream>>>(
      order.sorted_keys, order.sorted_tokens, static_cast<int>(tokens), static_cast<std::int32_t>(vocab),
      student_input, static_cast<int>(student_hidden), weight_hard, target, grad_bias_sum);
  CUDA_CHECK_LAUNCH();
}

} // namespace

std::size_t target_sort_temp_bytes(std::int64_t tokens, std::int64_t vocab) {
  check_sizes(tokens, vocab);
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, static_cast<const std::int32_t *>(nullptr), static_cast<std::int32_t *>(nullptr),
      static_cast<const std::int32_t *>(nullptr), static_cast<std::int32_t *>(nullptr),
      static_cast<int>(tokens), 0, end_bit_for(vocab)));
  return bytes;
}

void sort_targets(const std::int64_t *target, std::int64_t tokens, std::int64_t vocab,
                  std::int64_t ignore_index, const TargetOrder &order, cudaStream_t stream) {
  check_sizes(tokens, vocab);
  const int n = static_cast<int>(tokens);
  keys_kernel<<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(target, n, vocab, ignore_index,
                                                                      order.keys, order.tokens);
  CUDA_CHECK_LAUNCH();
  std::size_t temp_bytes = order.temp_bytes;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(order.temp, temp_bytes, order.keys, order.sorted_keys,
                                             order.tokens, order.sorted_tokens, n, 0, end_bit_for(vocab),
                                             stream));
}

void subtract_one_hot_weight(const TargetOrder &order, std::int64_t tokens, std::int64_t vocab,
                             const __nv_bfloat16 *student_input, std::int64_t student_hidden,
                             float weight_hard, const SplitAccumulator &grad_weight_sum, float *grad_bias_sum,
                             cudaStream_t stream) {
  launch_one_hot_weight(order, tokens, vocab, student_input, student_hidden, weight_hard,
                        WeightTarget{.sum = grad_weight_sum, .scaled = nullptr, .n = nullptr}, grad_bias_sum,
                        stream);
}

void add_one_hot_to_scaled_weight(const TargetOrder &order, std::int64_t tokens, std::int64_t vocab,
                                  const __nv_bfloat16 *student_input, std::int64_t student_hidden,
                                  float weight_hard, const TokenCount *n, __nv_bfloat16 *grad_weight,
                                  float *grad_bias_sum, cudaStream_t stream) {
  launch_one_hot_weight(order, tokens, vocab, student_input, student_hidden, weight_hard,
                        WeightTarget{.sum = {}, .scaled = grad_weight, .n = n}, grad_bias_sum, stream);
}

void finish_grad_input(const float *sum, const std::int64_t *target, std::int64_t rows, std::int64_t vocab,
                       std::int64_t ignore_index, const __nv_bfloat16 *student_weight,
                       std::int64_t student_hidden, float weight_hard, const TokenCount *n,
                       __nv_bfloat16 *out, cudaStream_t stream) {
  if (rows <= 0) return;
  if (rows > 65535) throw std::invalid_argument("finish_grad_input: more than 65535 rows");
  const unsigned column_blocks = static_cast<unsigned>((student_hidden + kThreads - 1) / kThreads);
  finish_grad_input_kernel<<<dim3(column_blocks, static_cast<unsigned>(rows)), kThreads, 0, stream>>>(
      sum, target, vocab, ignore_index, student_weight, static_cast<int>(student_hidden), weight_hard, n,
      out);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu::fused
