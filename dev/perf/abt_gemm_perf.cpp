// kibench's own logit GEMM against cuBLASLt's best (tuned as fused and
// cublas-floor tune) on the seed's logit shapes, on the seed's own input
// tensors (hidden: run `kibench_tests "[gpu-perf-gemm]"` on a GPU machine).
// KIBENCH_GEMM_CASE=gpt2 times the GPT-2 case's instead (T 1000, V 50257,
// H 1024, student 512: K = 512 and 1024, one chunk), where the GEMMs'
// statistics lost to cuBLASLt's logits (docs/perf-log.md): the tile with
// and without statistics says whether the mainloop or the statistics
// warps cost the difference at small K.
// Prints per shape, for each of kibench's tiles (clusters of two sharing B
// by multicast), the 256-wide one also with row statistics, and cuBLASLt: cold medians (L2 flushed,
// interleaved round by round) and a back-to-back sustained phase with the board's energy counter (power,
// joules per call, SM clock), which is where the power limit decides the speed of GEMM-bound work.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_profiler_api.h>
#include <fmt/format.h>

#include "dev/perf/samples.hpp"
#include "kernels/cuda/aligned_gemm.hpp"
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/l2_flush.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/cuda/tuning_labels.hpp"
#include "kernels/lm_head/fused/abt_gemm.hpp"
#include "kernels/lm_head/fused/chunk_plan.hpp"
#include "lib/inputs/input_set.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;
using namespace kibench::gpu;
using dev::median;
using dev::sustain;
using dev::Sustained;

namespace {

const test::GpuCase kSeedCase{.name = "seed", .tokens = 8192, .vocab = 128256, .hidden = 4096, .seed = 7};

// The inputs of a case (the seed's unless told) on the GPU with what each
// study here times them with: a cuBLASLt handle, a stream and an L2 flush.
struct SeedBench {
  explicit SeedBench(const char *allocator_name, const test::GpuCase &shape = kSeedCase)
      : w(test::make_gpu_workload(shape)), inputs(w), in(device_inputs(inputs)), allocator(allocator_name),
        blas(allocator), device([] {
          int d = 0;
          CUDA_CHECK(cudaGetDevice(&d));
          return d;
        }()),
        flush(allocator, device) {}
  Workload w;
  InputSet inputs;
  const DeviceInputs &in;
  DeviceAllocator allocator;
  CublasLt blas;
  Stream stream;
  int device;
  L2Flush flush;
};

} // namespace

TEST_CASE("kibench's logit GEMM beside cuBLASLt on the seed's shapes", "[.gpu-perf-gemm]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const char *case_name = std::getenv("KIBENCH_GEMM_CASE");
  const bool gpt2 = case_name != nullptr && std::string(case_name) == "gpt2";
  const test::GpuCase shape =
      gpt2 ? test::GpuCase{.name = "gpt2", .tokens = 1000, .vocab = 50257, .hidden = 1024, .seed = 7}
           : kSeedCase;
  SeedBench bench("gemm-perf", shape);
  auto &[w, inputs, in, allocator, blas, stream, device, flush] = bench;
  const int sms = test::sm_count();
  // C's rows padded to whole 16-byte units where V is no multiple of 8
  // (50257), as fused lays out its logits: kibench's GEMM then writes
  // n = ldc columns with W's V rows (b_rows), cuBLASLt V columns of the
  // same row stride.
  const std::int64_t ldc = aligned_stride(w.vocab);
  const auto C = static_cast<std::size_t>(w.tokens * ldc);
  DeviceBuffer<__nv_bfloat16> ours(allocator, C), theirs(allocator, C);
  // cuBLASLt leaves the padding columns alone; kibench's GEMM writes them 0.
  CUDA_CHECK(cudaMemset(theirs.data(), 0, theirs.bytes()));

  struct Variant {
    const char *name;
    gemm::AbtTile tile;
    bool stats; // with row statistics
  };
  const Variant variants[] = {{"n192s4", gemm::AbtTile::n192_stages4, false},
                              {"n256s3", gemm::AbtTile::n256_stages3, false},
                              {"n256s3+st", gemm::AbtTile::n256_stages3, true}};
  DeviceBuffer<float2> stats(allocator,
                             static_cast<std::size_t>(w.tokens * gemm::abt_gemm_column_tiles(w.vocab)));
  for (const Variant &v : variants)
    fmt::print("\nresident CTAs, {}: {} in clusters of 2\n", v.name,
               gemm::abt_gemm_resident_ctas(v.tile, 2, sms));
  fmt::print("\n{:<26} {:<10} {:>9} {:>8} | {:>10} {:>8} {:>7} {:>8} {:>7}  {}\n", "shape (m x n x k)",
             "gemm", "cold ms", "TFLOP/s", "sustain ms", "TFLOP/s", "watts", "J/call", "SM MHz", "agreement");
  struct Shape {
    std::int64_t rows, k;
    const __nv_bfloat16 *x, *weight;
  };
  std::vector<Shape> shapes;
  for (const std::int64_t rows :
       gpt2 ? std::vector<std::int64_t>{w.tokens} : std::vector<std::int64_t>{2816, 8192}) {
    shapes.push_back({rows, w.student_hidden, in.student_input.data(), in.student_weight.data()});
    shapes.push_back({rows, w.hidden, in.teacher_input.data(), in.teacher_weight.data()});
  }
  for (const Shape &s : shapes) {
    const std::int64_t m = s.rows, n = w.vocab, k = s.k;
    const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    std::vector<std::pair<std::string, std::function<void()>>> calls;
    for (const Variant &v : variants) {
      const gemm::AbtGemm g{.m = m,
                            .n = ldc,
                            .k = k,
                            .a = s.x,
                            .lda = k,
                            .b = s.weight,
                            .ldb = k,
                            .c = ours.data(),
                            .ldc = ldc,
                            .b_rows = n,
                            .tile = v.tile,
                            .row_stats = v.stats ? stats.data() : nullptr,
                            .stats_ld = gemm::abt_gemm_column_tiles(n),
                            .stats_columns = n,
                            .stats_scale = 1.4426950408889634f};
      calls.emplace_back(v.name, [&, g] { gemm::abt_gemm(g, sms, stream); });
    }
    RowMajorGemm cublas = gemm_abt(m, n, k, s.x, s.weight, theirs.data());
    cublas.ldc = ldc;
    calls.emplace_back("cuBLASLt", [&] { blas.matmul(cublas, stream); });
    blas.tune_during(kMeasuredTuning, stream, calls.back().second);

    // Agreement first: poisoned outputs, then at most rounding apart.
    calls.back().second();
    std::vector<__nv_bfloat16> y(static_cast<std::size_t>(m * ldc)), x(y.size());
    stream.synchronize();
    CUDA_CHECK(cudaMemcpy(y.data(), theirs.data(), y.size() * 2, cudaMemcpyDeviceToHost));
    std::vector<double> agreement(calls.size(), 0.0);
    for (std::size_t c = 0; c + 1 < calls.size(); ++c) {
      CUDA_CHECK(cudaMemsetAsync(ours.data(), 0xFF, ours.bytes(), stream));
      calls[c].second();
      stream.synchronize();
      CUDA_CHECK(cudaMemcpy(x.data(), ours.data(), x.size() * 2, cudaMemcpyDeviceToHost));
      double diff = 0.0, norm = 0.0;
      std::size_t bad = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double u = __bfloat162float(x[i]), v = __bfloat162float(y[i]);
        if (!std::isfinite(u)) ++bad;
        diff += (u - v) * (u - v);
        norm += v * v;
      }
      agreement[c] = std::sqrt(diff / norm);
      INFO(calls[c].first);
      CHECK(bad == 0);
      CHECK(agreement[c] < 1e-3);
    }

    // Cold, interleaved round by round.
    std::vector<std::vector<double>> cold(calls.size());
    for (int round = 0; round < 15; ++round)
      for (std::size_t c = 0; c < calls.size(); ++c) {
        flush.flush(stream);
        Event start, stop;
        start.record(stream);
        calls[c].second();
        stop.record(stream);
        stop.synchronize();
        cold[c].push_back(Event::elapsed_ms(start, stop));
      }
    for (std::size_t c = 0; c < calls.size(); ++c) {
      const double cold_ms = median(cold[c]);
      const Sustained hot = sustain(calls[c].second, cold_ms, 3.0, stream, device);
      fmt::print("{:<26} {:<10} {:>9.3f} {:>8.0f} | {:>10.3f} {:>8.0f} {:>7.0f} {:>8.3f} {:>7.0f}  {:.1e}\n",
                 fmt::format("{}x{}x{}", m, n, k), calls[c].first, cold_ms, flops / cold_ms * 1e-9, hot.ms,
                 flops / hot.ms * 1e-9, hot.watts, hot.joules, hot.mhz, agreement[c]);
    }
    for (const TuningRecord &r : blas.tuning_records())
      if (r.shape.rfind(fmt::format("{}x{}x{}", m, n, k), 0) == 0)
        fmt::print("  cuBLASLt: {}\n", r.algorithm);
  }
}

// One call of each tile (clusters of two) and of the first tile in clusters
// of one on the seed's student logit chunk, for a profiler (`ncu --kernel-name regex:abt_gemm kibench_tests
// "[gpu-gemm-profile]"`).
// One launch of each of kibench's logit GEMM tiles, of the default tile
// with row statistics, and of cuBLASLt's algorithm as tuning picks it, on
// the seed's 2816-row student chunk, for a profiler:
//   ncu --profile-from-start off kibench_tests "[gpu-gemm-profile]"
// Only those launches lie between cudaProfilerStart and cudaProfilerStop
// (cuBLASLt's tuning runs before).
TEST_CASE("one logit GEMM of each tile, for a profiler", "[.gpu-gemm-profile]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const Workload w =
      test::make_gpu_workload({.name = "seed", .tokens = 2816, .vocab = 128256, .hidden = 4096, .seed = 7});
  InputSet inputs(w);
  const DeviceInputs &in = device_inputs(inputs);
  DeviceAllocator allocator("gemm-profile");
  Stream stream;
  DeviceBuffer<__nv_bfloat16> out(allocator, static_cast<std::size_t>(w.tokens * w.vocab));
  DeviceBuffer<float2> stats(allocator,
                             static_cast<std::size_t>(w.tokens * gemm::abt_gemm_column_tiles(w.vocab)));
  CublasLt blas(allocator, fused::kCublasWorkspaceBytes);
  blas.set_tuning(kMeasuredTuning);
  const RowMajorGemm lt = gemm_abt(w.tokens, w.vocab, w.student_hidden, in.student_input.data(),
                                   in.student_weight.data(), out.data());
  blas.matmul(lt, stream); // tunes
  stream.synchronize();
  CUDA_CHECK(cudaProfilerStart());
  for (const auto &[tile, cluster] :
       {std::pair{gemm::AbtTile::n192_stages4, 1}, std::pair{gemm::AbtTile::n192_stages4, 2},
        std::pair{gemm::AbtTile::n256_stages3, 2}}) {
    const gemm::AbtGemm g{.m = w.tokens,
                          .n = w.vocab,
                          .k = w.student_hidden,
                          .a = in.student_input.data(),
                          .lda = w.student_hidden,
                          .b = in.student_weight.data(),
                          .ldb = w.student_hidden,
                          .c = out.data(),
                          .ldc = w.vocab,
                          .cluster = cluster,
                          .tile = tile};
    gemm::abt_gemm(g, test::sm_count(), stream);
  }
  gemm::abt_gemm(gemm::logit_gemm_with_statistics(w.tokens, w.vocab, w.student_hidden,
                                                  in.student_input.data(), in.student_weight.data(),
                                                  out.data(), w.vocab, stats.data(), 1.4426950408889634f),
                 test::sm_count(), stream);
  blas.matmul(lt, stream);
  stream.synchronize();
  CUDA_CHECK(cudaProfilerStop());
}

// cuBLASLt's candidate algorithms for the seed's grad GEMMs, each cold
// (L2 flushed, median of 7) and back to back at the board's power limit
// (about 0.5 s, with the energy counter): whether the algorithm tuning
// keeps by cold time is also the one that costs least at the cap. Shapes:
// cublas-floor's grad x and grad W (bf16 out, all 8192 rows), `fused`'s
// grad x and grad W (the accumulator's high half) of one 2816-row chunk
// (fp32 out), and the floor's teacher logit GEMM. G is the student's
// logits, written by the logit GEMM (values of the size G' has).
constexpr AlgorithmTuning kAtCapTuning{.candidates = 16, .repetitions = 7, .at_cap_margin = 0.03};

TEST_CASE("cuBLASLt's grad GEMM candidates cold and at the power cap", "[.gpu-perf-gemm-energy]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  SeedBench bench("gemm-energy");
  auto &[w, inputs, in, allocator, blas, stream, device, flush] = bench;
  const std::int64_t T = w.tokens, V = w.vocab, Hs = w.student_hidden;
  DeviceBuffer<__nv_bfloat16> g(allocator, static_cast<std::size_t>(T * V));
  DeviceBuffer<float> out(allocator, static_cast<std::size_t>(V * Hs));
  blas.matmul(gemm_abt(T, V, Hs, in.student_input.data(), in.student_weight.data(), g.data()), stream);

  struct Shape {
    const char *name;
    RowMajorGemm gemm;
  };
  RowMajorGemm floor_dx = gemm_ab(T, Hs, V, g.data(), in.student_weight.data(), out.data());
  RowMajorGemm floor_dw = gemm_atb(V, Hs, T, g.data(), in.student_input.data(), out.data());
  RowMajorGemm fused_dx = gemm_ab(2816, Hs, V, g.data(), in.student_weight.data(), out.data());
  fused_dx.output_type = ElementType::fp32;
  // `fused`'s grad W of one chunk, rows [S, V) into the fp32 accumulator
  // (beta 1: every chunk but the first), S = ⌊V/16⌋·8.
  const std::int64_t S = V / 16 * 8;
  RowMajorGemm fused_dw = gemm_atb(V - S, Hs, 2816, g.data() + S, in.student_input.data(), out.data());
  fused_dw.lda = V;
  fused_dw.output_type = ElementType::fp32;
  fused_dw.beta = 1.0;
  // The floor's teacher logits (K = H = 4096), written over G last.
  const RowMajorGemm floor_zt =
      gemm_abt(T, V, w.hidden, in.teacher_input.data(), in.teacher_weight.data(), g.data());
  const Shape shapes[] = {{"cublas-floor grad x", floor_dx},
                          {"cublas-floor grad W", floor_dw},
                          {"fused grad x (a 2816-row chunk, fp32)", fused_dx},
                          {"fused grad W, rows [S, V) of a 2816-row chunk (fp32, beta 1)", fused_dw},
                          {"cublas-floor teacher logits", floor_zt}};
  for (const Shape &s : shapes) {
    const double flops =
        2.0 * static_cast<double>(s.gemm.m) * static_cast<double>(s.gemm.n) * static_cast<double>(s.gemm.k);
    blas.tune_during(kMeasuredTuning, stream, [&] { blas.matmul(s.gemm, stream); });
    std::string kept;
    for (const TuningRecord &r : blas.tuning_records())
      if (r.shape.rfind(fmt::format("{}x{}x{}", s.gemm.m, s.gemm.n, s.gemm.k), 0) == 0) kept = r.algorithm;
    // What tuning keeps with the candidates close to the fastest timed
    // again at the power limit (kAtCapTuning), on a handle of its own.
    std::string kept_at_cap, at_cap_label;
    {
      CublasLt at_cap(allocator);
      at_cap.tune_during(kAtCapTuning, stream, [&] { at_cap.matmul(s.gemm, stream); });
      const std::vector<TuningRecord> records = at_cap.tuning_records();
      REQUIRE(records.size() == 1);
      kept_at_cap = records.front().algorithm;
      const json::Object labels = gemm_tuning_labels(records, kAtCapTuning);
      if (const json::Value *text = labels.find("gemm_1_at_cap")) at_cap_label = text->as_string();
    }
    const std::vector<cublasLtMatmulAlgo_t> algorithms = blas.runnable_algorithms(s.gemm, 16, stream);
    fmt::print("\n{} ({}x{}x{}): {} candidates; tuning keeps {}; at the cap {} ({})\n", s.name, s.gemm.m,
               s.gemm.n, s.gemm.k, algorithms.size(), kept, kept_at_cap,
               at_cap_label.empty() ? "no other candidate close" : at_cap_label);
    fmt::print("{:>4}  {:<72} {:>8} {:>9} {:>10} {:>8} {:>7} {:>8} {:>7}\n", "rank", "algorithm", "cold ms",
               "0.1 s ms", "sustain ms", "TFLOP/s", "watts", "J/call", "SM MHz");
    for (std::size_t rank = 0; rank < algorithms.size(); ++rank) {
      const auto call = [&] { blas.matmul_with(s.gemm, algorithms[rank], stream); };
      std::vector<double> cold;
      for (int i = 0; i < 7; ++i) {
        flush.flush(stream);
        Event start, stop;
        start.record(stream);
        call();
        stop.record(stream);
        stop.synchronize();
        cold.push_back(Event::elapsed_ms(start, stop));
      }
      const double cold_ms = median(cold);
      // A burst of 0.1 s after the previous candidate's sustained run (the
      // board already at its cap): whether so short a window ranks the
      // candidates as the 0.5 s one does, which a tuner could afford.
      const Sustained burst = sustain(call, cold_ms, 0.1, stream, device);
      const Sustained hot = sustain(call, cold_ms, 0.5, stream, device);
      const std::string config = algorithm_config(algorithms[rank]);
      fmt::print("{:>4}  {:<72} {:>8.3f} {:>9.3f} {:>10.3f} {:>8.0f} {:>7.0f} {:>8.3f} {:>7.0f}{}{}\n", rank,
                 config, cold_ms, burst.ms, hot.ms, flops / hot.ms * 1e-9, hot.watts, hot.joules, hot.mhz,
                 config == kept ? "  <- kept" : "", config == kept_at_cap ? "  <- kept at the cap" : "");
    }
  }
}
