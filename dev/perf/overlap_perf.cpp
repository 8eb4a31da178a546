// The premise of docs/perf.md's lever 1, measured before it is built: the
// row kernel of chunk c running beside the logit GEMMs of chunk c + 1, on
// SMs of its own (hidden: run `kibench_dev "[gpu-perf-overlap]"` on a GPU
// machine; KIBENCH_ROWS_WORKLOAD=a.json for another workload than the
// seed).
//
// The row kernel on a second stream was measured slower on 2026-12-03
// because cuBLASLt's logit GEMMs take every SM until they end. kibench's
// logit GEMM (abt_gemm.hpp) is persistent and runs on as many SMs as it is
// given, and row-v6 loops over rows on as many clusters as it is given, so
// the two can split the GPU: the GEMMs on N - 2k SMs, the row kernel on k
// clusters of two. Whether that is faster than one after the other
// depends on what limits each: work whose rate is set per SM (issue slots,
// latency) gains nothing from a split, since each then runs
// proportionally longer; work limited by something shared (HBM for the
// row kernel, the power limit for the GEMMs: at the cap fewer busy SMs
// clock higher) can. Each split is timed beside its parts alone on the
// same SMs, cold (L2 flushed, median of rotated rounds) and back to back
// at the power cap with the energy counter, at the plan's chunk size and
// at half of it (what double-buffered logits leave within the same
// workspace budget).
//
// The row kernel here is the one `fused` ships (row-v6, G' written over
// the student logits), with the workload's loss scalars and the GEMMs'
// row statistics where `fused` would take them (tau = 1 and Hs >= 2048).
// Its cold samples restore the chunk's logits first (untimed); back to
// back it runs on its own G' after the first call, whose work a logit is
// the same (the arithmetic is branch-free but for a rescale when a
// vector's maximum is new).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <fmt/format.h>

#include "dev/perf/sustain.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/l2_flush.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/lm_head/fused/abt_gemm.hpp"
#include "kernels/lm_head/fused/chunk_plan.hpp"
#include "kernels/lm_head/fused/row_loss.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/workload/workload.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

namespace {

constexpr int kSamples = 9;
constexpr double kBurstSeconds = 0.3;
constexpr int kSplits[] = {4, 8, 12, 16, 24, 32}; // row kernel clusters (2 SMs each) beside the GEMMs

using bf16 = __nv_bfloat16;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One chunk of R token rows starting at `first`: its two logit buffers
// [R, ld] and, with statistics, their per-tile row statistics.
struct Chunk {
  Chunk(gpu::DeviceAllocator &allocator, std::int64_t first_row, std::int64_t rows, std::int64_t ld,
        std::int64_t tiles, bool statistics)
      : first(first_row), zs(allocator, static_cast<std::size_t>(rows * ld)),
        zt(allocator, static_cast<std::size_t>(rows * ld)),
        zs_stats(allocator, statistics ? static_cast<std::size_t>(rows * tiles) : 0),
        zt_stats(allocator, statistics ? static_cast<std::size_t>(rows * tiles) : 0) {}
  std::int64_t first;
  gpu::DeviceBuffer<bf16> zs, zt;
  gpu::DeviceBuffer<float2> zs_stats, zt_stats;
};

struct Study {
  const Workload &w;
  const gpu::DeviceInputs &in;
  std::int64_t rows, ld;
  bool statistics;
  int sms;

  // The chunk's two logit GEMMs (kibench's, with statistics where the
  // study takes them) on at most `ctas` SMs.
  void logits(Chunk &c, int ctas, cudaStream_t stream) const {
    const auto product = [&](const bf16 *x, const bf16 *weight, std::int64_t k, bf16 *z, float2 *stats) {
      gpu::gemm::AbtGemm g = gpu::gemm::logit_gemm_with_statistics(rows, w.vocab, k, x + c.first * k, weight,
                                                                   z, ld, stats, gpu::fused::kLog2e);
      if (!statistics) g.row_stats = nullptr;
      gpu::gemm::abt_gemm(g, ctas, stream);
    };
    product(in.student_input.data(), in.student_weight.data(), w.student_hidden, c.zs.data(),
            c.zs_stats.data());
    product(in.teacher_input.data(), in.teacher_weight.data(), w.hidden, c.zt.data(), c.zt_stats.data());
  }

  // The chunk's row kernel (row-v6, G' over z_s) on at most `clusters`
  // clusters (-1: as many as are resident).
  void row_work(Chunk &c, std::int64_t clusters, cudaStream_t stream) const {
    gpu::fused::RowLossArgs args;
    args.student_logits = c.zs.data();
    args.teacher_logits = c.zt.data();
    args.rows = rows;
    args.vocab = w.vocab;
    args.ld = ld;
    args.target = in.target.data() + c.first;
    args.student_input = in.student_input.data() + c.first * w.student_hidden;
    args.student_weight = in.student_weight.data();
    args.student_hidden = w.student_hidden;
    args.row_loss = row_loss;
    args.beta = w.scalars.beta;
    args.temperature = w.scalars.temperature;
    args.weight_hard = w.scalars.weight_hard;
    args.weight_soft = w.scalars.weight_soft;
    args.ignore_index = w.scalars.ignore_index;
    if (statistics) {
      args.student_stats = c.zs_stats.data();
      args.teacher_stats = c.zt_stats.data();
      args.stats_ld = gpu::gemm::abt_gemm_column_tiles(w.vocab);
    }
    const gpu::fused::ScopedRowLossV6Limits limit({.clusters = clusters});
    gpu::fused::launch_row_loss(args, stream);
  }

  float *row_loss = nullptr;
};

struct Variant {
  std::string name;
  bool rewrites_a; // its row work turns chunk A's z_s into G': restore A before each cold sample
  std::function<void()> enqueue;
};

// A variant's cold median and its figures at the cap.
struct Measured {
  double cold_ms = 0.0;
  dev::Sustained hot;
};

void run_study(const Workload &w, const gpu::DeviceInputs &in, std::int64_t rows) {
  const std::int64_t T = w.tokens, V = w.vocab;
  const std::int64_t ld = (V + 63) / 64 * 64, tiles = gpu::gemm::abt_gemm_column_tiles(V);
  const bool statistics = w.scalars.temperature == 1.0 && w.student_hidden >= 2048 && V % 8 == 0;
  const int sms = test::sm_count();
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  gpu::DeviceAllocator allocator("overlap-perf");
  gpu::L2Flush flush(allocator, device);
  // Chunk A (rows [0, R)) is the one whose row work runs; chunk B, the
  // next one (rows [R, 2R), or the last R rows where T < 2R), has its
  // logits computed meanwhile.
  Chunk a(allocator, 0, rows, ld, tiles, statistics),
      b(allocator, std::min(rows, T - rows), rows, ld, tiles, statistics);
  gpu::DeviceBuffer<float> row_loss(allocator, static_cast<std::size_t>(rows));
  Study s{w, in, rows, ld, statistics, sms, row_loss.data()};
  gpu::Stream main_stream, side_stream;
  gpu::Event fork(cudaEventDisableTiming), join(cudaEventDisableTiming);

  const auto restore_a = [&] { s.logits(a, sms, main_stream); };
  std::vector<Variant> variants;
  variants.push_back({"row A, all clusters", true, [&] { s.row_work(a, -1, main_stream); }});
  variants.push_back({fmt::format("GEMMs B, {} SMs", sms), false, [&] { s.logits(b, sms, main_stream); }});
  variants.push_back({"row A, then GEMMs B (one stream)", true, [&] {
                        s.row_work(a, -1, main_stream);
                        s.logits(b, sms, main_stream);
                      }});
  for (const int k : kSplits) {
    if (2 * k > sms / 2) continue;
    const int gemm_sms = sms - 2 * k;
    variants.push_back(
        {fmt::format("GEMMs B on {} SMs || row A on {} clusters", gemm_sms, k), true, [&, k, gemm_sms] {
           fork.record(main_stream);
           side_stream.wait(fork);
           s.logits(b, gemm_sms, main_stream);
           s.row_work(a, k, side_stream);
           join.record(side_stream);
           main_stream.wait(join);
         }});
    variants.push_back({fmt::format("GEMMs B alone on {} SMs", gemm_sms), false,
                        [&, gemm_sms] { s.logits(b, gemm_sms, main_stream); }});
    variants.push_back(
        {fmt::format("row A alone on {} clusters", k), true, [&, k] { s.row_work(a, k, main_stream); }});
  }

  // Warm-up: every variant once (tunes nothing; loads the kernels).
  for (Variant &v : variants) {
    if (v.rewrites_a) restore_a();
    v.enqueue();
  }
  main_stream.synchronize();

  // Cold: rotated rounds, L2 flushed before each sample.
  std::vector<std::vector<double>> cold(variants.size());
  const std::size_t n = variants.size();
  for (int round = 0; round < kSamples; ++round)
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t index = (static_cast<std::size_t>(round) + i) % n;
      Variant &v = variants[index];
      if (v.rewrites_a) restore_a();
      flush.flush(main_stream);
      gpu::Event start, stop;
      start.record(main_stream);
      v.enqueue();
      stop.record(main_stream);
      stop.synchronize();
      cold[index].push_back(gpu::Event::elapsed_ms(start, stop));
    }
  std::vector<Measured> m(n);
  for (std::size_t i = 0; i < n; ++i) m[i].cold_ms = median_of(cold[i]);

  // At the cap: each variant back to back, once in order and once in
  // reverse; the mean of the two.
  std::vector<dev::Sustained> first(n), second(n);
  for (std::size_t i = 0; i < n; ++i)
    first[i] = dev::sustain(variants[i].enqueue, m[i].cold_ms, kBurstSeconds, main_stream, device);
  for (std::size_t i = n; i-- > 0;)
    second[i] = dev::sustain(variants[i].enqueue, m[i].cold_ms, kBurstSeconds, main_stream, device);
  for (std::size_t i = 0; i < n; ++i) {
    const auto mean = [](double x, double y) { return 0.5 * (x + y); };
    m[i].hot = {.ms = mean(first[i].ms, second[i].ms),
                .watts = mean(first[i].watts, second[i].watts),
                .joules = mean(first[i].joules, second[i].joules),
                .mhz = mean(first[i].mhz, second[i].mhz)};
  }

  fmt::print("\n{}: chunk of {} rows (A rows [0, {}), B rows [{}, {})), {} SMs, GEMM statistics {}\n", w.name,
             rows, rows, b.first, b.first + rows, sms, statistics ? "on" : "off");
  fmt::print("  {:<52} {:>9} {:>9} {:>7} {:>8} {:>7}\n", "variant", "cold ms", "cap ms", "watts", "J/call",
             "SM MHz");
  for (std::size_t i = 0; i < n; ++i)
    fmt::print("  {:<52} {:>9.3f} {:>9.3f} {:>7.0f} {:>8.3f} {:>7.0f}\n", variants[i].name, m[i].cold_ms,
               m[i].hot.ms, m[i].hot.watts, m[i].hot.joules, m[i].hot.mhz);
  const Measured &sequential = m[2]; // "row A, then GEMMs B"
  fmt::print(
      "  one after the other: {:.3f} ms cold, {:.3f} ms / {:.3f} J at the cap ({:.3f} ms cold per 1000 "
      "rows)\n",
      sequential.cold_ms, sequential.hot.ms, sequential.hot.joules,
      sequential.cold_ms * 1000.0 / static_cast<double>(rows));
  for (std::size_t i = 3; i < n; i += 3) // each split, then its two parts alone
    fmt::print(
        "  {:<52} saves {:>7.3f} ms cold, {:>7.3f} ms / {:>7.3f} J at the cap ({:.3f} ms cold per 1000 "
        "rows)\n",
        variants[i].name, sequential.cold_ms - m[i].cold_ms, sequential.hot.ms - m[i].hot.ms,
        sequential.hot.joules - m[i].hot.joules, m[i].cold_ms * 1000.0 / static_cast<double>(rows));
}

} // namespace

TEST_CASE("fused: row work beside the next chunk's logit GEMMs on SMs of its own", "[.][gpu-perf-overlap]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const char *file = std::getenv("KIBENCH_ROWS_WORKLOAD");
  const Workload w =
      file != nullptr && *file != '\0'
          ? load_workload(file)
          : load_workload(default_workloads_dir() / "seed-distill-jsd-h4096-t8192-v128256.json");
  if (w.hidden % 8 != 0 || w.student_hidden % 8 != 0) {
    WARN(w.name << ": kibench's logit GEMM needs H and Hs in whole 16-byte rows; study skipped");
    return;
  }
  InputSet inputs(w);
  const gpu::DeviceInputs &in = gpu::device_inputs(inputs);
  const gpu::fused::ChunkShape shape{
      .tokens = w.tokens, .vocab = w.vocab, .student_hidden = w.student_hidden};
  const auto plan =
      gpu::fused::plan_chunks(shape, gpu::fused::default_workspace_budget(shape), std::uint64_t{1} << 40, 0);
  REQUIRE(plan.has_value());
  const std::int64_t half_rows = std::max<std::int64_t>(128, (plan->rows / 2 + 127) / 128 * 128);
  run_study(w, in, plan->rows);
  if (half_rows < plan->rows) run_study(w, in, half_rows);
}
