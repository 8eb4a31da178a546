// kibench's own Hopper GEMM (kernels/gemm/abt_gemm.hpp) against a host
// fp64 product and against cuBLASLt: ragged shapes in all three
// dimensions, padded row strides, every output written and nothing else.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include <cuda_bf16.h>

#include "cuda/cublaslt.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/stream.hpp"
#include "gemm/abt_gemm.hpp"
#include "test_gpu_matrix.hpp"
#include "test_gpu_support.hpp"

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
  // n of 192); an odd number of row tiles (a cluster's second CTA has no
  // rows); several row and column tiles with padded strides; one row.
  const Case cases[] = {{128, 192, 64, 64, 64, 192},
                        {37, 296, 72, 72, 72, 304},
                        {300, 704, 1000, 1008, 1016, 712},
                        {520, 392, 136, 136, 136, 392},
                        {1, 8, 8, 8, 8, 16}};
  const int cluster = GENERATE(1, 2);
  for (const Case &c : cases) {
    INFO("m=" << c.m << " n=" << c.n << " k=" << c.k << " cluster " << cluster);
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
                          .cluster = cluster};
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
  CUDA_CHECK(cudaMemset(ours.data(), 0xFF, ours.bytes()));
  gemm::abt_gemm({.m = m,
                  .n = n,
                  .k = k,
                  .a = da.data(),
                  .lda = k,
                  .b = db.data(),
                  .ldb = k,
                  .c = ours.data(),
                  .ldc = n},
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
}
