#include "kernels/lm_head/vocab_parallel/shard_one_hot.hpp"

#include <climits>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::vocab_parallel {

namespace {

constexpr int kThreads = 256;

// Block i: token row i of the chunk.
__global__ void one_hot_input_kernel(float *partial, const std::int64_t *target, std::int64_t vocab,
                                     std::int64_t ignore_index, std::int64_t begin, std::int64_t end,
                                     const __nv_bfloat16 *w, std::int64_t hidden, float weight_hard) {
  const std::int64_t i = blockIdx.x;
  const std::int64_t y = target[i];
  if (y == ignore_index || y < 0 || y >= vocab || y < begin || y >= end) return;
  float *row = partial + i * hidden;
  const __nv_bfloat16 *w_y = w + (y - begin) * hidden;
  for (std::int64_t h = threadIdx.x; h < hidden; h += kThreads)
    row[h] = fmaf(-weight_hard, __bfloat162float(w_y[h]), row[h]);
}

// Block p: sorted position p, if it starts a run of equal keys inside
// [begin, end) (keys are valid targets, or V ≥ end for invalid tokens).
__global__ void one_hot_weight_kernel(const std::int32_t *sorted_keys, const std::int32_t *sorted_tokens,
                                      int tokens, std::int64_t begin, std::int64_t end,
                                      const __nv_bfloat16 *x, std::int64_t hidden, float weight_hard,
                                      float *grad_weight_rows, float *grad_bias_rows) {
  const int p = static_cast<int>(blockIdx.x);
  const std::int64_t k = sorted_keys[p];
  if (k < begin || k >= end || (p > 0 && sorted_keys[p - 1] == k)) return;
  int run_end = p + 1;
  while (run_end < tokens && sorted_keys[run_end] == k) ++run_end;
  float *row = grad_weight_rows + (k - begin) * hidden;
  for (std::int64_t h = threadIdx.x; h < hidden; h += kThreads) {
    float sum = 0.0f;
    for (int q = p; q < run_end; ++q)
      sum += __bfloat162float(x[static_cast<std::int64_t>(sorted_tokens[q]) * hidden + h]);
    row[h] = fmaf(-weight_hard, sum, row[h]);
  }
  if (grad_bias_rows != nullptr && threadIdx.x == 0)
    grad_bias_rows[k - begin] =
        fmaf(-weight_hard, static_cast<float>(run_end - p), grad_bias_rows[k - begin]);
}

void check_range(const char *what, std::int64_t begin, std::int64_t end, std::int64_t hidden) {
  if (begin < 0 || end <= begin || hidden < 1)
    throw std::invalid_argument(std::string(what) + ": rows [" + std::to_string(begin) + ", " +
                                std::to_string(end) + "), hidden " + std::to_string(hidden));
}

} // namespace

void subtract_shard_one_hot_input(float *partial, const std::int64_t *target, std::int64_t rows,
                                  std::int64_t vocab, std::int64_t ignore_index, std::int64_t begin,
                                  std::int64_t end, const __nv_bfloat16 *student_weight,
                                  std::int64_t student_hidden, float weight_hard, cudaStream_t stream) {
  check_range("subtract_shard_one_hot_input", begin, end, student_hidden);
  if (rows < 0 || rows > INT_MAX || end > vocab)
    throw std::invalid_argument("subtract_shard_one_hot_input: " + std::to_string(rows) +
                                " rows, V = " + std::to_string(vocab));
  if (rows == 0) return;
  one_hot_input_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      partial, target, vocab, ignore_index, begin, end, student_weight, student_hidden, weight_hard);
  CUDA_CHECK_LAUNCH();
}

void subtract_shard_one_hot_weight(const gpu::fused::TargetOrder &order, std::int64_t tokens,
                                   std::int64_t begin, std::int64_t end, const __nv_bfloat16 *student_input,
                                   std::int64_t student_hidden, float weight_hard, float *grad_weight_rows,
                                   float *grad_bias_rows, cudaStream_t stream) {
  check_range("subtract_shard_one_hot_weight", begin, end, student_hidden);
  if (tokens < 1 || tokens > INT_MAX)
    throw std::invalid_argument("subtract_shard_one_hot_weight: " + std::to_string(tokens) + " tokens");
  one_hot_weight_kernel<<<static_cast<unsigned>(tokens), kThreads, 0, stream>>>(
      order.sorted_keys, order.sorted_tokens, static_cast<int>(tokens), begin, end, student_input,
      student_hidden, weight_hard, grad_weight_rows, grad_bias_rows);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::vocab_parallel
