// `wgmma-floor` (kernels/lm_head/floors/): the tensor cores must really do the
// pass's FLOPs. A kernel that skipped steps would run faster than the
// chip's peak; one that did them twice, at half the rate of the pass it
// stands for. Both show in the rate and in how time follows the FLOPs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/floors/wgmma_floor.hpp"
#include "kernels/lm_head/floors/wgmma_floor_implementation.hpp"
#include "lib/inputs/input_set.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

namespace {

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

struct PassTimes {
  double full_ms, forward_ms, ratio; // medians, and the median of the pairs' full / forward
};

// `samples` pairs of timed runs, a full pass then a forward one, after two
// untimed runs of each. Alternating keeps both passes in the same clock
// and power state: timed one after the other, the forwards once ran 9 %
// slower a FLOP than the fulls before them, as the board's clock moved.
PassTimes pass_times(Implementation &impl, int samples) {
  for (Pass pass : {Pass::full, Pass::forward, Pass::full, Pass::forward}) impl.run(pass);
  auto timer = impl.open_device()->make_timer();
  const auto time = [&](Pass pass) {
    timer->start();
    impl.run(pass);
    timer->stop();
    return timer->elapsed_ns() * 1e-6;
  };
  std::vector<double> full, forward, ratio;
  for (int i = 0; i < samples; ++i) {
    full.push_back(time(Pass::full));
    forward.push_back(time(Pass::forward));
    ratio.push_back(full.back() / forward.back());
  }
  return {median(full), median(forward), median(ratio)};
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

  const PassTimes times = pass_times(*floor, 21);
  const double full_ms = times.full_ms, forward_ms = times.forward_ms;
  const double full_tflops = w.gemm_flops(true) / (full_ms * 1e-3) * 1e-12;
  const double forward_tflops = w.gemm_flops(false) / (forward_ms * 1e-3) * 1e-12;
  INFO("peak " << peak_tflops << " TFLOP/s; full " << full_ms << " ms (" << full_tflops
               << " TFLOP/s), forward " << forward_ms << " ms (" << forward_tflops << "), paired ratio "
               << times.ratio);
  CHECK(full_tflops <= 1.02 * peak_tflops);
  CHECK(forward_tflops <= 1.02 * peak_tflops);
  CHECK(full_tflops >= 0.3 * peak_tflops);
  // Time follows FLOPs: a full pass is (H + 3 Hs) / (H + Hs) = 5/3 forwards
  // (a fixed cost per launch, such as filling the stages, would pull the
  // ratio towards 1).
  CHECK(times.ratio == Approx(5.0 / 3.0).epsilon(0.08));
  // The labels say how far the step count rounds the FLOPs up.
  CHECK(floor->run_labels().contains("full_pass_flops"));
  floor->release();
}
