// Where a pass's time goes, stage by stage, on any workload (hidden: run
// `kibench_dev "[gpu-perf-stages]"` on a GPU machine, with
// KIBENCH_STAGE_WORKLOADS=a.json:b.json to choose the workloads; the
// default is the seed and the ragged sweep's shapes that sit furthest from
// the floor). For each workload: `cublas-floor`'s cold median, and
// `fused` (its automatic plan), `fused-cublaslt` (cuBLASLt's logit GEMMs),
// `fused-lean` (a 1 GiB workspace), `fused-rowstats` (the GEMMs' row
// statistics wherever allowed), `fused-fp8-teacher` (with cuBLASLt's fast
// accumulation, as registered, and without), and those paths with the row kernels of
// the dev studies (row-v5's streaming units, row-v6's partly cached rows
// in clusters of 2 and 4). KIBENCH_STAGE_VARIANTS="a;b*" keeps the variants
// whose names match the shell patterns a or b*; KIBENCH_STAGE_PASS=forward
// times forward passes (the floor too: its two logit GEMMs) instead of
// full ones. All are prepared, then timed together over cold samples in
// interleaved rounds (L2 flushed; dev::interleaved_cold_samples_ms), with
// events between the stages of each pass (gpu::StageClock):
// the median of each stage summed over the chunks, and the median of the
// pass as `kibench run` times it. The events sit between kernels on the
// pass's one stream, so the stages add up to the pass. docs/perf.md
// records what this printed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fnmatch.h>

#include "dev/fused/row_kernels.hpp"
#include "dev/perf/samples.hpp"
#include "dev/perf/stage_clock.hpp"
#include "kernels/lm_head/fused/chunk_plan.hpp"
#include "kernels/lm_head/fused/fused_implementation.hpp"
#include "kernels/lm_head/fused/study_hooks.hpp"
#include "kernels/registry.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/workload/workload.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

namespace {

constexpr int kWarmup = 3;
constexpr int kSamples = 15;

// The non-empty `separator`-separated parts of environment variable
// `variable`, or nullopt where it is unset or empty.
std::optional<std::vector<std::string>> environment_list(const char *variable, char separator) {
  const char *list = std::getenv(variable);
  if (list == nullptr || *list == '\0') return std::nullopt;
  const std::string text = list;
  std::vector<std::string> parts;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(separator, at), text.size());
    if (end > at) parts.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return parts;
}

std::vector<std::filesystem::path> stage_workloads() {
  std::vector<std::filesystem::path> files;
  if (const auto listed = environment_list("KIBENCH_STAGE_WORKLOADS", ':')) {
    for (const std::string &file : *listed) files.emplace_back(file);
    return files;
  }
  const std::filesystem::path dir = default_workloads_dir();
  files.push_back(dir / "seed-distill-jsd-h4096-t8192-v128256.json");
  for (const char *name :
       {"sweep-h1024-t8192-v128256.json", "sweep-h2880-t8192-v128256.json", "sweep-h4096-t8192-v32001.json",
        "sweep-h4096-t7-v128256.json", "sweep-h4096-t128-v128256.json"})
    files.push_back(dir / "sweeps" / "ragged" / name);
  return files;
}

std::int64_t environment_integer(const char *name, std::int64_t fallback) {
  const char *text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  std::size_t used = 0;
  const std::int64_t value = std::stoll(text, &used);
  if (used != std::string(text).size() || value < -1)
    throw std::invalid_argument(fmt::format("{}={}: a whole number >= -1", name, text));
  return value;
}

// The shipped row kernel (launch_row_loss) with the schedule knobs of
// RowLossV6Limits from the environment: KIBENCH_ROW_STAGGER_US (the
// clusters of odd index start this late) and KIBENCH_ROW_STAGED_WAIT (0 or
// 1: the compact load sweep waits slot by slot; dev/perf/fused_perf.cpp,
// "[gpu-perf-rows-schedule]").
void launch_row_loss_scheduled(const gpu::fused::RowLossArgs &args, cudaStream_t stream) {
  static const gpu::fused::RowLossV6Limits limits{
      .stagger_ns = environment_integer("KIBENCH_ROW_STAGGER_US", 0) * 1000,
      .staged_wait = environment_integer("KIBENCH_ROW_STAGED_WAIT", 0) > 0};
  const gpu::fused::ScopedRowLossV6Limits scoped(limits);
  gpu::fused::launch_row_loss(args, stream);
}
constexpr gpu::fused::RowKernel kRowKernelScheduled{"shipped, schedule from the environment",
                                                    launch_row_loss_scheduled};

// The registry's fused variants as the registry builds them (row-v3 with
// G', row-v6 without), those with row-v3 or row-v6 in every pass, and both
// `fused` paths with the streaming study's row kernel (dev/fused/row_loss_v5.cu).
struct Variant {
  const char *name;
  LogitStatistics statistics;
  std::uint64_t workspace_budget; // 0: the shape's default
  gpu::fused::RowKernel row_kernel = {};
  TeacherPrecision teacher_precision = TeacherPrecision::bf16;
  bool fp8_fast_accumulation = false;
  bool small_kernels_in_line = false; // FusedStudyHooks::small_kernels_in_line
};
constexpr Variant kVariants[] = {
    {"fused", LogitStatistics::automatic, 0},
    {"fused-cublaslt", LogitStatistics::off, 0},
    {"fused-lean", LogitStatistics::automatic, gpu::fused::kLeanWorkspaceBudget},
    {"fused, row-v3", LogitStatistics::automatic, 0, gpu::fused::kRowKernelV3},
    {"fused-lean, row-v3", LogitStatistics::automatic, gpu::fused::kLeanWorkspaceBudget,
     gpu::fused::kRowKernelV3},
    {"fused-fp8-teacher, row-v3", LogitStatistics::off, 0, gpu::fused::kRowKernelV3,
     TeacherPrecision::fp8_e4m3, true},
    {"fused, row-v5", LogitStatistics::automatic, 0, gpu::fused::kRowKernelV5},
    {"fused-cublaslt, row-v5", LogitStatistics::off, 0, gpu::fused::kRowKernelV5},
    {"fused, row-v6-2x1024", LogitStatistics::automatic, 0, gpu::fused::kRowKernelV6Pairs},
    {"fused-cublaslt, row-v6-2x1024", LogitStatistics::off, 0, gpu::fused::kRowKernelV6Pairs},
    {"fused, row-v6-4x512", LogitStatistics::automatic, 0, gpu::fused::kRowKernelV6Quads},
    {"fused-cublaslt, row-v6-4x512", LogitStatistics::off, 0, gpu::fused::kRowKernelV6Quads},
    {"fused-lean, row-v6-2x1024", LogitStatistics::automatic, gpu::fused::kLeanWorkspaceBudget,
     gpu::fused::kRowKernelV6Pairs},
    {"fused, row-v6c-2x1024", LogitStatistics::automatic, 0, gpu::fused::kRowKernelV6CompactPairs},
    {"fused-cublaslt, row-v6c-2x1024", LogitStatistics::off, 0, gpu::fused::kRowKernelV6CompactPairs},
    {"fused-lean, row-v6c-2x1024", LogitStatistics::automatic, gpu::fused::kLeanWorkspaceBudget,
     gpu::fused::kRowKernelV6CompactPairs},
    {"fused, row-v6c-1x1024", LogitStatistics::automatic, 0, gpu::fused::kRowKernelV6CompactSingles},
    {"fused-cublaslt, row-v6c-1x1024", LogitStatistics::off, 0, gpu::fused::kRowKernelV6CompactSingles},
    {"fused, row-v6c-1x512", LogitStatistics::automatic, 0, gpu::fused::kRowKernelV6CompactSingles512},
    {"fused, row-v6c-2x512", LogitStatistics::automatic, 0, gpu::fused::kRowKernelV6CompactPairs512},
    {"fused, row-v6f-1x256", LogitStatistics::automatic, 0, gpu::fused::kRowKernelV6ReadOnce256},
    {"fused, row-v6f-1x128", LogitStatistics::automatic, 0, gpu::fused::kRowKernelV6ReadOnce128},
    {"fused, small kernels in line", LogitStatistics::automatic, 0, {}, TeacherPrecision::bf16, false, true},
    {"fused, row schedule from the environment", LogitStatistics::automatic, 0, kRowKernelScheduled},
    {"fused, row-v6c-1x1024, fma ex2 2/8", LogitStatistics::automatic, 0,
     gpu::fused::kRowKernelV6CompactSinglesFma2},
    {"fused, row-v6c-1x1024, fma ex2 3/8", LogitStatistics::automatic, 0,
     gpu::fused::kRowKernelV6CompactSinglesFma3},
    {"fused-rowstats", LogitStatistics::on, 0},
    {"fused-rowstats, row-v6-2x1024", LogitStatistics::on, 0, gpu::fused::kRowKernelV6Pairs},
    {"fused-fp8-teacher", LogitStatistics::off, 0, {}, TeacherPrecision::fp8_e4m3, true},
    {"fused-fp8-teacher, accurate accumulation",
     LogitStatistics::off,
     0,
     {},
     TeacherPrecision::fp8_e4m3,
     false},
    {"fused-fp8-teacher, row-v6-2x1024", LogitStatistics::off, 0, gpu::fused::kRowKernelV6Pairs,
     TeacherPrecision::fp8_e4m3, true},
};

// Which variants to time: all (no patterns), or those whose names match
// one of the shell patterns (KIBENCH_STAGE_VARIANTS, ';'-separated:
// "fused;fused-cublaslt;*row-v6*").
bool variant_selected(const char *name, const std::optional<std::vector<std::string>> &patterns) {
  return !patterns || std::any_of(patterns->begin(), patterns->end(), [&](const std::string &pattern) {
    return fnmatch(pattern.c_str(), name, 0) == 0;
  });
}

// The pass to time: KIBENCH_STAGE_PASS (forward or full), full by default.
Pass stage_pass() {
  const char *text = std::getenv("KIBENCH_STAGE_PASS");
  if (text == nullptr || *text == '\0') return Pass::full;
  const auto pass = pass_from_string(text);
  if (!pass || *pass == Pass::backward)
    throw std::invalid_argument(fmt::format("KIBENCH_STAGE_PASS={}: forward or full", text));
  return *pass;
}

} // namespace

TEST_CASE("fused: each stage's time on chosen workloads", "[.][gpu-perf-stages]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const auto variant_patterns = environment_list("KIBENCH_STAGE_VARIANTS", ';');
  const Pass pass_timed = stage_pass();
  for (const std::filesystem::path &file : stage_workloads()) {
    const Workload w = load_workload(file);
    InputSet inputs(w);
    const bool backward = pass_timed == Pass::full;
    fmt::print("\n{}: T={} V={} H={} Hs={}, {:.2f} TFLOP a {} pass\n", file.filename().string(), w.tokens,
               w.vocab, w.hidden, w.student_hidden, w.gemm_flops(backward) * 1e-12, to_string(pass_timed));
    // Every lane is prepared first, then all are timed in the same rounds
    // (dev::interleaved_cold_samples_ms), the floor among them: a variant's
    // difference from another is then not when it ran.
    const RegisteredImplementation *floor_entry = find_implementation("cublas-floor");
    REQUIRE(floor_entry != nullptr);
    std::unique_ptr<Implementation> floor = floor_entry->make();
    floor->prepare(w, inputs);
    struct Timed {
      std::unique_ptr<gpu::StageClock> clock;
      std::unique_ptr<Implementation> fused;
      std::map<std::string, std::vector<double>> stage_ms;
      std::vector<std::string> order;
    };
    std::vector<Timed> timed;
    for (const Variant &variant : kVariants) {
      if (!variant_selected(variant.name, variant_patterns)) continue;
      auto clock = std::make_unique<gpu::StageClock>();
      auto fused =
          make_fused_for_study(FusedOptions{.name = variant.name,
                                            .workspace_budget = variant.workspace_budget,
                                            .logit_statistics = variant.statistics,
                                            .teacher_precision = variant.teacher_precision,
                                            .fp8_fast_accumulation = variant.fp8_fast_accumulation},
                               FusedStudyHooks{.row_kernel = variant.row_kernel,
                                               .stage_marks = clock.get(),
                                               .small_kernels_in_line = variant.small_kernels_in_line});
      if (fused->unsupported(w)) continue;
      fused->prepare(w, inputs);
      timed.push_back(
          Timed{.clock = std::move(clock), .fused = std::move(fused), .stage_ms = {}, .order = {}});
    }
    std::vector<dev::InterleavedLane> lanes{{.impl = floor.get()}};
    for (Timed &t : timed)
      lanes.push_back({.impl = t.fused.get(), .after_sample = [&t](SampleTimer &) {
                         for (const auto &[name, ms] : t.clock->stages()) {
                           if (!t.stage_ms.contains(name)) t.order.push_back(name);
                           t.stage_ms[name].push_back(ms);
                         }
                       }});
    const std::vector<std::vector<double>> pass_ms =
        dev::interleaved_cold_samples_ms(lanes, pass_timed, kWarmup, kSamples);
    const double floor_ms = dev::median(pass_ms.front());
    fmt::print("  cublas-floor {:.3f} ms ({:.0f} TFLOP/s); {} lanes timed in {} interleaved rounds\n",
               floor_ms, w.gemm_flops(backward) / (floor_ms * 1e9), lanes.size(), kSamples);
    for (const auto &[ctas, compact] : {std::pair{2, false}, std::pair{4, false}, std::pair{2, true}, std::pair{1, true}}) {
      const gpu::fused::RowLossV6Layout l = gpu::fused::row_loss_v6_layout(w.vocab, ctas, compact);
      fmt::print("  row-v6{}-{}x{}: {} of a slice's {} vectors in shared memory ({} B a CTA), {} clusters "
                 "resident{}\n",
                 compact ? "c" : "", l.ctas_per_row, l.threads, l.cached_vectors, l.slice_vectors,
                 l.shared_bytes, l.resident_clusters,
                 compact ? " (where the kernel takes its own statistics)" : "");
    }
    for (std::size_t v = 0; v < timed.size(); ++v) {
      Timed &t = timed[v];
      const json::Object labels = t.fused->run_labels();
      fmt::print("  {}: {} chunk(s) of {} rows, logits: {}; grad W: {}\n", t.fused->name(),
                 labels.find("chunks")->as_string(), labels.find("chunk_rows")->as_string(),
                 labels.find("logit_gemm")->as_string(), labels.find("grad_weight_path")->as_string());
      double sum = 0.0;
      for (const std::string &name : t.order) {
        const double ms = dev::median(t.stage_ms[name]);
        sum += ms;
        fmt::print("    {:<52} {:>8.3f} ms\n", name, ms);
      }
      const double pass = dev::median(pass_ms[v + 1]);
      fmt::print("    {:<52} {:>8.3f} ms (the pass: {:.3f} ms, {:.3f} x the floor; {:.3f} ms above it)\n",
                 "stages", sum, pass, pass / floor_ms, pass - floor_ms);
    }
  }
}
