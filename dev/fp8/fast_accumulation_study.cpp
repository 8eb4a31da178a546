// cuBLASLt's fast accumulation for the FP8 teacher GEMM, at the seed's size
// (hidden: run `kibench_dev "[gpu-fp8-fast]"` on a GPU machine; another
// workload with KIBENCH_FP8_WORKLOAD=file.json). `fused-fp8-teacher` with
// and without it (FusedOptions::fp8_fast_accumulation), each against the
// fp64 oracle of the unquantized inputs under the workload's policy, as
// `kibench run` checks it, and each timed over cold samples beside
// `cublas-floor`. Without fast accumulation cuBLASLt promotes the FP8
// tensor cores' partial sums (about 14 significant bits) to fp32 at
// intervals along k; with it, the whole k = H sum stays in the narrower
// accumulator, which at H = 4096 is an error of order 2^-14 sqrt(H / 32)
// of a logit's scale, still below e4m3's own 3.6 % of z_t's RMS
// (docs/perf.md, "The FP8 teacher"). The question is what it saves.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dev/perf/samples.hpp"
#include "kernels/lm_head/fused/fused_implementation.hpp"
#include "kernels/machine/backend.hpp"
#include "kernels/registry.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/run/backend.hpp"
#include "lib/workload/workload.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

namespace {

constexpr int kWarmup = 3;
constexpr int kSamples = 15;

std::filesystem::path fast_accumulation_workload() {
  if (const char *file = std::getenv("KIBENCH_FP8_WORKLOAD"); file != nullptr && *file != '\0') return file;
  return default_workloads_dir() / "seed-distill-jsd-h4096-t8192-v128256.json";
}

} // namespace

TEST_CASE("fused-fp8-teacher: fast accumulation's error and time", "[.][gpu-fp8-fast]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const auto backend = make_backend();
  const Workload w = load_workload(fast_accumulation_workload());
  InputSet inputs(w);
  fmt::print("{}: T={} V={} H={} Hs={}\n", fast_accumulation_workload().filename().string(), w.tokens,
             w.vocab, w.hidden, w.student_hidden);

  auto oracle = backend->make("oracle-fp64");
  REQUIRE(oracle != nullptr);
  oracle->prepare(w, inputs);
  oracle->run(Pass::full);
  const OutputView truth = oracle->outputs();

  {
    const RegisteredImplementation *entry = find_implementation("cublas-floor");
    REQUIRE(entry != nullptr);
    auto floor = entry->make();
    floor->prepare(w, inputs);
    fmt::print("  cublas-floor: {:.3f} ms cold\n",
               dev::median(dev::cold_samples_ms(*floor, Pass::full, kWarmup, kSamples)));
    floor->release();
  }

  for (const bool fast : {false, true}) {
    auto lane = make_fused(FusedOptions{.name = "fused-fp8-teacher",
                                        .teacher_precision = TeacherPrecision::fp8_e4m3,
                                        .fp8_fast_accumulation = fast});
    REQUIRE_FALSE(lane->unsupported(w).has_value());
    lane->prepare(w, inputs);
    lane->poison_outputs();
    lane->run(Pass::full);
    const CorrectnessVerdict verdict =
        make_verdict(backend->compare(lane->outputs(), truth, /*with_gradients=*/true), w.correctness);
    fmt::print("  fused-fp8-teacher{}: {:.3f} ms cold; {}\n", fast ? ", fast accumulation" : "",
               dev::median(dev::cold_samples_ms(*lane, Pass::full, kWarmup, kSamples)),
               verdict.passed ? "passed" : "incorrect_numerical");
    for (const ErrorStats &e : verdict.outputs)
      fmt::print("    {:<22} rel L2 {:.3e}  max abs {:.3e}\n", e.output, e.rel_l2_error, e.max_abs_error);
    CHECK(verdict.outputs.size() >= 3);
    lane->release();
  }
}
