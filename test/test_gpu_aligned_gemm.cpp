// matmul_aligned (kernels/cuda/aligned_gemm.hpp): a GEMM cut at the last
// multiple of 8 of each contiguous extent gives the product of the whole,
// for the three shapes fused runs (z = x Wᵀ, grad x = G W, grad W = Gᵀ x)
// with odd extents on every axis, padded strides, offset C and a bias, and
// beta = 1 accumulating onto what C holds.
#include <catch2/catch.hpp>

#include <random>

#include "kernels/cuda/aligned_gemm.hpp"
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/stream.hpp"
#include "test/test_gpu_matrix.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;
using namespace kibench::test;

namespace {

struct Shape {
  std::int64_t m, n, k;
  bool ta, tb;
};

} // namespace

TEST_CASE("matmul_aligned: cut GEMMs equal the whole product on odd extents", "[gpu][gemm]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  std::mt19937_64 rng(2024);
  DeviceAllocator allocator("aligned-gemm-test");
  gpu::CublasLt blas(allocator);
  gpu::Stream stream;
  const std::vector<Shape> shapes{
      {37, 1003, 64, false, true},  // z = x Wᵀ: n (the vocabulary) odd
      {37, 64, 1003, false, false}, // grad x = G W: k odd
      {1003, 64, 37, true, false},  // grad W = Gᵀ x: m odd
      {5, 13, 7, true, true},       // every extent odd and below 16
      {1001, 1003, 1005, false, false},
  };
  for (const Shape &s : shapes) {
    for (const double beta : {0.0, 1.0}) {
      INFO("m " << s.m << " n " << s.n << " k " << s.k << " ta " << s.ta << " tb " << s.tb << " beta "
                << beta);
      const Matrix a = random_matrix(static_cast<std::size_t>(s.m * s.k), rng);
      const Matrix b = random_matrix(static_cast<std::size_t>(s.k * s.n), rng);
      const Matrix bias = random_matrix(static_cast<std::size_t>(s.n), rng);
      // Padded strides: the operands as fused holds them.
      const std::int64_t lda = gpu::aligned_stride(s.ta ? s.m : s.k);
      const std::int64_t ldb = gpu::aligned_stride(s.tb ? s.k : s.n);
      const std::int64_t ldc = gpu::aligned_stride(s.n);
      const std::int64_t a_rows = s.ta ? s.k : s.m, a_cols = s.ta ? s.m : s.k;
      const std::int64_t b_rows = s.tb ? s.n : s.k, b_cols = s.tb ? s.k : s.n;
      std::vector<__nv_bfloat16> a_host(static_cast<std::size_t>(a_rows * lda));
      std::vector<__nv_bfloat16> b_host(static_cast<std::size_t>(b_rows * ldb));
      for (std::int64_t r = 0; r < a_rows; ++r)
        for (std::int64_t c = 0; c < a_cols; ++c)
          a_host[static_cast<std::size_t>(r * lda + c)] = a.bf16[static_cast<std::size_t>(r * a_cols + c)];
      for (std::int64_t r = 0; r < b_rows; ++r)
        for (std::int64_t c = 0; c < b_cols; ++c)
          b_host[static_cast<std::size_t>(r * ldb + c)] = b.bf16[static_cast<std::size_t>(r * b_cols + c)];
      std::vector<float> bias_host(bias.values.begin(), bias.values.end());
      std::vector<float> c_host(static_cast<std::size_t>(s.m * ldc), 0.5f);
      const auto da = upload(allocator, a_host);
      const auto db = upload(allocator, b_host);
      const auto dbias = upload(allocator, bias_host);
      auto dc = upload(allocator, c_host);

      gpu::RowMajorGemm g{.m = s.m,
                          .n = s.n,
                          .k = s.k,
                          .a = da.data(),
                          .transpose_a = s.ta,
                          .lda = lda,
                          .b = db.data(),
                          .transpose_b = s.tb,
                          .ldb = ldb,
                          .c = dc.data(),
                          .ldc = ldc,
                          .output_type = ElementType::fp32,
                          .beta = beta,
                          .bias = beta == 0.0 ? dbias.data() : nullptr};
      gpu::matmul_aligned(blas, g, stream);
      stream.synchronize();

      std::vector<double> ref = host_product(a.values, s.ta, b.values, s.tb, s.m, s.n, s.k);
      for (std::int64_t i = 0; i < s.m; ++i)
        for (std::int64_t j = 0; j < s.n; ++j)
          ref[static_cast<std::size_t>(i * s.n + j)] +=
              beta == 0.0 ? bias.values[static_cast<std::size_t>(j)] : 0.5;
      const std::vector<float> out = download(dc);
      CHECK(relative_error(out, ldc, ref, s.m, s.n) < 1e-6);
      // Padding columns are never written.
      for (std::int64_t i = 0; i < s.m; ++i)
        for (std::int64_t j = s.n; j < ldc; ++j) CHECK(out[static_cast<std::size_t>(i * ldc + j)] == 0.5f);
    }
  }
}

TEST_CASE("aligned_stride rounds up to whole 16-byte rows", "[gemm]") {
  CHECK(gpu::aligned_stride(1) == 8);
  CHECK(gpu::aligned_stride(8) == 8);
  CHECK(gpu::aligned_stride(50257) == 50264);
  CHECK(gpu::aligned_stride(128256) == 128256);
}
