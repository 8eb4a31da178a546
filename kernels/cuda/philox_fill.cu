// Device input generation. Each thread computes one Philox4x32-10 block
// (four 32-bit words) and writes the four elements that block feeds, so the
// GPU draws exactly the words the CPU generator draws for the same linear
// index. The affine map low + (high − low)·u is written with __dmul_rn and
// __dadd_rn: nvcc would otherwise contract it into an FMA, whose single
// rounding differs from the CPU's two and would flip the last bit of some
// elements. Targets take one block per token (philox.hpp).
#include "kernels/cuda/philox_fill.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"
#include "lib/inputs/philox.hpp"

namespace kibench::gpu {

namespace {

constexpr int kThreads = 256;

__global__ void uniform_bf16_kernel(__nv_bfloat16 *__restrict__ out, std::int64_t count, std::uint64_t seed,
                                    double low, double high) {
  const std::int64_t blocks = (count + 3) / 4;
  const double range = high - low;
  for (std::int64_t b = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; b < blocks;
       b += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const philox::Block block = philox::block_at(static_cast<std::uint64_t>(b), seed);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::int64_t i = 4 * b + j;
      if (i < count) {
        const double u = philox::unit_from_bits(block.w[j]);
        const double v = __dadd_rn(low, __dmul_rn(range, u));
        __nv_bfloat16_raw raw;
        raw.x = philox::bf16_from_float_bits(__float_as_uint(__double2float_rn(v)));
        out[i] = raw;
      }
    }
  }
}

__global__ void targets_kernel(std::int64_t *__restrict__ out, std::int64_t count, std::uint64_t seed,
                               std::int64_t low, std::uint64_t span, double ignore_fraction,
                               std::int64_t ignore_index, unsigned long long *__restrict__ valid) {
  unsigned long long kept = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const philox::Block block = philox::block_at(static_cast<std::uint64_t>(i), seed);
    const std::uint64_t word = (static_cast<std::uint64_t>(block.w[1]) << 32) | block.w[0];
    std::int64_t y = low + static_cast<std::int64_t>(word % span);
    if (philox::unit_from_bits(block.w[2]) < ignore_fraction)
      y = ignore_index;
    else
      ++kept;
    out[i] = y;
  }
  if (kept != 0) atomicAdd(valid, kept);
}

unsigned grid_for(std::int64_t work_items) {
  const std::int64_t blocks = (work_items + kThreads - 1) / kThreads;
  // Grid-stride loops beyond this; 65536 blocks fill any GPU many times.
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, 65536));
}

} // namespace

void fill_uniform_bf16(__nv_bfloat16 *out, std::int64_t count, std::uint64_t seed, double low, double high,
                       cudaStream_t stream) {
  if (count == 0) return;
  uniform_bf16_kernel<<<grid_for((count + 3) / 4), kThreads, 0, stream>>>(out, count, seed, low, high);
  CUDA_CHECK_LAUNCH();
}

void fill_targets(std::int64_t *out, std::int64_t count, std::uint64_t seed, std::int64_t low,
                  std::int64_t high, double ignore_fraction, std::int64_t ignore_index,
                  unsigned long long *valid, cudaStream_t stream) {
  if (high <= low) throw std::invalid_argument("fill_targets: empty target range");
  if (count == 0) return;
  targets_kernel<<<grid_for(count), kThreads, 0, stream>>>(
      out, count, seed, low, static_cast<std::uint64_t>(high - low), ignore_fraction, ignore_index, valid);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu
