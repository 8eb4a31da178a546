// `wgmma-floor` (kernels/floor/): the tensor cores must really do the
// pass's FLOPs. A kernel that skipped steps would run faster than the
// chip's peak; one that did them twice, at half the rate of the pass it
// stands for. Both show in the rate and in how time follows the FLOPs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "floor/wgmma_floor.hpp"
#include "floor/wgmma_floor_implementation.hpp"
#include "inputs/input_set.hpp"
#include "test_gpu_support.hpp"

using namespace kibench;

namespace {

// Median of `samples` back-to-back timed runs, after two untimed ones.
double median_ms(Implementation &impl, Pass pass, int samples) {
  impl.run(pass);
  impl.run(pass);
  auto timer = impl.make_timer();
  std::vector<double> ms;
  for (int i = 0; i < samples; ++i) {
    timer->start();
    impl.run(pass);
    timer->stop();
    ms.push_back(timer->elapsed_ns() * 1e-6);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

} // namespace

TEST_CASE("wgmma-floor's steps cover the FLOPs, rounded up", "[floor]") {
  namespace tf = gpu::tensor_floor;
  CHECK(tf::steps_for(0.0) == 0);
  CHECK(tf::steps_for(1.0) == 1);
  CHECK(tf::steps_for(tf::kFlopsPerStep) == 1);
  CHECK(tf::steps_for(tf::kFlopsPerStep + 1.0) == 2);
  // The seed's full pass: 21.52 TFLOP in 4.19 MFLOP steps.
  const double seed = 2.0 * 8192.0 * 128256.0 * (4096.0 + 3.0 * 2048.0);
  CHECK(tf::steps_for(seed) == 5130240);
}

TEST_CASE("wgmma-floor runs the pass's FLOPs at a rate the tensor cores can give", "[gpu][floor]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const Workload w =
      test::make_gpu_workload({.name = "floor", .tokens = 4096, .vocab = 32768, .hidden = 2048});
  InputSet inputs(w);
  auto floor = make_wgmma_floor();
  REQUIRE_FALSE(floor->unsupported(w).has_value());
  REQUIRE_FALSE(floor->computes_loss());
  floor->prepare(w, inputs);

  int device = 0, sms = 0, khz = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  // Dense bf16 on Hopper: 4096 FLOP per SM and clock (1024 multiply-adds
  // in each of 4 tensor cores), at the highest SM clock the device reports.
  const double peak_tflops = 4096.0 * sms * khz * 1e3 * 1e-12;

  const double full_ms = median_ms(*floor, Pass::full, 15);
  const double forward_ms = median_ms(*floor, Pass::forward, 15);
  const double full_tflops = w.gemm_flops(true) / (full_ms * 1e-3) * 1e-12;
  const double forward_tflops = w.gemm_flops(false) / (forward_ms * 1e-3) * 1e-12;
  INFO("peak " << peak_tflops << " TFLOP/s; full " << full_ms << " ms (" << full_tflops
               << " TFLOP/s), forward " << forward_ms << " ms (" << forward_tflops << ")");
  CHECK(full_tflops <= 1.02 * peak_tflops);
  CHECK(forward_tflops <= 1.02 * peak_tflops);
  CHECK(full_tflops >= 0.3 * peak_tflops);
  // Time follows FLOPs: a full pass is (H + 3 Hs) / (H + Hs) = 5/3 forwards
  // (a fixed cost per launch, such as filling the stages, would pull the
  // ratio towards 1).
  CHECK(full_ms / forward_ms == Approx(5.0 / 3.0).epsilon(0.08));
  // The labels say how far the step count rounds the FLOPs up.
  CHECK(floor->run_labels().contains("full_pass_flops"));
  floor->release();
}
