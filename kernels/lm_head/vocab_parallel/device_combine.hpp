// The element-wise steps of LocalDeviceCommunicator: into[i] =
// op(into[i], from[i]) for i < count, op as local_reduction.hpp's MaxOf or
// SumOf. Enqueued on `stream`; launch errors throw.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace kibench::vocab_parallel {

void combine_max(float *into, const float *from, std::size_t count, cudaStream_t stream);
void combine_sum(float *into, const float *from, std::size_t count, cudaStream_t stream);

} // namespace kibench::vocab_parallel
