// The gradients leave the GEMMs as fp32 sums of G' = N G; these kernels
// apply the 1/N (read from the device: N is counted there) and round once
// to the output type. Rounding happens exactly once per output element.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "fused/token_count.hpp"

namespace kibench::gpu::fused {

// out[i] = bf16(in[i] / N) for i < count.
void scale_to_bf16(const float *in, __nv_bfloat16 *out, std::int64_t count, const TokenCount *n,
                   cudaStream_t stream);

// data[i] /= N (fp32, in place) for i < count.
void scale_in_place(float *data, std::int64_t count, const TokenCount *n, cudaStream_t stream);

} // namespace kibench::gpu::fused
