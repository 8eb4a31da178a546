// The SFU's base-2 exponential and logarithm (one MUFU instruction each,
// denormals flushed), for kernels that work in base 2. The logit GEMM's
// row statistics and the row kernel that combines them use the same ex2.
#pragma once

namespace kibench::gpu {

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float lg2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

} // namespace kibench::gpu
