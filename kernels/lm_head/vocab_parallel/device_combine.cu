#include "kernels/lm_head/vocab_parallel/device_combine.hpp"

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/vocab_parallel/local_reduction.hpp"

namespace kibench::vocab_parallel {

namespace {

constexpr int kThreads = 256;

template <class Op> __global__ void combine_kernel(float *into, const float *from, std::size_t count, Op op) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    into[i] = op(into[i], from[i]);
}

template <class Op> void combine(float *into, const float *from, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  const std::size_t blocks = std::min<std::size_t>((count + kThreads - 1) / kThreads, 132 * 16);
  combine_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(into, from, count, Op{});
  CUDA_CHECK_LAUNCH();
}

} // namespace

void combine_max(float *into, const float *from, std::size_t count, cudaStream_t stream) {
  combine<MaxOf>(into, from, count, stream);
}

void combine_sum(float *into, const float *from, std::size_t count, cudaStream_t stream) {
  combine<SumOf>(into, from, count, stream);
}

} // namespace kibench::vocab_parallel
