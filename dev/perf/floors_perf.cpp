// Seed-size measurements of the GPU reference and the cuBLAS floor (and the
// reference's error against the GPU fp64 oracle there). Hidden: run it on
// a GPU machine with `kibench_tests "[gpu-perf]"`; it prints a table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "dev/perf/samples.hpp"
#include "kernels/lm_head/floors/cublas_floor.hpp"
#include "kernels/common/device_compare.hpp"
#include "kernels/lm_head/oracle/oracle_fp64.hpp"
#include "kernels/lm_head/reference/reference.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/inputs/input_set.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

namespace {

struct Timing {
  double median_ms = 0.0, min_ms = 0.0, max_ms = 0.0, clock_mhz = 0.0;
  std::size_t samples = 0;
};

// Cold samples (L2 flushed before each), after `warmup` untimed runs.
Timing time_pass(Implementation &impl, Pass pass, int warmup, int samples) {
  double clock = 0.0;
  std::vector<double> ms = dev::cold_samples_ms(
      impl, pass, warmup, samples, [&](SampleTimer &timer) { clock = timer.clock_mhz().value_or(0.0); });
  std::sort(ms.begin(), ms.end());
  return Timing{ms[ms.size() / 2], ms.front(), ms.back(), clock, ms.size()};
}

double gb(std::uint64_t bytes) {
  return static_cast<double>(bytes) / 1e9;
}

} // namespace

TEST_CASE("seed-size timing of reference and cublas-floor", "[.gpu-perf]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  test::GpuCase seed{.name = "seed", .tokens = 8192, .vocab = 128256, .hidden = 4096, .seed = 7};
  const Workload w = test::make_gpu_workload(seed);
  InputSet inputs(w);

  fmt::print("\n{:<14} {:<9} {:>10} {:>10} {:>10} {:>8} {:>9} {:>11}\n", "implementation", "pass",
             "median ms", "min ms", "max ms", "samples", "SM MHz", "peak GB");
  const auto report = [&](Implementation &impl, Pass pass, int warmup, int samples) {
    const Timing t = time_pass(impl, pass, warmup, samples);
    fmt::print("{:<14} {:<9} {:>10.2f} {:>10.2f} {:>10.2f} {:>8} {:>9.0f} {:>11.2f}\n", impl.name(),
               to_string(pass), t.median_ms, t.min_ms, t.max_ms, t.samples, t.clock_mhz,
               gb(impl.memory().peak_bytes));
    CHECK(t.median_ms > 0.0);
  };

  {
    auto floor = make_cublas_floor();
    REQUIRE_FALSE(floor->unsupported(w).has_value());
    floor->prepare(w, inputs);
    report(*floor, Pass::full, 3, 20);
    report(*floor, Pass::forward, 2, 10);
    floor->release();
  }

  auto oracle = make_oracle_fp64();
  REQUIRE_FALSE(oracle->unsupported(w).has_value());
  oracle->prepare(w, inputs);
  oracle->poison_outputs();
  const Timing oracle_time = time_pass(*oracle, Pass::full, 0, 1);
  const OutputView ref = oracle->outputs();
  fmt::print("{:<14} {:<9} {:>10.2f} {:>10} {:>10} {:>8} {:>9} {:>11.2f}\n", "oracle-fp64", "full",
             oracle_time.median_ms, "-", "-", 1, "-", gb(oracle->memory().peak_bytes));

  auto reference = make_reference();
  REQUIRE_FALSE(reference->unsupported(w).has_value());
  fmt::print("reference predicted peak {:.2f} GB\n", gb(gpu::reference_peak_bytes(w, Pass::full)));
  reference->prepare(w, inputs);
  report(*reference, Pass::full, 2, 7);
  reference->poison_outputs();
  reference->run(Pass::full);
  const OutputView out = reference->outputs();
  std::vector<ErrorStats> errors{
      compare_scalar("loss", out.loss, ref.loss),
      gpu::compare_device("grad_student_input", out.grad_student_input, ref.grad_student_input),
      gpu::compare_device("grad_student_weight", out.grad_student_weight, ref.grad_student_weight)};
  fmt::print("loss: reference {:.9f}, oracle-fp64 {:.12f}\n", out.loss, ref.loss);
  for (const ErrorStats &e : errors)
    fmt::print("reference vs oracle-fp64 {:<20} rel_l2 {:.3e} max_abs {:.3e} nonfinite {}\n", e.output,
               e.rel_l2_error, e.max_abs_error, e.nonfinite);
  const CorrectnessVerdict verdict = make_verdict(errors, w.correctness);
  INFO(verdict.summary);
  CHECK(verdict.passed);
  oracle->release();
  report(*reference, Pass::forward, 1, 5);
  const MemoryUse use = reference->memory();
  fmt::print("reference memory: inputs {:.2f} GB, outputs {:.2f} GB, workspace {:.2f} GB, peak {:.2f} GB\n",
             gb(use.input_bytes), gb(use.output_bytes), gb(use.workspace_bytes), gb(use.peak_bytes));
  reference->release();
}
