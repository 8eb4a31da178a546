// The device side of input generation: kernels that fill a buffer with the
// Philox element mapping of lib/inputs/philox.hpp (one launch per tensor).
// Plain parameters, so the launchers need no workload types.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace kibench::gpu {

// out[i] = bf16_rne(float(low + (high − low)·u_i)), u_i from seed and i.
void fill_uniform_bf16(__nv_bfloat16 *out, std::int64_t count, std::uint64_t seed, double low, double high,
                       cudaStream_t stream);

// out[i] = low + word_i mod (high − low), or ignore_index with probability
// ignore_fraction; *valid (device, zeroed by the caller) += targets kept.
void fill_targets(std::int64_t *out, std::int64_t count, std::uint64_t seed, std::int64_t low,
                  std::int64_t high, double ignore_fraction, std::int64_t ignore_index,
                  unsigned long long *valid, cudaStream_t stream);

} // namespace kibench::gpu
