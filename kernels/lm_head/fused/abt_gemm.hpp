// kibench's own Hopper GEMM for the logit products, z = x · Wᵀ:
//   C[m, n] = A[m, k] · B[n, k]ᵀ     bf16 in, fp32 accumulation, bf16 out,
// every matrix row-major (both operands K-major, as x and W are stored).
//
// One persistent CTA per SM, warp-specialized: a producer warpgroup whose
// one thread streams 128 x 64 tiles of A and 256 x 64 tiles of B (or 192)
// into a three-stage (four) shared-memory ring with TMA, and two consumer
// warpgroups that each multiply 64 rows of the CTA's 128 x 256 output tile
// with wgmma m64n256k16, round it to bf16 into shared memory and have TMA
// store it while they go on to the next tile. Full and empty mbarriers per
// stage hand stages back and forth; the producer runs ahead into the next
// tile. CTAs pair up in clusters of two on adjacent row tiles, each
// fetching half of the shared B tile for both (TMA multicast; clusters of
// one on request). Tiles are visited in groups of row tiles (all of a
// group's row tiles for one column tile, then the next column tile), so
// what runs at once shares its operands in L2.
//
// It exists to carry loss work in its epilogue where cuBLASLt cannot, and
// to be measured against cuBLASLt's own kernels (docs/perf.md).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace kibench::gpu::gemm {

// The CTA's output tile (128 rows by 192 or 256 columns) and the depth of
// its operand ring. A 256-wide tile moves 14 % fewer operand bytes from L2
// a FLOP than a 192-wide one (A once per 256 columns, B shared by the
// cluster) but leaves room for three stages only beside its staging
// buffers: 1-2 % faster on the H200 (docs/perf.md).
enum class AbtTile { n192_stages4, n256_stages3 };

struct AbtGemm {
  std::int64_t m = 0, n = 0, k = 0;
  const void *a = nullptr; // [m, k], row stride lda
  std::int64_t lda = 0;
  const void *b = nullptr; // [n, k], row stride ldb
  std::int64_t ldb = 0;
  void *c = nullptr; // [m, n], row stride ldc
  std::int64_t ldc = 0;
  // Rows of B that exist, at most n; 0: n. TMA reads the rows past them as
  // zeros, so C's columns [b_rows, n) are 0: a vocabulary that is no
  // multiple of 8 runs as n = V rounded up to whole 16-byte rows of C (the
  // padding columns of a logit buffer), with W's V rows as they are.
  std::int64_t b_rows = 0;
  // CTAs a cluster, taking adjacent row tiles and sharing each B tile
  // (TMA multicast): 1 or 2. Two moves a third less through L2, which the
  // single-CTA kernel keeps 85 % busy: 2-4 % faster on the H200.
  int cluster = 2;
  AbtTile tile = AbtTile::n256_stages3;
  // Row tiles visited together (all their column tiles, row fastest), 0:
  // abt_gemm_group_rows(k). A group's A rows stay in L2 while B streams
  // through once per group, so fewer, larger groups read B from HBM fewer
  // times, as long as the group's A fits in L2 beside it.
  int group_rows = 0;
  // Optional row statistics of C as rounded to bf16 (tile n256_stages3
  // only), for a softmax over each row: for row r and column tile j (256
  // columns), of x = stats_scale · C[r, c] over the tile's columns c <
  // stats_columns,
  //   row_stats[r · stats_ld + j] = (max x, Σ 2^(x − max x)),
  // (-inf, 0) where the tile has no such column. Written by warps that
  // otherwise idle, while the next tile's products run.
  float2 *row_stats = nullptr;
  std::int64_t stats_ld = 0; // >= abt_gemm_column_tiles(n)
  std::int64_t stats_columns = 0;
  float stats_scale = 1.0f;
};

// Column tiles of 256 a row statistics row holds for n columns.
[[nodiscard]] constexpr std::int64_t abt_gemm_column_tiles(std::int64_t n) {
  return (n + 255) / 256;
}

// The default group: as many 128-row tiles as fit 24 MiB of A (K = 2048:
// 48 tiles, so a 2816-row chunk reads W from HBM once), at least 2.
[[nodiscard]] int abt_gemm_group_rows(std::int64_t k);

// A logit product z = x · Wᵀ, x [m, k] and W [vocab, k] dense, z [m, vocab]
// with row stride ldc (at least vocab rounded up to a multiple of 8, the
// columns written: those past vocab get 0), writing the row statistics of
// z · scale over the vocab columns into stats [m, abt_gemm_column_tiles(vocab)]:
// how the fused row kernel takes its logits (scale log2 e at tau = 1).
[[nodiscard]] inline AbtGemm logit_gemm_with_statistics(std::int64_t m, std::int64_t vocab, std::int64_t k,
                                                        const void *x, const void *weight, void *z,
                                                        std::int64_t ldc, float2 *stats, float scale) {
  const std::int64_t n = (vocab + 7) / 8 * 8; // a multiple of 256 is one of 8: the same column tiles
  return {.m = m,
          .n = n,
          .k = k,
          .a = x,
          .lda = k,
          .b = weight,
          .ldb = k,
          .c = z,
          .ldc = ldc,
          .b_rows = vocab,
          .row_stats = stats,
          .stats_ld = abt_gemm_column_tiles(vocab),
          .stats_columns = vocab,
          .stats_scale = scale};
}

// Whether abt_gemm takes these operands: shapes within int32, n a multiple
// of 8, 0 <= b_rows <= n, A, B and C 16-byte aligned with row strides of whole 16-byte units
// (TMA moves whole 16-byte units of a row), a cluster of 1 or 2, and row
// statistics only with 256-column tiles, 0 < stats_columns <= n and room
// for every column tile in a statistics row.
[[nodiscard]] bool abt_gemm_supported(const AbtGemm &g);

// The CTAs abt_gemm launches for a tile and cluster size on `ctas` SMs: as
// many clusters as fit at once (persistent), within `ctas`.
[[nodiscard]] int abt_gemm_resident_ctas(AbtTile tile, int cluster, int ctas);

// Enqueues the product on `stream`, on at most `ctas` CTAs (the SM count).
// Throws std::invalid_argument where abt_gemm_supported is false.
void abt_gemm(const AbtGemm &g, int ctas, cudaStream_t stream);

} // namespace kibench::gpu::gemm
