// Shared by the [gpu] tests: the skip on machines without a GPU (CI), and
// workloads built in code with the seed's generators, scaled down.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/gpu_available.hpp"
#include "lib/workload/workload.hpp"

// Returns from the test case, with a warning, when there is no GPU.
#define KIBENCH_REQUIRE_GPU_OR_SKIP()                                                                        \
  do {                                                                                                       \
    if (!::kibench::gpu::gpu_available()) {                                                                  \
      WARN("no GPU: " << ::kibench::gpu::gpu_availability().reason << "; GPU test skipped");                 \
      return;                                                                                                \
    }                                                                                                        \
  } while (false)

namespace kibench::test {

// The current device's multiprocessors: the CTAs a persistent kernel runs.
inline int sm_count() {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

struct GpuCase {
  std::string name;
  std::int64_t tokens = 128, vocab = 2048, hidden = 256;
  double beta = 0.5, temperature = 1.0, ignore_fraction = 0.0;
  bool bias = false;
  std::uint64_t seed = 1; // every tensor's generator seed derives from it
};

inline GeneratorSpec uniform_spec(std::uint64_t seed, double low, double high) {
  return GeneratorSpec{
      .name = "philox4x32_10_uniform", .seed = seed, .low = low, .high = high, .ignore_fraction = 0.0};
}

// torch.rand inputs, nn.Linear's ±1/sqrt(fan_in) weights (and biases),
// randint targets, as the seed's harness draws them.
inline Workload make_gpu_workload(const GpuCase &c) {
  Workload w;
  w.name = c.name;
  w.tokens = c.tokens;
  w.vocab = c.vocab;
  w.hidden = c.hidden;
  w.student_hidden = c.hidden / 2;
  const double student_bound = 1.0 / std::sqrt(static_cast<double>(w.student_hidden));
  const double teacher_bound = 1.0 / std::sqrt(static_cast<double>(w.hidden));
  const std::uint64_t s = c.seed * 16;
  w.student_input = uniform_spec(s + 1, 0.0, 1.0);
  w.student_weight = uniform_spec(s + 2, -student_bound, student_bound);
  w.teacher_input = uniform_spec(s + 3, 0.0, 1.0);
  w.teacher_weight = uniform_spec(s + 4, -teacher_bound, teacher_bound);
  w.target = GeneratorSpec{.name = "philox4x32_10_uniform_int",
                           .seed = s + 5,
                           .low = 0.0,
                           .high = static_cast<double>(c.vocab),
                           .ignore_fraction = c.ignore_fraction};
  if (c.bias) {
    w.student_bias = uniform_spec(s + 6, -student_bound, student_bound);
    w.teacher_bias = uniform_spec(s + 7, -teacher_bound, teacher_bound);
  }
  w.scalars.beta = c.beta;
  w.scalars.temperature = c.temperature;
  w.correctness.max_relative_error = 1e-2;
  w.correctness.max_absolute_error = 1e-6;
  return w;
}

} // namespace kibench::test
