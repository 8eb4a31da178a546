// The gradients leave the GEMMs as fp32 sums of G' = N G; these kernels
// apply the 1/N (read from the device: N is counted there) and round once
// to the output type. Rounding happens exactly once per output element.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "kernels/common/token_count.hpp"

namespace kibench::gpu::fused {

// out[i] = bf16(in[i] / N) for i < count. `in` and `out` must not overlap.
void scale_to_bf16(const float *in, __nv_bfloat16 *out, std::int64_t count, const TokenCount *n,
                   cudaStream_t stream);

// The same in place: fp32 element i at float index i of `data` becomes
// bf16(data[i] / N) at bf16 index i of the same bytes, for i < count (the
// fp32 grad W rows the fused path keeps in its bf16 output buffer). Runs
// the stages of in_place_conversion_stages (grad_weight_split.hpp), stage 0
// of n0 = min(count, temp_count, first_stage) elements through `temp`
// ([temp_count] bf16, free scratch not overlapping `data`), the others
// directly, each reading only bytes no earlier stage has written.
void scale_to_bf16_in_place(float *data, std::int64_t count, __nv_bfloat16 *temp, std::int64_t temp_count,
                            std::int64_t first_stage, const TokenCount *n, cudaStream_t stream);

// data[i] /= N (fp32, in place) for i < count.
void scale_in_place(float *data, std::int64_t count, const TokenCount *n, cudaStream_t stream);

} // namespace kibench::gpu::fused
