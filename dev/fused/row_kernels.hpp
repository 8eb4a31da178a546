// The superseded row kernel versions (row_loss_v1.cu, row_loss_v2.cu) and
// the streaming study (row_loss_v5.cu), kept beside the shipped one (kernels/fused/row_loss_v3.cu) so the dev
// studies can check and time all three on the same chunks; fused runs
// them through FusedOptions::row_kernel. docs/perf.md (row-v1, row-v2) has
// their measurements.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/fused/row_loss.hpp"

namespace kibench::gpu::fused {

void launch_row_loss_v1(const RowLossArgs &args, cudaStream_t stream);
void launch_row_loss_v2(const RowLossArgs &args, cudaStream_t stream);
// The streaming study (row_loss_v5.cu).
void launch_row_loss_v5(const RowLossArgs &args, cudaStream_t stream);

inline constexpr RowKernel kRowKernelV1{"v1", launch_row_loss_v1};
inline constexpr RowKernel kRowKernelV2{"v2", launch_row_loss_v2};
inline constexpr RowKernel kRowKernelV3{}; // the shipped one
inline constexpr RowKernel kRowKernelV5{"v5", launch_row_loss_v5};

} // namespace kibench::gpu::fused
