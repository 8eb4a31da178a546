// kibench's own Hopper GEMM for the logit products, z = x · Wᵀ:
//   C[m, n] = A[m, k] · B[n, k]ᵀ     bf16 in, fp32 accumulation, bf16 out,
// every matrix row-major (both operands K-major, as x and W are stored).
//
// One persistent CTA per SM, warp-specialized: a producer warpgroup whose
// one thread streams 128 x 64 tiles of A and 192 x 64 tiles of B into a
// four-stage shared-memory ring with TMA, and two consumer warpgroups that
// each multiply 64 rows of the CTA's 128 x 192 output tile with wgmma
// m64n192k16, round it to bf16 into shared memory and have TMA store it
// while they go on to the next tile. Full and empty mbarriers per stage
// hand stages back and forth; the producer runs ahead into the next tile.
// CTAs pair up in clusters of two on adjacent row tiles, each fetching
// half of the shared B tile for both (TMA multicast; clusters of one on
// request). Tiles are visited in groups of 16
// row tiles (all of a group's row tiles for one column tile, then the next
// column tile), so what runs at once shares its operands in L2.
//
// It exists to carry loss work in its epilogue where cuBLASLt cannot, and
// to be measured against cuBLASLt's own kernels (docs/perf.md).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace kibench::gpu::gemm {

struct AbtGemm {
  std::int64_t m = 0, n = 0, k = 0;
  const void *a = nullptr; // [m, k], row stride lda
  std::int64_t lda = 0;
  const void *b = nullptr; // [n, k], row stride ldb
  std::int64_t ldb = 0;
  void *c = nullptr; // [m, n], row stride ldc
  std::int64_t ldc = 0;
  // CTAs a cluster, taking adjacent row tiles and sharing each B tile
  // (TMA multicast): 1 or 2. Two moves a third less through L2, which the
  // single-CTA kernel keeps 85 % busy: 2-4 % faster on the H200.
  int cluster = 2;
};

// Whether abt_gemm takes these operands: shapes within int32, n a multiple
// of 8, A, B and C 16-byte aligned with row strides of whole 16-byte units
// (TMA moves whole 16-byte units of a row), and a cluster of 1 or 2.
[[nodiscard]] bool abt_gemm_supported(const AbtGemm &g);

// The CTAs abt_gemm launches for a cluster size on `ctas` SMs: as many
// clusters as fit at once (persistent), within `ctas`.
[[nodiscard]] int abt_gemm_resident_ctas(int cluster, int ctas);

// Enqueues the product on `stream`, on at most `ctas` CTAs (the SM count).
// Throws std::invalid_argument where abt_gemm_supported is false.
void abt_gemm(const AbtGemm &g, int ctas, cudaStream_t stream);

} // namespace kibench::gpu::gemm
