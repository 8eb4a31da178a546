// The superseded row kernel versions (row_loss_v1.cu, row_loss_v2.cu,
// row_loss_v3.cu) and the streaming study (row_loss_v5.cu), kept beside
// the shipped one (kernels/lm_head/fused/row_kernel_v6.cu, row-v6) so the
// dev studies can check and time them all on the same chunks; fused runs
// them through FusedStudyHooks::row_kernel
// (kernels/lm_head/fused/study_hooks.hpp). docs/perf.md (row-v1 … row-v6)
// has their measurements.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/lm_head/fused/row_loss.hpp"

namespace kibench::gpu::fused {

void launch_row_loss_v1(const RowLossArgs &args, cudaStream_t stream);
void launch_row_loss_v2(const RowLossArgs &args, cudaStream_t stream);
// Row-v3 (row_loss_v3.cu), the shipped kernel before row-v6.
void launch_row_loss_v3(const RowLossArgs &args, cudaStream_t stream);
// The streaming study (row_loss_v5.cu).
void launch_row_loss_v5(const RowLossArgs &args, cudaStream_t stream);

inline constexpr RowKernel kRowKernelV1{"v1", launch_row_loss_v1};
inline constexpr RowKernel kRowKernelV2{"v2", launch_row_loss_v2};
// Row-v3 in every pass, as `fused` ran before row-v6.
inline constexpr RowKernel kRowKernelV3{"v3", launch_row_loss_v3};
inline constexpr RowKernel kRowKernelShipped{}; // row-v6 pairs
inline constexpr RowKernel kRowKernelV5{"v5", launch_row_loss_v5};
inline constexpr RowKernel kRowKernelV6Pairs{"v6-2x1024", launch_row_loss_v6_pairs};
inline constexpr RowKernel kRowKernelV6Quads{"v6-4x512", launch_row_loss_v6_quads};
inline constexpr RowKernel kRowKernelV6CompactPairs{"v6c-2x1024", launch_row_loss_v6_compact_pairs};
inline constexpr RowKernel kRowKernelV6CompactSingles{"v6c-1x1024", launch_row_loss_v6_compact_singles};
inline constexpr RowKernel kRowKernelV6CompactSingles512{"v6c-1x512", launch_row_loss_v6_compact_singles_512};
inline constexpr RowKernel kRowKernelV6CompactPairs512{"v6c-2x512", launch_row_loss_v6_compact_pairs_512};
// Four and eight rows an SM where a pass reads each vector once; the
// shipped kernel elsewhere.
inline constexpr RowKernel kRowKernelV6ReadOnce256{"v6f-1x256", launch_row_loss_v6_read_once_256};
inline constexpr RowKernel kRowKernelV6ReadOnce128{"v6f-1x128", launch_row_loss_v6_read_once_128};
inline constexpr RowKernel kRowKernelV6CompactSinglesFma2{"v6c-1x1024, fma ex2 2/8",
                                                          launch_row_loss_v6_compact_singles_fma2};
inline constexpr RowKernel kRowKernelV6CompactSinglesFma3{"v6c-1x1024, fma ex2 3/8",
                                                          launch_row_loss_v6_compact_singles_fma3};

} // namespace kibench::gpu::fused
