// The superseded row kernel versions (row_loss_v1.cu, row_loss_v2.cu), the
// streaming study (row_loss_v5.cu) and the partly cached rows of
// row_loss_v6.cu, kept beside the shipped one (kernels/lm_head/fused/row_kernel.cu) so the dev
// studies can check and time all three on the same chunks; fused runs
// them through FusedStudyHooks::row_kernel (kernels/lm_head/fused/study_hooks.hpp). docs/perf.md (row-v1, row-v2) has
// their measurements.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/lm_head/fused/row_loss.hpp"

namespace kibench::gpu::fused {

void launch_row_loss_v1(const RowLossArgs &args, cudaStream_t stream);
void launch_row_loss_v2(const RowLossArgs &args, cudaStream_t stream);
// The streaming study (row_loss_v5.cu).
void launch_row_loss_v5(const RowLossArgs &args, cudaStream_t stream);

// Rows over fewer CTAs, partly in shared memory (row_loss_v6.cu): clusters
// of 2 CTAs of 1024 threads, or of 4 CTAs of 512.
void launch_row_loss_v6_pairs(const RowLossArgs &args, cudaStream_t stream);
void launch_row_loss_v6_quads(const RowLossArgs &args, cudaStream_t stream);

// How version 6 lays out a row of `vocab` logits on the current GPU, for
// the studies to print: CTAs a row, threads a CTA, 16-byte vectors a CTA's
// slice has and keeps in shared memory, and clusters resident at once.
struct RowLossV6Layout {
  int ctas_per_row = 0, threads = 0;
  int slice_vectors = 0, cached_vectors = 0;
  std::size_t shared_bytes = 0;
  int resident_clusters = 0;
};
[[nodiscard]] RowLossV6Layout row_loss_v6_layout(std::int64_t vocab, int ctas_per_row);

// Limits for the study's launches (-1: none): at most `cache_vectors` of
// each CTA's slice in shared memory, so the check covers the re-read path
// on small vocabularies, and at most `clusters` clusters, so that each runs
// many rows of a short check (the row loop, the reductions' alternating
// exchange slots and the slice's reuse from row to row).
struct RowLossV6Limits {
  std::int64_t cache_vectors = -1;
  std::int64_t clusters = -1;
};
void set_row_loss_v6_limits(RowLossV6Limits limits);

// Those limits for one scope (none again when it ends).
class ScopedRowLossV6Limits {
public:
  explicit ScopedRowLossV6Limits(RowLossV6Limits limits) { set_row_loss_v6_limits(limits); }
  ~ScopedRowLossV6Limits() { set_row_loss_v6_limits({}); }
  ScopedRowLossV6Limits(const ScopedRowLossV6Limits &) = delete;
  ScopedRowLossV6Limits &operator=(const ScopedRowLossV6Limits &) = delete;
};

inline constexpr RowKernel kRowKernelV1{"v1", launch_row_loss_v1};
inline constexpr RowKernel kRowKernelV2{"v2", launch_row_loss_v2};
inline constexpr RowKernel kRowKernelV3{}; // the shipped one
inline constexpr RowKernel kRowKernelV5{"v5", launch_row_loss_v5};
inline constexpr RowKernel kRowKernelV6Pairs{"v6-2x1024", launch_row_loss_v6_pairs};
inline constexpr RowKernel kRowKernelV6Quads{"v6-4x512", launch_row_loss_v6_quads};

} // namespace kibench::gpu::fused
