// kibench's own Hopper GEMM (kernels/lm_head/fused/abt_gemm.hpp) against a host
// fp64 product and against cuBLASLt: ragged shapes in all three
// dimensions, padded row strides, every output written and nothing else.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <cuda_bf16.h>

#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/lm_head/fused/abt_gemm.hpp"
#include "test/test_gpu_matrix.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;
using namespace kibench::gpu;
using namespace kibench::test;

namespace {

// [rows, columns] in a buffer of row stride ld; the padding holds `pad`.
Matrix strided(const Matrix &dense, std::int64_t rows, std::int64_t columns, std::int64_t ld,
               __nv_bfloat16 pad) {
  Matrix out;
  out.bf16.assign(static_cast<std::size_t>(rows * ld), pad);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < columns; ++c)
      out.bf16[static_cast<std::size_t>(r * ld + c)] = dense.bf16[static_cast<std::size_t>(r * columns + c)];
  return out;
}

std::uint16_t bits(__nv_bfloat16 v) {
  std::uint16_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

} // namespace

TEST_CASE("abt_gemm matches a host fp64 product on ragged, strided shapes", "[gpu][gemm]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  DeviceAllocator allocator("test-abt-gemm");
  Stream stream;
  std::mt19937_64 rng(7);
  struct Case {
    std::int64_t m, n, k, lda, ldb, ldc;
  };
  // One tile exactly; everything ragged (k not a multiple of 64, m of 128,
  // n of 192 and 256); an odd number of row tiles (a cluster's second CTA has no
  // rows); several row and column tiles with padded strides; one row.
  const Case cases[] = {{128, 192, 64, 64, 64, 192},
                        {37, 296, 72, 72, 72, 304},
                        {300, 704, 1000, 1008, 1016, 712},
                        {520, 392, 136, 136, 136, 392},
                        {1, 8, 8, 8, 8, 16}};
  const int cluster = GENERATE(1, 2);
  const auto tile = GENERATE(gemm::AbtTile::n192_stages4, gemm::AbtTile::n256_stages3);
  // The default grouping (one group on these shapes), and groups of three
  // row tiles, whose last group is shorter.
  const int group_rows = GENERATE(0, 3);
  for (const Case &c : cases) {
    INFO("m=" << c.m << " n=" << c.n << " k=" << c.k << " cluster " << cluster << " tile "
              << static_cast<int>(tile) << " group rows " << group_rows);
    const Matrix a = random_matrix(static_cast<std::size_t>(c.m * c.k), rng);
    const Matrix b = random_matrix(static_cast<std::size_t>(c.n * c.k), rng);
    const __nv_bfloat16 poison = __ushort_as_bfloat16(0xFFFF); // NaN
    const auto da = upload(allocator, strided(a, c.m, c.k, c.lda, poison).bf16);
    const auto db = upload(allocator, strided(b, c.n, c.k, c.ldb, poison).bf16);
    DeviceBuffer<__nv_bfloat16> dc(allocator, static_cast<std::size_t>(c.m * c.ldc));
    CUDA_CHECK(cudaMemset(dc.data(), 0xFF, dc.bytes()));
    const gemm::AbtGemm g{.m = c.m,
                          .n = c.n,
                          .k = c.k,
                          .a = da.data(),
                          .lda = c.lda,
                          .b = db.data(),
                          .ldb = c.ldb,
                          .c = dc.data(),
                          .ldc = c.ldc,
                          .cluster = cluster,
                          .tile = tile,
                          .group_rows = group_rows};
    REQUIRE(gemm::abt_gemm_supported(g));
    gemm::abt_gemm(g, sm_count(), stream);
    stream.synchronize();
    const auto out = download(dc);
    const auto ref = host_product(a.values, false, b.values, true, c.m, c.n, c.k);
    const double error = relative_error(out, c.ldc, ref, c.m, c.n);
    CHECK(error < 4e-3); // the bf16 rounding of C
    std::size_t unwritten = 0, overwritten = 0;
    for (std::int64_t r = 0; r < c.m; ++r)
      for (std::int64_t col = 0; col < c.ldc; ++col) {
        const bool nan = std::isnan(__bfloat162float(out[static_cast<std::size_t>(r * c.ldc + col)]));
        if (col < c.n && nan) ++unwritten;
        if (col >= c.n && bits(out[static_cast<std::size_t>(r * c.ldc + col)]) != 0xFFFF) ++overwritten;
      }
    CHECK(unwritten == 0);
    CHECK(overwritten == 0);
  }
}

TEST_CASE("abt_gemm's row statistics are those of its bf16 output", "[gpu][gemm]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  DeviceAllocator allocator("test-abt-gemm");
  Stream stream;
  std::mt19937_64 rng(5);
  struct Case {
    std::int64_t m, n, k, columns; // statistics over the first `columns` of n
    float scale;
  };
  // Ragged rows and a partial last column tile; columns short of n, so the
  // last tile counts some of its columns and the one before none past
  // them; the softmax scale of tau = 0.7 and a negative one; many tiles.
  const float log2e = 1.4426950408889634f;
  const Case cases[] = {{300, 704, 200, 704, log2e},
                        {130, 1024, 72, 700, log2e / 0.7f},
                        {64, 776, 136, 520, -log2e},
                        {520, 5120, 264, 5117, log2e}};
  const int cluster = GENERATE(1, 2);
  for (const Case &c : cases) {
    INFO("m=" << c.m << " n=" << c.n << " k=" << c.k << " columns " << c.columns << " cluster " << cluster);
    Matrix a = random_matrix(static_cast<std::size_t>(c.m * c.k), rng);
    const Matrix b = random_matrix(static_cast<std::size_t>(c.n * c.k), rng);
    const auto da = upload(allocator, a.bf16), db = upload(allocator, b.bf16);
    DeviceBuffer<__nv_bfloat16> dc(allocator, static_cast<std::size_t>(c.m * c.n));
    const std::int64_t tiles = gemm::abt_gemm_column_tiles(c.n), stats_ld = tiles + 3;
    DeviceBuffer<float2> stats(allocator, static_cast<std::size_t>((c.m + 1) * stats_ld));
    CUDA_CHECK(cudaMemset(stats.data(), 0xFF, stats.bytes())); // NaN: written or not
    const gemm::AbtGemm g{.m = c.m,
                          .n = c.n,
                          .k = c.k,
                          .a = da.data(),
                          .lda = c.k,
                          .b = db.data(),
                          .ldb = c.k,
                          .c = dc.data(),
                          .ldc = c.n,
                          .cluster = cluster,
                          .row_stats = stats.data(),
                          .stats_ld = stats_ld,
                          .stats_columns = c.columns,
                          .stats_scale = c.scale};
    REQUIRE(gemm::abt_gemm_supported(g));
    gemm::abt_gemm(g, sm_count(), stream);
    stream.synchronize();
    const auto out = download(dc);
    const auto got = download(stats);
    double worst_sum = 0.0;
    std::size_t wrong_max = 0, written_outside = 0;
    for (std::int64_t r = 0; r <= c.m; ++r)
      for (std::int64_t j = 0; j < stats_ld; ++j) {
        const float2 v = got[static_cast<std::size_t>(r * stats_ld + j)];
        if (r == c.m || j >= tiles) { // no such row or tile: untouched
          if (!std::isnan(v.x) || !std::isnan(v.y)) ++written_outside;
          continue;
        }
        float m = -INFINITY;
        for (std::int64_t col = j * 256; col < std::min((j + 1) * 256, c.columns); ++col)
          m = std::max(m, __bfloat162float(out[static_cast<std::size_t>(r * c.n + col)]) * c.scale);
        double sum = 0.0;
        if (m != -INFINITY)
          for (std::int64_t col = j * 256; col < std::min((j + 1) * 256, c.columns); ++col)
            sum += std::exp2(static_cast<double>(
                                 __bfloat162float(out[static_cast<std::size_t>(r * c.n + col)]) * c.scale) -
                             m);
        if (!(v.x == m)) ++wrong_max; // the same fp32 products: exactly the same maximum
        const double error = sum == 0.0 ? std::abs(v.y) : std::abs(v.y - sum) / sum;
        worst_sum = std::max(worst_sum, std::isnan(error) ? 1.0 : error);
      }
    CHECK(wrong_max == 0);
    CHECK(written_outside == 0);
    CHECK(worst_sum < 1e-5); // ex2.approx and two fp32 chains of at most 128 terms each
  }
}

TEST_CASE("abt_gemm agrees with cuBLASLt on a logit-shaped product", "[gpu][gemm]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  DeviceAllocator allocator("test-abt-gemm");
  CublasLt blas(allocator);
  Stream stream;
  std::mt19937_64 rng(11);
  const std::int64_t m = 1000, n = 5000, k = 2048;
  const Matrix a = random_matrix(static_cast<std::size_t>(m * k), rng);
  const Matrix b = random_matrix(static_cast<std::size_t>(n * k), rng);
  const auto da = upload(allocator, a.bf16), db = upload(allocator, b.bf16);
  DeviceBuffer<__nv_bfloat16> ours(allocator, static_cast<std::size_t>(m * n)),
      theirs(allocator, static_cast<std::size_t>(m * n));
  const auto tile = GENERATE(gemm::AbtTile::n192_stages4, gemm::AbtTile::n256_stages3);
  INFO("tile " << static_cast<int>(tile));
  CUDA_CHECK(cudaMemset(ours.data(), 0xFF, ours.bytes()));
  gemm::abt_gemm({.m = m,
                  .n = n,
                  .k = k,
                  .a = da.data(),
                  .lda = k,
                  .b = db.data(),
                  .ldb = k,
                  .c = ours.data(),
                  .ldc = n,
                  .tile = tile},
                 sm_count(), stream);
  blas.matmul(gemm_abt(m, n, k, da.data(), db.data(), theirs.data()), stream);
  stream.synchronize();
  const auto x = download(ours), y = download(theirs);
  double diff = 0.0, norm = 0.0;
  std::size_t apart = 0; // more than one bf16 step apart
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double u = as_double(x[i]), v = as_double(y[i]);
    diff += (u - v) * (u - v);
    norm += v * v;
    if (std::abs(u - v) > std::abs(v) * 0x1p-7 + 1e-30) ++apart;
  }
  // Both sum in fp32 and round once; only the order of the sums differs,
  // so results differ by at most a rounding step, and rarely.
  CHECK(std::sqrt(diff / norm) < 1e-3);
  CHECK(apart == 0);
}

TEST_CASE("abt_gemm refuses operands TMA cannot address", "[gpu][gemm]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  DeviceAllocator allocator("test-abt-gemm");
  DeviceBuffer<__nv_bfloat16> a(allocator, 64 * 64), c(allocator, 64 * 64);
  gemm::AbtGemm g{.m = 30,
                  .n = 32,
                  .k = 30,
                  .a = a.data(),
                  .lda = 30,
                  .b = a.data(),
                  .ldb = 30,
                  .c = c.data(),
                  .ldc = 30};
  CHECK_FALSE(gemm::abt_gemm_supported(g)); // a row of 60 bytes: not whole 16-byte units
  CHECK_THROWS_AS(gemm::abt_gemm(g, 1, nullptr), std::invalid_argument);
  g.lda = g.ldb = 32;
  CHECK_FALSE(gemm::abt_gemm_supported(g)); // C is stored by TMA too
  g.ldc = 32;
  CHECK(gemm::abt_gemm_supported(g));
  g.c = c.data() + 4; // 8 bytes in: not 16-byte aligned
  CHECK_FALSE(gemm::abt_gemm_supported(g));
  g.c = c.data();
  g.n = 28; // TMA stores whole 16-byte units: a row of 56 bytes would spill into the next 8
  CHECK_FALSE(gemm::abt_gemm_supported(g));
  g.n = 32;
  g.cluster = 3;
  CHECK_FALSE(gemm::abt_gemm_supported(g));
  g.cluster = 2;
  DeviceBuffer<float2> stats(allocator, 64);
  g.row_stats = stats.data();
  g.stats_ld = 1;
  g.stats_columns = 32;
  CHECK(gemm::abt_gemm_supported(g));
  g.stats_columns = 33; // more than n
  CHECK_FALSE(gemm::abt_gemm_supported(g));
  g.stats_columns = 0;
  CHECK_FALSE(gemm::abt_gemm_supported(g));
  g.stats_columns = 32;
  g.stats_ld = 0; // no room for the one column tile
  CHECK_FALSE(gemm::abt_gemm_supported(g));
  g.stats_ld = 1;
  g.tile = gemm::AbtTile::n192_stages4; // statistics come in 256-column tiles only
  CHECK_FALSE(gemm::abt_gemm_supported(g));
  g.tile = gemm::AbtTile::n256_stages3;
  g.b_rows = 33; // more rows of B than columns of C
  CHECK_FALSE(gemm::abt_gemm_supported(g));
  g.b_rows = 27;
  CHECK(gemm::abt_gemm_supported(g));
}

TEST_CASE("abt_gemm on an odd vocabulary: W's rows past V read as zeros, statistics over V", "[gpu][gemm]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  DeviceAllocator allocator("test-abt-gemm");
  Stream stream;
  std::mt19937_64 rng(11);
  const float log2e = 1.4426950408889634f;
  // V = 1003 (GPT-2-like remainder 3 of 8), 50 rows, K = 136; the buffer
  // is exactly V rounded up (1008) wide, and nothing lies past W's V rows
  // in its own allocation.
  for (const std::int64_t vocab : {1003, 517, 8}) {
    const std::int64_t m = 50, k = 136, ldc = (vocab + 7) / 8 * 8;
    INFO("V = " << vocab);
    const Matrix a = random_matrix(static_cast<std::size_t>(m * k), rng);
    const Matrix b = random_matrix(static_cast<std::size_t>(vocab * k), rng);
    const auto da = upload(allocator, a.bf16), db = upload(allocator, b.bf16);
    DeviceBuffer<__nv_bfloat16> dc(allocator, static_cast<std::size_t>(m * ldc));
    CUDA_CHECK(cudaMemset(dc.data(), 0xFF, dc.bytes()));
    const std::int64_t tiles = gemm::abt_gemm_column_tiles(vocab);
    DeviceBuffer<float2> stats(allocator, static_cast<std::size_t>(m * tiles));
    const gemm::AbtGemm g = gemm::logit_gemm_with_statistics(m, vocab, k, da.data(), db.data(), dc.data(),
                                                             ldc, stats.data(), log2e);
    REQUIRE(gemm::abt_gemm_supported(g));
    gemm::abt_gemm(g, sm_count(), stream);
    stream.synchronize();
    const auto out = download(dc);
    const auto got = download(stats);
    const auto ref = host_product(a.values, false, b.values, true, m, vocab, k);
    CHECK(relative_error(out, ldc, ref, m, vocab) < 4e-3);
    std::size_t nonzero_padding = 0, wrong_max = 0;
    double worst_sum = 0.0;
    for (std::int64_t r = 0; r < m; ++r) {
      for (std::int64_t col = vocab; col < ldc; ++col)
        if (__bfloat162float(out[static_cast<std::size_t>(r * ldc + col)]) != 0.0f) ++nonzero_padding;
      for (std::int64_t j = 0; j < tiles; ++j) {
        float mx = -INFINITY;
        for (std::int64_t col = j * 256; col < std::min((j + 1) * 256, vocab); ++col)
          mx = std::max(mx, __bfloat162float(out[static_cast<std::size_t>(r * ldc + col)]) * log2e);
        double sum = 0.0;
        for (std::int64_t col = j * 256; col < std::min((j + 1) * 256, vocab); ++col)
          sum += std::exp2(
              static_cast<double>(__bfloat162float(out[static_cast<std::size_t>(r * ldc + col)]) * log2e) -
              mx);
        const float2 v = got[static_cast<std::size_t>(r * tiles + j)];
        if (!(v.x == mx)) ++wrong_max;
        worst_sum = std::max(worst_sum, std::abs(v.y - sum) / sum);
      }
    }
    CHECK(nonzero_padding == 0);
    CHECK(wrong_max == 0);
    CHECK(worst_sum < 1e-5);
  }
}
