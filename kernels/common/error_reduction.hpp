// The device reduction behind compare_device (plain types; no JSON headers).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "lib/implementation/tensor_ref.hpp"

namespace kibench::gpu {

struct ErrorSums {
  // Over the elements where both out and ref are finite:
  double sum_sq_diff = 0.0;   // Σ (out − ref)²
  double sum_sq_ref = 0.0;    // Σ ref²
  double max_abs = 0.0;       // max |out − ref|
  std::int64_t nonfinite = 0; // elements where either is NaN/Inf
};

// Both pointers on the device, `count` elements each. Synchronizes `stream`.
ErrorSums reduce_errors(const void *out, ElementType out_type, const void *ref, ElementType ref_type,
                        std::int64_t count, cudaStream_t stream);

} // namespace kibench::gpu
