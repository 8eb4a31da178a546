// The superseded row kernel versions (row_loss_v1.cu, row_loss_v2.cu), the
// streaming study (row_loss_v5.cu) and the partly cached rows of
// row_loss_v6.cu, kept beside the shipped one (kernels/fused/row_loss_v3.cu) so the dev
// studies can check and time all three on the same chunks; fused runs
// them through FusedOptions::row_kernel. docs/perf.md (row-v1, row-v2) has
// their measurements.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/fused/row_loss.hpp"

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

// At most `vectors` of each CTA's slice in shared memory from the next
// launch on (-1: as many as fit), so the check covers the re-read path on
// small vocabularies.
void set_row_loss_v6_cache_limit(std::int64_t vectors);

// That limit for one scope (as many as fit again when it ends).
class RowLossV6CacheLimit {
public:
  explicit RowLossV6CacheLimit(std::int64_t vectors) { set_row_loss_v6_cache_limit(vectors); }
  ~RowLossV6CacheLimit() { set_row_loss_v6_cache_limit(-1); }
  RowLossV6CacheLimit(const RowLossV6CacheLimit &) = delete;
  RowLossV6CacheLimit &operator=(const RowLossV6CacheLimit &) = delete;
};

inline constexpr RowKernel kRowKernelV1{"v1", launch_row_loss_v1};
inline constexpr RowKernel kRowKernelV2{"v2", launch_row_loss_v2};
inline constexpr RowKernel kRowKernelV3{}; // the shipped one
inline constexpr RowKernel kRowKernelV5{"v5", launch_row_loss_v5};
inline constexpr RowKernel kRowKernelV6Pairs{"v6-2x1024", launch_row_loss_v6_pairs};
inline constexpr RowKernel kRowKernelV6Quads{"v6-4x512", launch_row_loss_v6_quads};

} // namespace kibench::gpu::fused
