// Bandwidth-bound and small beside the GEMM it feeds: a 2816-row chunk of
// x_t at H = 4096 is 23 MB read (twice; the second read mostly from L2) and
// 11.5 MB written, ~10 µs at the H200's copy bandwidth against ~6 ms of
// teacher GEMM. Rows whose bf16 elements are 16-byte aligned move 8
// elements a thread (16-byte loads, 8-byte stores); others go element by
// element.
#include "kernels/lm_head/fused/e4m3_quantize.hpp"

#include <stdexcept>
#include <string>

#include <cuda_fp8.h>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu::fused {

namespace {

constexpr int kThreads = 256;
constexpr float kE4m3Max = 448.0f;

// The block's maximum of `value` (>= 0), returned to every thread.
__device__ float block_max(float value) {
  __shared__ float warp_max[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  if (lane == 0) warp_max[warp] = value;
  __syncthreads();
  value = lane < kThreads / 32 ? warp_max[lane] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

__device__ std::uint8_t to_e4m3(float x, float scale) {
  return static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(__fdiv_rn(x, scale), __NV_SATFINITE, __NV_E4M3));
}

template <bool kVector> __global__ void quantize_rows_kernel(RowQuantization q) {
  const std::int64_t row = blockIdx.x;
  std::uint8_t *out = q.codes + row * q.ld_codes;
  if (row >= q.rows) { // a padding row
    for (std::int64_t k = threadIdx.x; k < q.ld_codes; k += kThreads) out[k] = 0;
    if (threadIdx.x == 0) q.scales[row] = 1.0f;
    return;
  }
  const __nv_bfloat16 *in = q.input + row * q.ld_input;
  float amax = 0.0f;
  if constexpr (kVector) {
    const auto *vectors = reinterpret_cast<const uint4 *>(in);
    for (std::int64_t v = threadIdx.x; v < q.cols / 8; v += kThreads) {
      const uint4 raw = vectors[v];
      const auto *pairs = reinterpret_cast<const __nv_bfloat162 *>(&raw);
      for (int j = 0; j < 4; ++j) {
        const float2 f = __bfloat1622float2(pairs[j]);
        amax = fmaxf(amax, fmaxf(fabsf(f.x), fabsf(f.y)));
      }
    }
  } else {
    for (std::int64_t k = threadIdx.x; k < q.cols; k += kThreads)
      amax = fmaxf(amax, fabsf(__bfloat162float(in[k])));
  }
  amax = block_max(amax);
  const float scale = amax == 0.0f ? 1.0f : __fdiv_rn(amax, kE4m3Max);
  if (threadIdx.x == 0) q.scales[row] = scale;

  if constexpr (kVector) {
    const auto *vectors = reinterpret_cast<const uint4 *>(in);
    auto *out_vectors = reinterpret_cast<uint2 *>(out);
    for (std::int64_t v = threadIdx.x; v < q.cols / 8; v += kThreads) {
      const uint4 raw = vectors[v];
      const auto *pairs = reinterpret_cast<const __nv_bfloat162 *>(&raw);
      // Element 8v + j at byte j of the 8 (little-endian words).
      unsigned words[2] = {0u, 0u};
      for (int j = 0; j < 4; ++j) {
        const float2 f = __bfloat1622float2(pairs[j]);
        const unsigned pair = to_e4m3(f.x, scale) | (static_cast<unsigned>(to_e4m3(f.y, scale)) << 8);
        words[j / 2] |= pair << (16 * (j % 2));
      }
      out_vectors[v] = make_uint2(words[0], words[1]);
    }
  } else {
    for (std::int64_t k = threadIdx.x; k < q.cols; k += kThreads)
      out[k] = to_e4m3(__bfloat162float(in[k]), scale);
  }
  for (std::int64_t k = q.cols + threadIdx.x; k < q.ld_codes; k += kThreads) out[k] = 0;
}

bool aligned(const void *pointer, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

} // namespace

void quantize_rows_e4m3(const RowQuantization &q, cudaStream_t stream) {
  if (q.rows < 0 || q.cols <= 0 || q.ld_input < q.cols || q.ld_codes < q.cols || q.ld_codes % 16 != 0 ||
      q.padded_rows < q.rows || q.padded_rows > 0x7fffffff || q.codes == nullptr || q.scales == nullptr ||
      (q.rows > 0 && q.input == nullptr))
    throw std::invalid_argument("quantize_rows_e4m3: bad shape (rows " + std::to_string(q.rows) + " of " +
                                std::to_string(q.padded_rows) + ", cols " + std::to_string(q.cols) + ", ld " +
                                std::to_string(q.ld_input) + " -> " + std::to_string(q.ld_codes) + ")");
  if (q.padded_rows == 0) return;
  // Whole 16-byte vectors of 8 elements in every row: the rows' starts and
  // lengths, and the codes' 8-byte groups.
  const bool vector = q.cols % 8 == 0 && q.ld_input % 8 == 0 && aligned(q.input, 16) && aligned(q.codes, 8);
  const auto blocks = static_cast<unsigned>(q.padded_rows);
  if (vector)
    quantize_rows_kernel<true><<<blocks, kThreads, 0, stream>>>(q);
  else
    quantize_rows_kernel<false><<<blocks, kThreads, 0, stream>>>(q);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu::fused
