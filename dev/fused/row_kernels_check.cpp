// The superseded row kernels and the row-kernel studies against the
// shipped one: `fused` run with row-v1, row-v2, row-v5, row-v6 and row-v3
// on the same logits (cuBLASLt's heuristic picks, the same GEMMs every
// prepare) must agree, loss to 1e-6 relative and the gradients within the
// workload's correctness policy. The shipped kernel is checked against the
// fp64 oracle in test/test_gpu_fused.cpp.
//   build/dev/kibench_dev "[dev-row-kernels]"
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dev/fused/row_kernels.hpp"
#include "kernels/lm_head/fused/fused_implementation.hpp"
#include "kernels/lm_head/fused/study_hooks.hpp"
#include "kernels/machine/backend.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/run/backend.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

namespace {

// `fused` with `kernel` as its row kernel, run once on poisoned outputs
// (cuBLASLt's heuristic picks: the same GEMMs every prepare).
std::unique_ptr<Implementation> run_fused(const Workload &w, InputSet &inputs, Pass pass,
                                          const gpu::fused::RowKernel &kernel, LogitStatistics statistics,
                                          std::int64_t chunk_rows) {
  auto impl = make_fused_for_study(
      FusedOptions{.logit_statistics = statistics, .plan = {.chunk_rows = chunk_rows, .gemm_candidates = 1}},
      FusedStudyHooks{.row_kernel = kernel});
  impl->prepare(w, inputs);
  impl->poison_outputs();
  impl->run(pass);
  return impl;
}

} // namespace

TEST_CASE("row kernels v1 and v2 compute what the shipped v3 computes", "[gpu][dev-row-kernels]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const auto backend = make_backend();
  const std::vector<test::GpuCase> cases{
      {.name = "mixture-bias-ignored",
       .tokens = 56,
       .vocab = 4096,
       .ignore_fraction = 0.25,
       .bias = true,
       .seed = 1},
      {.name = "beta0-v50257", .tokens = 16, .vocab = 50257, .hidden = 64, .beta = 0.0, .seed = 2},
      {.name = "beta1-tau2-odd",
       .tokens = 40,
       .vocab = 517,
       .hidden = 66,
       .beta = 1.0,
       .temperature = 2.0,
       .seed = 3},
  };
  for (const test::GpuCase &c : cases) {
    const Workload w = test::make_gpu_workload(c);
    InputSet inputs(w);
    for (const Pass pass : {Pass::full, Pass::forward}) {
      INFO(c.name << (pass == Pass::full ? ", full" : ", forward"));
      auto run_with = [&](const gpu::fused::RowKernel &kernel) {
        return run_fused(w, inputs, pass, kernel, LogitStatistics::off, 9);
      };
      auto shipped = run_with(gpu::fused::kRowKernelV3);
      const OutputView truth = shipped->outputs();
      for (const gpu::fused::RowKernel &kernel : {gpu::fused::kRowKernelV1, gpu::fused::kRowKernelV2}) {
        INFO("row kernel " << kernel.name);
        auto other = run_with(kernel);
        const OutputView out = other->outputs();
        CHECK(std::abs(out.loss - truth.loss) <= 1e-6 * std::abs(truth.loss));
        const CorrectnessVerdict verdict =
            make_verdict(backend->compare(out, truth, pass != Pass::forward), w.correctness);
        CHECK(verdict.passed);
        other->release();
      }
      shipped->release();
    }
  }
}

// The studies that rearrange where a row lives, against the shipped
// kernel: the streaming units of row-v5, and row-v6's partly cached rows
// in both cluster shapes, with as many vectors in shared memory as fit,
// with 3 a CTA (most of each slice read again from global memory) and with
// none, and on 2 or 3 clusters, so that each cluster runs many rows (the
// row loop, the alternating exchange slots, the slice reused from row to
// row, ignored rows between others, the next row's prefetch). With
// cuBLASLt's logit GEMMs and, where the shape allows them, kibench's with
// row statistics: ignored rows and a bias, an odd V, more than 32 slices of
// 4096 columns a row (V = 140003: v5's combine loops, and slices past v6's
// shared memory at full capacity), V = 20 (a quad's last CTA has no
// columns), a partial row block, every token ignored, beta 0 and 1,
// tau != 1, whole chunks and short ones.
TEST_CASE("row kernels v5 and v6 (its compact cache too) compute what the shipped v3 computes",
          "[gpu][dev-row-kernels]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const auto backend = make_backend();
  struct StudyCase {
    test::GpuCase c;
    std::int64_t chunk_rows;
  };
  struct Candidate {
    gpu::fused::RowKernel kernel;
    gpu::fused::RowLossV6Limits limits; // row-v6's only
  };
  const std::vector<Candidate> candidates{
      {gpu::fused::kRowKernelV5, {}},
      {gpu::fused::kRowKernelV6Pairs, {}},
      {gpu::fused::kRowKernelV6Pairs, {.cache_vectors = 3}},
      {gpu::fused::kRowKernelV6Pairs, {.cache_vectors = 0}},
      {gpu::fused::kRowKernelV6Pairs, {.cache_vectors = 3, .clusters = 2}},
      {gpu::fused::kRowKernelV6Quads, {}},
      {gpu::fused::kRowKernelV6Quads, {.cache_vectors = 3}},
      {gpu::fused::kRowKernelV6Quads, {.cache_vectors = 0}},
      {gpu::fused::kRowKernelV6Quads, {.clusters = 3}},
      {gpu::fused::kRowKernelV6CompactPairs, {}},
      {gpu::fused::kRowKernelV6CompactPairs, {.cache_vectors = 3}},
      {gpu::fused::kRowKernelV6CompactPairs, {.cache_vectors = 0}},
      {gpu::fused::kRowKernelV6CompactPairs, {.cache_vectors = 3, .clusters = 2}},
      {gpu::fused::kRowKernelV6CompactSingles, {}},
      {gpu::fused::kRowKernelV6CompactSingles, {.cache_vectors = 3}},
      {gpu::fused::kRowKernelV6CompactSingles, {.cache_vectors = 0, .clusters = 3}},
      // The schedule knobs (dev/perf/fused_perf.cpp, "[gpu-perf-rows-schedule]"):
      // slot-by-slot waits, with several slots a thread (clusters 3), and
      // half the clusters started late.
      {gpu::fused::kRowKernelV6CompactSingles, {.clusters = 3, .staged_wait = true}},
      {gpu::fused::kRowKernelV6CompactSingles, {.stagger_ns = 5000, .staged_wait = true}},
      {gpu::fused::kRowKernelV6CompactPairs, {.cache_vectors = 3, .clusters = 2, .staged_wait = true}},
      {gpu::fused::kRowKernelV6Pairs, {.stagger_ns = 5000}},
      // Two rows in flight an SM: CTAs of 512 threads, a row to one or two.
      {gpu::fused::kRowKernelV6CompactSingles512, {}},
      {gpu::fused::kRowKernelV6CompactSingles512, {.cache_vectors = 3, .clusters = 3}},
      {gpu::fused::kRowKernelV6CompactPairs512, {}},
      {gpu::fused::kRowKernelV6CompactPairs512, {.cache_vectors = 0, .clusters = 2}},
      // Four and eight rows an SM where a pass reads each vector once.
      {gpu::fused::kRowKernelV6ReadOnce256, {}},
      {gpu::fused::kRowKernelV6ReadOnce128, {.clusters = 3}},
      // Exponentials on the FMA pipe (ex2_fma) for 2 and 3 of 8 elements.
      {gpu::fused::kRowKernelV6CompactSinglesFma2, {}},
      {gpu::fused::kRowKernelV6CompactSinglesFma3, {.cache_vectors = 3, .staged_wait = true}},
  };
  const std::vector<StudyCase> cases{
      {{.name = "v5-bias-ignored",
        .tokens = 56,
        .vocab = 4096,
        .ignore_fraction = 0.25,
        .bias = true,
        .seed = 1},
       9},
      {{.name = "v5-v50257", .tokens = 40, .vocab = 50257, .hidden = 64, .seed = 2}, 0},
      {{.name = "v5-v140003", .tokens = 37, .vocab = 140003, .hidden = 64, .seed = 4}, 0},
      {{.name = "v5-ignored-some",
        .tokens = 45,
        .vocab = 8200,
        .hidden = 128,
        .ignore_fraction = 0.5,
        .seed = 5},
       0},
      {{.name = "v5-all-ignored",
        .tokens = 20,
        .vocab = 3000,
        .hidden = 64,
        .ignore_fraction = 1.0,
        .seed = 6},
       7},
      {{.name = "v5-beta0-tau0.7",
        .tokens = 30,
        .vocab = 9001,
        .hidden = 64,
        .beta = 0.0,
        .temperature = 0.7,
        .ignore_fraction = 0.2,
        .seed = 7},
       0},
      {{.name = "v5-beta1-tau2-bias",
        .tokens = 33,
        .vocab = 517,
        .hidden = 66,
        .beta = 1.0,
        .temperature = 2.0,
        .bias = true,
        .seed = 8},
       11},
      {{.name = "v20-tau0.7-ignored",
        .tokens = 29,
        .vocab = 20,
        .hidden = 64,
        .beta = 0.5,
        .temperature = 0.7,
        .ignore_fraction = 0.3,
        .seed = 12},
       0},
      {{.name = "v5-beta0", .tokens = 24, .vocab = 5000, .hidden = 64, .beta = 0.0, .seed = 9}, 0},
      {{.name = "v5-beta1", .tokens = 24, .vocab = 5000, .hidden = 64, .beta = 1.0, .seed = 10}, 0},
      {{.name = "v5-mixture-tau1.5",
        .tokens = 50,
        .vocab = 20000,
        .hidden = 64,
        .beta = 0.9,
        .temperature = 1.5,
        .seed = 11},
       0},
  };
  for (const StudyCase &vc : cases) {
    const test::GpuCase &c = vc.c;
    const Workload w = test::make_gpu_workload(c);
    InputSet inputs(w);
    const bool statistics_allowed =
        c.temperature == 1.0 && !c.bias && c.hidden % 8 == 0 && (c.hidden / 2) % 8 == 0;
    for (const LogitStatistics statistics : {LogitStatistics::off, LogitStatistics::on}) {
      if (statistics == LogitStatistics::on && !statistics_allowed) continue;
      for (const Pass pass : {Pass::full, Pass::forward}) {
        INFO(c.name << (pass == Pass::full ? ", full" : ", forward")
                    << (statistics == LogitStatistics::on ? ", GEMM statistics" : ""));
        auto run_with = [&](const gpu::fused::RowKernel &kernel) {
          return run_fused(w, inputs, pass, kernel, statistics, vc.chunk_rows);
        };
        auto shipped = run_with(gpu::fused::kRowKernelV3);
        const OutputView truth = shipped->outputs();
        for (const Candidate &candidate : candidates) {
          const gpu::fused::RowLossV6Limits &limits = candidate.limits;
          INFO("row kernel " << candidate.kernel.name << ", shared memory for "
                             << (limits.cache_vectors < 0 ? std::string("all that fit")
                                                          : std::to_string(limits.cache_vectors))
                             << " vectors a CTA, "
                             << (limits.clusters < 0 ? std::string("all resident")
                                                     : std::to_string(limits.clusters))
                             << " clusters");
          const gpu::fused::ScopedRowLossV6Limits scoped(limits);
          auto other = run_with(candidate.kernel);
          const OutputView out = other->outputs();
          CHECK(std::abs(out.loss - truth.loss) <= 1e-6 * std::abs(truth.loss) + 1e-12);
          const CorrectnessVerdict verdict =
              make_verdict(backend->compare(out, truth, pass != Pass::forward), w.correctness);
          CHECK(verdict.passed);
          // Run to run: the same bits (fixed-order combines).
          other->poison_outputs();
          other->run(pass);
          CHECK(other->outputs().loss == out.loss);
          other->release();
        }
        shipped->release();
      }
    }
  }
}
