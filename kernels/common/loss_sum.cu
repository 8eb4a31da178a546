// One block: thread t adds rows t, t + 1024, ... in fp64, then a pairwise
// tree in shared memory; the order depends on nothing but T.
#include "kernels/common/loss_sum.hpp"

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu {

namespace {

constexpr int kThreads = 1024;

__global__ void __launch_bounds__(kThreads)
    sum_kernel(const float *row_loss, std::int64_t tokens, const TokenCount *count, double *loss) {
  __shared__ double partial[kThreads];
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < tokens; i += kThreads) sum += static_cast<double>(row_loss[i]);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = partial[0] * count->inverse;
}

} // namespace

void sum_row_losses(const float *row_loss, std::int64_t tokens, const TokenCount *count, double *loss,
                    cudaStream_t stream) {
  sum_kernel<<<1, kThreads, 0, stream>>>(row_loss, tokens, count, loss);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu
