// The loss from the per-row terms the row kernel wrote: one fixed-order
// fp64 sum over all T rows, divided by N. Nothing is accumulated with
// atomics, so the loss is bit-identical from run to run.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/common/token_count.hpp"

namespace kibench::gpu {

// *loss = (1/N) sum_i row_loss[i].
void sum_row_losses(const float *row_loss, std::int64_t tokens, const TokenCount *count, double *loss,
                    cudaStream_t stream);

} // namespace kibench::gpu
