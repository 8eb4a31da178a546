// Row kernel, version 6 (row_kernel_v6.cu): a row over a cluster of 2 CTAs
// of 1024 threads (or 4 of 512), twice row-v3's rows in flight, and only
// what fits of each slice in shared memory. `fused` runs it where a pass
// writes no G' (forward passes): there each logit is read once, and the
// extra rows in flight took the seed's row kernel from 2.65 to 2.02 ms
// (H100, docs/perf.md). With G' the re-read vectors cost what the rows in
// flight win, and row-v3 (row_kernel.cu) stays.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/lm_head/fused/row_loss.hpp"

namespace kibench::gpu::fused {

// Enqueues version 6 on `stream`: clusters of 2 CTAs of 1024 threads
// (pairs, what `fused` runs) or of 4 CTAs of 512 (quads, for the studies).
// Throws on a bad configuration, as launch_row_loss does.
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

// Limits for the checks' launches (-1: none): at most `cache_vectors` of
// each CTA's slice in shared memory, so a check covers the re-read path on
// small vocabularies, and at most `clusters` clusters, so that each runs
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

} // namespace kibench::gpu::fused
