#include "kernels/cuda/power_load.hpp"

#include <cstdint>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu {

namespace {

constexpr int kThreads = 256;     // 8 warps a block
constexpr int kBlocksPerSm = 2;   // 16 warps an SM: every tensor core kept busy
constexpr int kMmasPerCheck = 64; // between two readings of the global timer

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One m16n8k16 bf16 MMA with fp32 accumulation: d += a * b.
__device__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__global__ void __launch_bounds__(kThreads) load_kernel(std::uint64_t duration_ns, float *sink) {
  const std::uint64_t end = global_timer_ns() + duration_ns;
  // Operands change every step (a linear congruential sequence), since
  // switching bits is what draws power; exponent fixed at 2^-7 and only
  // the mantissas random, so the sums stay finite.
  unsigned state = 2654435761u * (blockIdx.x * kThreads + threadIdx.x + 1);
  float d0[4] = {}, d1[4] = {}; // two independent chains keep the tensor pipe full
  do {
#pragma unroll
    for (int i = 0; i < kMmasPerCheck / 2; ++i) {
      state = state * 1664525u + 1013904223u;
      const unsigned v = (state & 0x007f007fu) | 0x3c003c00u;
      const unsigned a[4] = {v, v ^ 0x00550055u, v ^ 0x002a002au, v ^ 0x007f007fu};
      const unsigned b[2] = {v ^ 0x00330033u, v ^ 0x004c004cu};
      mma_bf16(d0, a, b);
      mma_bf16(d1, a, b);
    }
  } while (global_timer_ns() < end);
  const float sum = d0[0] + d0[1] + d0[2] + d0[3] + d1[0] + d1[1] + d1[2] + d1[3];
  if (threadIdx.x == 0) sink[blockIdx.x] = sum;
}

int load_blocks(int device) {
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms * kBlocksPerSm;
}

} // namespace

PowerLoad::PowerLoad(DeviceAllocator &allocator, int device)
    : blocks_(load_blocks(device)), sink_(allocator, static_cast<std::size_t>(blocks_)) {}

void PowerLoad::enqueue(cudaStream_t stream, double seconds) {
  const auto duration_ns = static_cast<std::uint64_t>(seconds * 1e9);
  load_kernel<<<blocks_, kThreads, 0, stream>>>(duration_ns, sink_.data());
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu
