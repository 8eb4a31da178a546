// One block counts the valid targets (T int64 values: a few microseconds
// even at T = 8192) and writes N = max(1, count) with its reciprocals.
#include "kernels/common/token_count.hpp"

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu {

namespace {

constexpr int kThreads = 1024;

__global__ void __launch_bounds__(kThreads)
    count_kernel(const std::int64_t *target, std::int64_t tokens, std::int64_t vocab,
                 std::int64_t ignore_index, TokenCount *out) {
  __shared__ long long warp_counts[kThreads / 32];
  long long count = 0;
  for (std::int64_t i = threadIdx.x; i < tokens; i += kThreads) {
    const std::int64_t y = target[i];
    count += (y != ignore_index && y >= 0 && y < vocab) ? 1 : 0;
  }
  for (int offset = 16; offset > 0; offset >>= 1) count += __shfl_xor_sync(0xffffffffu, count, offset);
  if ((threadIdx.x & 31) == 0) warp_counts[threadIdx.x >> 5] = count;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long total = 0;
    for (int w = 0; w < kThreads / 32; ++w) total += warp_counts[w];
    const long long n = total > 0 ? total : 1;
    out->valid = n;
    out->inverse = 1.0 / static_cast<double>(n);
    out->inverse_float = static_cast<float>(out->inverse);
    out->zero = 0.0f;
  }
}

} // namespace

void count_valid_tokens(const std::int64_t *target, std::int64_t tokens, std::int64_t vocab,
                        std::int64_t ignore_index, TokenCount *out, cudaStream_t stream) {
  count_kernel<<<1, kThreads, 0, stream>>>(target, tokens, vocab, ignore_index, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu
