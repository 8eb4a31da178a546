// The CUDA plumbing under every GPU implementation: availability, the
// tracking allocator, the row-major cuBLASLt wrapper (against a host fp64
// product), the device comparison (against the host one), the event timer,
// the L2 flush and the environment probe.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include <cuda_bf16.h>

#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_event_timer.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/gpu_environment.hpp"
#include "kernels/cuda/l2_flush.hpp"
#include "kernels/cuda/nvml.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/common/device_compare.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/inputs/bf16.hpp"
#include "test/test_gpu_matrix.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;
using namespace kibench::gpu;
using namespace kibench::test;

TEST_CASE("gpu_available answers without crashing, with a reason when there is none", "[gpu][plumbing]") {
  const GpuAvailability &a = gpu_availability();
  if (a.available) {
    CHECK(a.device_count >= 1);
    CHECK(a.reason.empty());
  } else {
    CHECK(a.device_count == 0);
    CHECK_FALSE(a.reason.empty());
  }
  CHECK(&gpu_availability() == &a); // probed once
}

TEST_CASE("the tracking allocator counts live and peak bytes by tag", "[gpu][plumbing]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const std::uint64_t process_before = DeviceAllocator::process().live_bytes();
  DeviceAllocator allocator("test");
  {
    DeviceBuffer<float> a(allocator, 1000, MemoryTag::input); // 4000 -> 4096
    DeviceBuffer<double> b(allocator, 3, MemoryTag::output);  // 24 -> 512
    DeviceBuffer<std::byte> c(allocator, 1 << 20, MemoryTag::workspace);
    CHECK(allocator.live_bytes(MemoryTag::input) == 4096);
    CHECK(allocator.live_bytes(MemoryTag::output) == 512);
    CHECK(allocator.live_bytes(MemoryTag::workspace) == (1u << 20));
    CHECK(allocator.live_bytes() == 4096 + 512 + (1u << 20));
    CHECK(DeviceAllocator::process().live_bytes() == process_before + allocator.live_bytes());
    c.reset();
    CHECK(allocator.live_bytes() == 4096 + 512);
    CHECK(allocator.peak_bytes() == 4096 + 512 + (1u << 20));
    allocator.reset_peak();
    CHECK(allocator.peak_bytes() == 4096 + 512);
    DeviceBuffer<float> moved = std::move(a);
    CHECK(allocator.live_bytes(MemoryTag::input) == 4096);
    CHECK(moved.view().count == 1000);
    CHECK(moved.view().type == ElementType::fp32);
  }
  CHECK(allocator.live_bytes() == 0);
  CHECK(DeviceAllocator::process().live_bytes() == process_before);

  SECTION("a caching allocator hands a freed block back to the next allocation of its size") {
    DeviceAllocator caching("test-caching", true);
    void *first = nullptr;
    {
      DeviceBuffer<float> x(caching, 4096);
      first = x.data();
    }
    CHECK(caching.live_bytes() == 0);
    // Kept in the segment the pool took for it, rounded as PyTorch rounds.
    CHECK(caching.reserved_bytes() == BlockPool::kSegmentRounding);
    DeviceBuffer<float> y(caching, 4096);
    CHECK(y.data() == first);
    y.reset();
    caching.trim();
    CHECK(caching.reserved_bytes() == 0);
  }
  SECTION("an impossible allocation throws with the sizes") {
    CHECK_THROWS_WITH(DeviceBuffer<std::byte>(allocator, std::size_t{1} << 50),
                      Catch::Contains("cudaMalloc of") && Catch::Contains("bytes free"));
    CHECK(allocator.live_bytes() == 0);
  }
}

namespace {

// Operands large enough that cuBLASLt's heuristic offers more than one
// algorithm, for the tuning sections: C[256, 384] = A[256, 512] · B[384, 512]ᵀ
// in fp32, C NaN until a GEMM writes it.
struct TuningOperands {
  static constexpr std::int64_t m = 256, n = 384, k = 512;
  TuningOperands(DeviceAllocator &allocator, std::mt19937_64 &rng)
      : a(random_matrix(static_cast<std::size_t>(m * k), rng)),
        b(random_matrix(static_cast<std::size_t>(n * k), rng)), da(upload(allocator, a.bf16)),
        db(upload(allocator, b.bf16)), c(allocator, static_cast<std::size_t>(m * n)) {
    CUDA_CHECK(cudaMemset(c.data(), 0xFF, c.bytes()));
  }
  [[nodiscard]] RowMajorGemm gemm() {
    RowMajorGemm g = gemm_abt(m, n, k, da.data(), db.data(), c.data());
    g.output_type = ElementType::fp32;
    return g;
  }
  // The largest relative error of C against the host's fp64 product.
  [[nodiscard]] double error() const {
    return relative_error(download(c), n, host_product(a.values, false, b.values, true, m, n, k), m, n);
  }
  Matrix a, b;
  DeviceBuffer<__nv_bfloat16> da, db;
  DeviceBuffer<float> c;
};

} // namespace

TEST_CASE("cuBLASLt row-major GEMMs match a host fp64 product", "[gpu][plumbing][cublaslt]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  DeviceAllocator allocator("test-gemm");
  CublasLt blas(allocator);
  Stream stream;
  std::mt19937_64 rng(42);
  const std::int64_t m = 37, n = 53, k = 29; // odd on purpose

  const Matrix a = random_matrix(static_cast<std::size_t>(m * k), rng);
  const Matrix b = random_matrix(static_cast<std::size_t>(n * k), rng);
  const auto da = upload(allocator, a.bf16), db = upload(allocator, b.bf16);

  SECTION("C = A·Bᵀ, C = A·B and C = Aᵀ·B in bf16 → fp32") {
    for (const auto &[ta, tb] : {std::pair{false, true}, std::pair{false, false}, std::pair{true, false}}) {
      DeviceBuffer<float> c(allocator, static_cast<std::size_t>(m * n));
      RowMajorGemm g = gemm_ab(m, n, k, da.data(), db.data(), c.data());
      g.transpose_a = ta;
      g.transpose_b = tb;
      g.output_type = ElementType::fp32;
      blas.matmul(g, stream);
      stream.synchronize();
      const auto ref = host_product(a.values, ta, b.values, tb, m, n, k);
      INFO("transpose a=" << ta << " b=" << tb);
      CHECK(relative_error(download(c), n, ref, m, n) < 1e-6);
    }
  }
  SECTION("bf16 output, and a bias epilogue") {
    const Matrix bias = random_matrix(static_cast<std::size_t>(n), rng);
    const auto dbias = upload(allocator, bias.bf16);
    DeviceBuffer<__nv_bfloat16> c(allocator, static_cast<std::size_t>(m * n));
    RowMajorGemm g = gemm_abt(m, n, k, da.data(), db.data(), c.data());
    g.bias = dbias.data();
    blas.matmul(g, stream);
    stream.synchronize();
    auto ref = host_product(a.values, false, b.values, true, m, n, k);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) ref[static_cast<std::size_t>(i * n + j)] += bias.values[j];
    const double error = relative_error(download(c), n, ref, m, n);
    CHECK(error < 4e-3); // bf16 rounding of the output
    CHECK(error > 0.0);  // it was rounded
  }
  SECTION("fp64, accumulating with beta = 1 into a strided sub-matrix") {
    std::vector<double> a64(a.values), b64(b.values);
    const auto da64 = upload(allocator, a64), db64 = upload(allocator, b64);
    const std::int64_t ldc = n + 3;
    std::vector<double> c0(static_cast<std::size_t>(m * ldc));
    for (auto &v : c0) v = std::uniform_real_distribution<double>(-1, 1)(rng);
    auto dc = upload(allocator, c0);
    RowMajorGemm g = gemm_abt(m, n, k, da64.data(), db64.data(), dc.data());
    g.input_type = g.output_type = ElementType::fp64;
    g.ldc = ldc;
    g.beta = 1.0;
    g.alpha = 0.5;
    blas.matmul(g, stream);
    stream.synchronize();
    auto ref = host_product(a.values, false, b.values, true, m, n, k);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        ref[static_cast<std::size_t>(i * n + j)] =
            0.5 * ref[static_cast<std::size_t>(i * n + j)] + c0[static_cast<std::size_t>(i * ldc + j)];
    const auto out = download(dc);
    CHECK(relative_error(out, ldc, ref, m, n) < 1e-14);
    for (std::int64_t i = 0; i < m; ++i) // the padding columns are untouched
      for (std::int64_t j = n; j < ldc; ++j)
        CHECK(out[static_cast<std::size_t>(i * ldc + j)] == c0[static_cast<std::size_t>(i * ldc + j)]);
  }
  SECTION("plans are cached per shape") {
    DeviceBuffer<float> c(allocator, static_cast<std::size_t>(m * n));
    RowMajorGemm g = gemm_abt(m, n, k, da.data(), db.data(), c.data());
    g.output_type = ElementType::fp32;
    blas.matmul(g, stream);
    const std::size_t plans = blas.cached_plans();
    blas.matmul(g, stream);
    CHECK(blas.cached_plans() == plans);
    stream.synchronize();
  }
  SECTION("tuning times several algorithms once per shape and still computes the product") {
    TuningOperands t(allocator, rng);
    CHECK_THROWS_AS(blas.set_tuning({.candidates = 0}), std::invalid_argument);
    blas.set_tuning({.candidates = 8, .repetitions = 3});
    const RowMajorGemm g = t.gemm();
    blas.matmul(g, stream);
    blas.matmul(g, stream); // tuned already: not timed again
    stream.synchronize();
    const auto records = blas.tuning_records();
    REQUIRE(records.size() == 1);
    CHECK(records[0].timed >= 2);
    CHECK(records[0].timed <= 8);
    CHECK(records[0].chosen < 8); // a heuristic rank
    CHECK(records[0].chosen_ms > 0.0);
    CHECK(records[0].chosen_ms <= records[0].heuristic_ms);
    CHECK(records[0].at_cap == 0); // no margin: kept by cold time
    CHECK(records[0].flops == 2.0 * t.m * t.n * t.k);
    CHECK(t.error() < 1e-6);
    blas.set_tuning({});
  }
  SECTION("tuning at the power limit keeps one of the close candidates and still computes the product") {
    TuningOperands t(allocator, rng);
    CHECK_THROWS_AS(blas.set_tuning({.candidates = 8, .at_cap_margin = -0.1}), std::invalid_argument);
    CHECK_THROWS_AS(blas.set_tuning({.candidates = 8, .at_cap_margin = 0.1, .at_cap_burst_s = 0.0}),
                    std::invalid_argument);
    CHECK_THROWS_AS(blas.set_tuning({.candidates = 8, .at_cap_margin = 0.1, .at_cap_rounds = 0}),
                    std::invalid_argument);
    // Every candidate counts as close (a margin of 100 %), whatever its
    // time (no minimum), in bursts of 2 ms.
    blas.set_tuning({.candidates = 8,
                     .repetitions = 3,
                     .at_cap_margin = 1.0,
                     .at_cap_min_ms = 0.0,
                     .at_cap_burst_s = 0.002,
                     .at_cap_rounds = 2});
    blas.matmul(t.gemm(), stream);
    stream.synchronize();
    const auto records = blas.tuning_records();
    REQUIRE(records.size() == 1);
    REQUIRE(records[0].timed >= 2);
    CHECK(records[0].at_cap >= 2);
    CHECK(records[0].at_cap <= records[0].timed);
    CHECK(records[0].at_cap_ms > 0.0);
    CHECK(records[0].cold_best_ms > 0.0);
    CHECK(records[0].chosen_ms >= records[0].cold_best_ms); // kept for its time at the cap, not cold
    CHECK(t.error() < 1e-6);
    blas.set_tuning({});
  }
  SECTION("unsupported type combinations are refused") {
    DeviceBuffer<double> c(allocator, static_cast<std::size_t>(m * n));
    RowMajorGemm g = gemm_abt(m, n, k, da.data(), db.data(), c.data());
    g.output_type = ElementType::fp64;
    CHECK_THROWS_AS(blas.matmul(g, stream), std::invalid_argument);
  }
}

TEST_CASE("compare_device agrees with the host comparison", "[gpu][plumbing][compare]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  DeviceAllocator allocator("test-compare");
  std::mt19937_64 rng(7);
  std::normal_distribution<double> dist(0.0, 1.0);
  const std::size_t count = 100003;
  std::vector<double> ref(count);
  std::vector<std::uint16_t> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    ref[i] = dist(rng);
    out[i] = bf16::from_float(static_cast<float>(ref[i] * (1.0 + 1e-3 * dist(rng))));
  }
  out[12345] = 0x7FC0; // a NaN left behind
  const TensorRef host_out{out.data(), ElementType::bf16, static_cast<std::int64_t>(count), false};
  const TensorRef host_ref{ref.data(), ElementType::fp64, static_cast<std::int64_t>(count), false};
  const ErrorStats expected = compare_host("x", host_out, host_ref);

  DeviceBuffer<std::uint16_t> d_out(allocator, count);
  CUDA_CHECK(cudaMemcpy(d_out.data(), out.data(), d_out.bytes(), cudaMemcpyHostToDevice));
  const auto d_ref = upload(allocator, ref);
  const TensorRef device_out{d_out.data(), ElementType::bf16, static_cast<std::int64_t>(count), true};

  for (const ErrorStats &got : {compare_device("x", device_out, d_ref.view()),
                                compare_device("x", host_out, d_ref.view()), // host side staged
                                compare_device("x", device_out, host_ref)}) {
    CHECK(got.output == "x");
    CHECK(got.count == expected.count);
    CHECK(got.nonfinite == 1);
    CHECK(got.nonfinite == expected.nonfinite);
    CHECK(got.max_abs_error == Approx(expected.max_abs_error).epsilon(1e-12));
    CHECK(got.ref_l2_norm == Approx(expected.ref_l2_norm).epsilon(1e-12));
    CHECK(got.rel_l2_error > 1e-4);
    CHECK(got.rel_l2_error < 1e-2);
  }
  CHECK_THROWS_AS(compare_device("x", device_out, TensorRef{d_ref.data(), ElementType::fp64, 5, true}),
                  std::invalid_argument);
}

TEST_CASE("the event timer, the L2 flush and the environment probe", "[gpu][plumbing]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const GpuEnvironment env = probe_gpu_environment(0);
  CHECK_FALSE(env.name.empty());
  CHECK(env.uuid.rfind("GPU-", 0) == 0);
  CHECK(env.uuid.size() == 40);
  CHECK(env.sm_count > 0);
  CHECK(env.l2_bytes > 0);
  CHECK(env.total_memory_bytes > (std::uint64_t{1} << 30));
  CHECK(env.compute_capability_major >= 9); // the kernels are built for sm_90a
  CHECK(env.runtime_version >= 12000);
  CHECK(env.driver_version >= env.runtime_version);
  CHECK(env.cublaslt_version > 0);
  CHECK(cuda_version_string(13000) == "13.0");
  if (Nvml::instance() != nullptr) {
    CHECK(env.nvml_status == "ok");
    CHECK(env.max_sm_clock_mhz.value_or(0) > 0);
  } else {
    CHECK_FALSE(env.nvml_status.empty());
  }

  DeviceAllocator allocator("test-timer");
  Stream stream;
  L2Flush flush(allocator, 0);
  CHECK(flush.bytes() == 2 * env.l2_bytes);
  DeviceBuffer<std::byte> big(allocator, std::size_t{1} << 30);
  CudaEventTimer timer(stream, 0);
  CHECK(timer.name() == "cuda_events");
  flush.flush(stream);
  timer.start();
  CUDA_CHECK(cudaMemsetAsync(big.data(), 1, big.bytes(), stream));
  timer.stop();
  const double ns = timer.elapsed_ns();
  CHECK(ns > 1e4); // 1 GiB takes far more than 10 µs
  CHECK(ns < 1e9);
  if (Nvml::instance() != nullptr) CHECK(timer.clock_mhz().value_or(0.0) > 0.0);
}
