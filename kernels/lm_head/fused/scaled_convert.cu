// Elementwise, bandwidth-bound: grad W's conversion reads 1.05 GB of fp32
// and writes 0.53 GB of bf16 at the seed size, so the aligned case moves
// four elements per thread (16-byte loads, 8-byte stores).
//
// The in-place conversion (the half of grad W accumulated in the output
// buffer) runs as stream-ordered stages over disjoint bytes, so no kernel
// needs to order reads before writes across its blocks; see
// in_place_conversion_stages for the index arithmetic. Every element is
// still read once as fp32 and rounded once: stage 0's temporary holds the
// rounded bf16, which the copy moves bit for bit.
#include "kernels/lm_head/fused/scaled_convert.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/fused/grad_weight_split.hpp"

namespace kibench::gpu::fused {

namespace {

constexpr int kThreads = 256;

__global__ void scale_to_bf16_vec4(const float4 *in, uint2 *out, std::int64_t vectors, const TokenCount *n) {
  const float s = n->inverse_float;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < vectors;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float4 v = __ldcs(in + i);
    uint2 packed;
    *reinterpret_cast<__nv_bfloat162 *>(&packed.x) = __floats2bfloat162_rn(v.x * s, v.y * s);
    *reinterpret_cast<__nv_bfloat162 *>(&packed.y) = __floats2bfloat162_rn(v.z * s, v.w * s);
    out[i] = packed;
  }
}

__global__ void scale_to_bf16_scalar(const float *in, __nv_bfloat16 *out, std::int64_t begin,
                                     std::int64_t count, const TokenCount *n) {
  const float s = n->inverse_float;
  for (std::int64_t i = begin + blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(in[i] * s);
}

__global__ void scale_in_place_kernel(float *data, std::int64_t count, const TokenCount *n) {
  const float s = n->inverse_float;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    data[i] *= s;
}

// Enough blocks to fill the GPU a few times over; the loops stride the rest.
unsigned grid_for(std::int64_t items) {
  const std::int64_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, 132 * 16));
}

bool aligned(const void *pointer, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

} // namespace

void scale_to_bf16(const float *in, __nv_bfloat16 *out, std::int64_t count, const TokenCount *n,
                   cudaStream_t stream) {
  if (count <= 0) return;
  std::int64_t done = 0;
  if (aligned(in, 16) && aligned(out, 8)) {
    const std::int64_t vectors = count / 4;
    if (vectors > 0) {
      scale_to_bf16_vec4<<<grid_for(vectors), kThreads, 0, stream>>>(
          reinterpret_cast<const float4 *>(in), reinterpret_cast<uint2 *>(out), vectors, n);
      CUDA_CHECK_LAUNCH();
    }
    done = vectors * 4;
  }
  if (done < count) {
    scale_to_bf16_scalar<<<grid_for(count - done), kThreads, 0, stream>>>(in, out, done, count, n);
    CUDA_CHECK_LAUNCH();
  }
}

void scale_to_bf16_in_place(float *data, std::int64_t count, __nv_bfloat16 *temp, std::int64_t temp_count,
                            std::int64_t first_stage, const TokenCount *n, cudaStream_t stream) {
  if (count <= 0) return;
  if (temp == nullptr || temp_count <= 0 || first_stage <= 0)
    throw std::invalid_argument("scale_to_bf16_in_place: needs a temporary and a non-empty first stage");
  // The same bytes as bf16: element i's result goes to out[i], i.e. bytes
  // [2i, 2i + 2), inside fp32 element i / 2's bytes [4(i/2), 4(i/2) + 4).
  auto *out = reinterpret_cast<__nv_bfloat16 *>(data);
  for (const ConversionStage &stage : in_place_conversion_stages(count, std::min(temp_count, first_stage))) {
    const std::int64_t size = stage.end - stage.begin;
    if (stage.through_temp) {
      // Reads bytes [4·begin, 4·end) and would write [2·begin, 2·end):
      // they overlap, so the kernel writes the temporary and the copy,
      // ordered after it on the stream, writes the buffer.
      scale_to_bf16(data + stage.begin, temp, size, n, stream);
      CUDA_CHECK(cudaMemcpyAsync(out + stage.begin, temp, static_cast<std::size_t>(size) * sizeof(*temp),
                                 cudaMemcpyDeviceToDevice, stream));
    } else {
      // Reads bytes [4a, 4e), writes [2a, 2e) with e ≤ 2a: disjoint, and
      // [2a, 2e) ⊆ [2a, 4a) holds fp32 elements [a/2, a), already converted.
      scale_to_bf16(data + stage.begin, out + stage.begin, size, n, stream);
    }
  }
}

void scale_in_place(float *data, std::int64_t count, const TokenCount *n, cudaStream_t stream) {
  if (count <= 0) return;
  scale_in_place_kernel<<<grid_for(count), kThreads, 0, stream>>>(data, count, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace kibench::gpu::fused
