// Error statistics of one output tensor against its reference, computed on
// the GPU: the seed case's gradients hold 0.27 G elements, too many to copy
// to the host and walk there. Either side may be on the host or the device
// and of any ElementType (host tensors are staged to the device first); the
// reference is normally the fp64 oracle's. `passed` is left for
// apply_policy (lib/correctness/correctness.hpp).
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "lib/correctness/correctness.hpp"

namespace kibench::gpu {

// max |out − ref|, ||out − ref||₂ / ||ref||₂ and ||ref||₂ accumulated in
// fp64 in a fixed order (deterministic), with compare_host's semantics: an
// element where out or ref is NaN/Inf counts in nonfinite (the verdict
// fails) and stays out of the norms. rel_l2_error is 0 when both are zero,
// inf when only ref is. Throws std::invalid_argument on a count mismatch.
ErrorStats compare_device(std::string output, const TensorRef &out, const TensorRef &ref,
                          cudaStream_t stream = nullptr);

} // namespace kibench::gpu
