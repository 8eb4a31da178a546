// `cublas-floor`: the four GEMMs of a forward and backward alone — z_s,
// z_t, grad x_s and grad W_s at full size with bf16 outputs — timed in the
// same run as the implementations, so "how close to the GEMM floor" is
// measured on the same machine state. It computes no loss (computes_loss()
// is false): there is nothing to check.
#pragma once

#include <memory>

#include "lib/implementation/implementation.hpp"

namespace kibench {

std::unique_ptr<Implementation> make_cublas_floor();

} // namespace kibench
