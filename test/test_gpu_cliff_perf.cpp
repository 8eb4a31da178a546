// No performance cliff at an odd vocabulary: fused and cublas-floor at
// GPT-2's V = 50257 beside V = 50264 (the next multiple of 8), same T and H,
// interleaved in one measurement. Before the GEMMs were cut at aligned
// extents (kernels/cuda/aligned_gemm.hpp) both ran ~4.7x slower at 50257.
//   kibench_tests "[gpu-perf-cliff]"      (hidden: a GPU and ~20 s)
#include <catch2/catch.hpp>

#include <fmt/core.h>

#include "kernels/registry.hpp"
#include "lib/harness/harness.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/stats/summary.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

namespace {

double median_ms(const Measurement &m) {
  std::vector<double> ns;
  for (const Sample &s : m.samples) ns.push_back(s.ns);
  return stats::median(std::move(ns)) * 1e-6;
}

} // namespace

TEST_CASE("odd vocabulary within 10 % of its aligned neighbour", "[.][gpu-perf][gpu-perf-cliff]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const Workload odd =
      test::make_gpu_workload({.name = "v50257", .tokens = 8192, .vocab = 50257, .hidden = 4096});
  const Workload even =
      test::make_gpu_workload({.name = "v50264", .tokens = 8192, .vocab = 50264, .hidden = 4096});
  InputSet odd_inputs(odd), even_inputs(even);
  ProtocolSettings settings;
  settings.min_samples = 20;
  settings.max_samples = 60;
  settings.min_time_s = 0.5;
  settings.sustained_time_s = 0.0;
  for (const char *name : {"fused", "cublas-floor"}) {
    auto at_odd = find_implementation(name)->make();
    auto at_even = find_implementation(name)->make();
    at_odd->prepare(odd, odd_inputs);
    at_even->prepare(even, even_inputs);
    const auto measured = measure({at_odd.get(), at_even.get()}, settings);
    const double odd_ms = median_ms(measured[0]), even_ms = median_ms(measured[1]);
    const double ratio = odd_ms / even_ms;
    fmt::print("{}: V = 50257 {:.3f} ms, V = 50264 {:.3f} ms, ratio {:.3f}\n", name, odd_ms, even_ms, ratio);
    INFO(name << ": V = 50257 " << odd_ms << " ms, V = 50264 " << even_ms << " ms");
    CHECK(ratio <= 1.10);
    at_odd->release();
    at_even->release();
  }
}
