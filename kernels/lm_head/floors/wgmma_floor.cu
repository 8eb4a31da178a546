// wgmma_floor.hpp says what this kernel is for. The one choice that
// matters is that the tensor cores see the workload's own values: their
// power depends on the operand bits (a product over zeros runs faster than
// over random data), and the board's power limit sets the clock of such
// work. The stages are raw copies of the inputs, so the tensor cores
// multiply the inputs' bf16 values, not a product anyone reads.
#include "kernels/lm_head/floors/wgmma_floor.hpp"

#include <cmath>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/wgmma.cuh"

namespace kibench::gpu::tensor_floor {

namespace {

constexpr int kWarpgroups = 2;
static_assert(kThreadsPerCta == 128 * kWarpgroups);
constexpr int kWarpgroupRows = 64; // A rows per warpgroup (wgmma's M)
constexpr int kTileCols = 256;     // B rows (wgmma's N)
constexpr int kBlockK = 64;        // one 128-byte swizzle row of bf16
constexpr int kStages = 4;
constexpr int kABytes = kWarpgroupRows * kBlockK * 2;
constexpr int kBBytes = kTileCols * kBlockK * 2;
constexpr int kStageBytes = kWarpgroups * kABytes + kBBytes; // 48 KiB
constexpr int kSharedBytes = kStages * kStageBytes + 1024;   // + room to align to 1024
constexpr int kStepsPerTile = 64; // K = 4096 between accumulator restarts, as z_t's GEMM
static_assert(kFlopsPerStep == 2.0 * kWarpgroups * kWarpgroupRows * kTileCols * kBlockK);

// Element `i` of `count` from a flat view of `source` starting at `from`
// (< source.elements), wrapping around: one compare where the tensor holds
// at least `count` elements, a division only for tiny ones.
__device__ __forceinline__ std::uint16_t wrapped(const OperandSource &source, std::int64_t from, int i,
                                                 int count) {
  const auto *values = static_cast<const std::uint16_t *>(source.data);
  std::int64_t at = from + i;
  if (source.elements >= count) {
    if (at >= source.elements) at -= source.elements;
  } else {
    at %= source.elements;
  }
  return values[at];
}

// Copies kStages A and B stages from flat views of the phase's operands,
// from an offset that differs between CTAs.
__device__ void fill_stages(unsigned char *smem, const Phase &p) {
  constexpr int kAElements = kWarpgroups * kABytes / 2, kBElements = kBBytes / 2;
  constexpr int kAll = kStages * kAElements, kBAll = kStages * kBElements;
  const std::int64_t a_from = (static_cast<std::int64_t>(blockIdx.x) * kAll) % p.a.elements;
  const std::int64_t b_from = (static_cast<std::int64_t>(blockIdx.x) * kBAll) % p.b.elements;
  for (int i = threadIdx.x; i < kAll; i += kThreadsPerCta)
    reinterpret_cast<std::uint16_t *>(smem + (i / kAElements) * kStageBytes)[i % kAElements] =
        wrapped(p.a, a_from, i, kAll);
  for (int i = threadIdx.x; i < kBAll; i += kThreadsPerCta)
    reinterpret_cast<std::uint16_t *>(smem + (i / kBElements) * kStageBytes +
                                      kWarpgroups * kABytes)[i % kBElements] = wrapped(p.b, b_from, i, kBAll);
}

// One phase: this CTA's share of p.steps over stages filled from p.
__device__ __forceinline__ void run_phase(const Phase &p, unsigned char *smem, std::uint32_t base,
                                          float (&d)[128]) {
  if (p.steps == 0) return; // the same for every CTA
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  const std::int64_t mine = p.steps / gridDim.x + (blockIdx.x < p.steps % gridDim.x ? 1 : 0);
  __syncthreads(); // the last phase's wgmmas have all completed (wait_group<0> below)
  fill_stages(smem, p);
  wgmma::fence_shared_for_async_proxy();
  __syncthreads();
  for (std::int64_t s = 0; s < mine; ++s) {
    const std::uint32_t stage = base + static_cast<std::uint32_t>(s % kStages) * kStageBytes;
    const std::uint32_t a = stage + warpgroup * kABytes, b = stage + kWarpgroups * kABytes;
    const bool restart = s % kStepsPerTile == 0;
    wgmma::fence();
#pragma unroll
    for (int k = 0; k < kBlockK / 16; ++k)
      wgmma::mma_m64n256k16_bf16(d, wgmma::swizzle128_descriptor(a + 32 * k),
                                 wgmma::swizzle128_descriptor(b + 32 * k), !(restart && k == 0));
    wgmma::commit_group();
    // One group in flight, as a GEMM main loop that releases each stage to
    // its producer once the next group is issued.
    wgmma::wait_group<1>();
  }
  wgmma::wait_group<0>();
}

__global__ void __launch_bounds__(kThreadsPerCta, 1)
    wgmma_floor_kernel(const Phase first, const Phase second, float *sink) {
  extern __shared__ unsigned char raw[];
  // The swizzled layout wants each tile 1024-byte aligned.
  const std::uint32_t raw_address = static_cast<std::uint32_t>(__cvta_generic_to_shared(raw));
  const std::uint32_t pad = (1024 - raw_address % 1024) % 1024;
  float d[128];
#pragma unroll
  for (float &x : d) x = 0.0f;
  run_phase(first, raw + pad, raw_address + pad, d);
  run_phase(second, raw + pad, raw_address + pad, d);
  sink[blockIdx.x * kThreadsPerCta + threadIdx.x] = d[0] + d[127];
}

} // namespace

std::int64_t steps_for(double flops) {
  return flops > 0.0 ? static_cast<std::int64_t>(std::ceil(flops / kFlopsPerStep)) : 0;
}

void launch(const Phase &first, const Phase &second, int ctas, float *sink, cudaStream_t stream) {
  // Once per process: the limit does not change between launches.
  static const bool configured = [] {
    CUDA_CHECK(
        cudaFuncSetAttribute(wgmma_floor_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
    return true;
  }();
  (void)configured;
  wgmma_floor_kernel<<<ctas, kThreadsPerCta, kSharedBytes, stream>>>(first, second, sink);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu::tensor_floor
