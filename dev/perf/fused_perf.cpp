// Timings of the fused implementation on the seed workload (hidden: run
// `kibench_tests "[gpu-perf]"` on a GPU machine). Prints, per pass, the
// median and p20-p80 of cold samples (L2 flushed, CUDA events on the
// implementation's stream), the four cuBLASLt GEMMs of the same shapes
// alone (the floor the fused path is measured against), the row kernel
// alone at the chunk size, and, where the registry has the GPU oracle, the
// errors against it; the fused path with cuBLASLt's heuristic algorithms
// beside the tuned default, and what tuning chose per GEMM shape.
// docs/perf.md records what these printed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cuda_bf16.h>
#include <fmt/format.h>

#include "dev/fused/row_kernels.hpp"
#include "dev/perf/samples.hpp"
#include "kernels/common/device_compare.hpp"
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_available.hpp"
#include "kernels/cuda/l2_flush.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/lm_head/fused/abt_gemm.hpp"
#include "kernels/lm_head/fused/chunk_plan.hpp"
#include "kernels/lm_head/fused/fused_implementation.hpp"
#include "kernels/lm_head/fused/grad_weight_split.hpp"
#include "kernels/lm_head/fused/row_loss.hpp"
#include "kernels/registry.hpp"
#include "lib/harness/harness.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/workload/workload.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

namespace {

constexpr int kWarmup = 3;
constexpr int kSamples = 25;

struct Timing {
  double median_ms = 0, p20_ms = 0, p80_ms = 0;
};

Timing summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) {
    return ms[static_cast<std::size_t>(q * static_cast<double>(ms.size() - 1) + 0.5)];
  };
  return {at(0.5), at(0.2), at(0.8)};
}

Workload seed_workload() {
  return load_workload(default_workloads_dir() / "seed-distill-jsd-h4096-t8192-v128256.json");
}

// The row-kernel studies' workload: KIBENCH_ROWS_WORKLOAD=a.json, else the
// workloads/ file `fallback`.
Workload rows_workload(const char *fallback) {
  const char *file = std::getenv("KIBENCH_ROWS_WORKLOAD");
  return load_workload(file != nullptr && *file != '\0' ? std::filesystem::path(file)
                                                         : default_workloads_dir() / fallback);
}

// Cold samples of impl.run(pass) through the implementation's own timer.
Timing time_implementation(Implementation &impl, Pass pass) {
  return summarize(dev::cold_samples_ms(impl, pass, kWarmup, kSamples));
}

// Cold samples of whatever `work` enqueues on `stream`.
Timing time_work(const std::function<void()> &work, cudaStream_t stream, gpu::L2Flush &flush) {
  for (int i = 0; i < kWarmup; ++i) work();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  gpu::Event start, stop;
  std::vector<double> ms;
  for (int i = 0; i < kSamples; ++i) {
    flush.flush(stream);
    start.record(stream);
    work();
    stop.record(stream);
    stop.synchronize();
    ms.push_back(gpu::Event::elapsed_ms(start, stop));
  }
  return summarize(ms);
}

double gigabytes(std::uint64_t bytes) {
  return static_cast<double>(bytes) * 1e-9;
}

void print_timing(const std::string &what, const Timing &t, double tflop) {
  fmt::print("{:<44} {:>9.3f} ms  (p20-p80 {:.3f}-{:.3f})  {:>6.1f} TFLOP/s\n", what, t.median_ms, t.p20_ms,
             t.p80_ms, tflop / (t.median_ms * 1e-3));
}

// The row kernel's arguments for the first `rows` rows of logits [rows, V]
// (ld = V) computed from the seed's inputs.
gpu::fused::RowLossArgs chunk_args(const gpu::DeviceInputs &in, __nv_bfloat16 *zs, const __nv_bfloat16 *zt,
                                   std::int64_t rows, std::int64_t V, std::int64_t Hs, float *row_loss) {
  gpu::fused::RowLossArgs args;
  args.student_logits = zs;
  args.teacher_logits = zt;
  args.rows = rows;
  args.vocab = V;
  args.ld = V;
  args.target = in.target.data();
  args.student_input = in.student_input.data();
  args.student_weight = in.student_weight.data();
  args.student_hidden = Hs;
  args.row_loss = row_loss;
  return args;
}

// The first `rows` rows of the workload's logits [rows, ld] and their row
// statistics (per 256-column tile, in the row kernel's log2 e units) from
// kibench's logit GEMM, as a fused pass with statistics writes them.
void write_logits_with_statistics(const Workload &w, const gpu::DeviceInputs &in, std::int64_t rows,
                                  std::int64_t ld, __nv_bfloat16 *zs, __nv_bfloat16 *zt,
                                  float2 *student_stats, float2 *teacher_stats, cudaStream_t stream) {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  gpu::gemm::abt_gemm(gpu::gemm::logit_gemm_with_statistics(rows, w.vocab, w.student_hidden,
                                                            in.student_input.data(), in.student_weight.data(),
                                                            zs, ld, student_stats, gpu::fused::kLog2e),
                      sms, stream);
  gpu::gemm::abt_gemm(gpu::gemm::logit_gemm_with_statistics(rows, w.vocab, w.hidden, in.teacher_input.data(),
                                                            in.teacher_weight.data(), zt, ld, teacher_stats,
                                                            gpu::fused::kLog2e),
                      sms, stream);
}

// One plan-sized chunk of a workload's logits as kibench's logit GEMM
// writes them, with their per-tile row statistics, an L2 flush and a
// stream: what the row-kernel studies time on. Prints the chunk's shape.
struct ChunkLogits {
  ChunkLogits(const Workload &w, const gpu::DeviceInputs &in, const char *allocator_name)
      : vocab(w.vocab), student_hidden(w.student_hidden), rows(plan_rows(w)), ld((w.vocab + 7) / 8 * 8),
        tiles(gpu::gemm::abt_gemm_column_tiles(w.vocab)), allocator(allocator_name),
        flush(allocator, current_device()), student(allocator, static_cast<std::size_t>(rows * ld)),
        teacher(allocator, static_cast<std::size_t>(rows * ld)),
        student_stats(allocator, static_cast<std::size_t>(rows * tiles)),
        teacher_stats(allocator, static_cast<std::size_t>(rows * tiles)),
        row_loss(allocator, static_cast<std::size_t>(rows)) {
    fmt::print("{}: T={} V={} H={} Hs={}; one chunk of {} rows\n", w.name, w.tokens, w.vocab, w.hidden,
               w.student_hidden, rows);
    write_logits_with_statistics(w, in, rows, ld, student.data(), teacher.data(), student_stats.data(),
                                 teacher_stats.data(), stream);
  }

  // The chunk's row-kernel arguments (RowLossArgs' loss scalars), with
  // the GEMMs' statistics or without, with G' or loss only.
  gpu::fused::RowLossArgs args(const gpu::DeviceInputs &in, bool statistics, bool grad) {
    gpu::fused::RowLossArgs a =
        chunk_args(in, student.data(), teacher.data(), rows, vocab, student_hidden, row_loss.data());
    a.ld = ld;
    a.write_grad = grad;
    if (statistics) {
      a.student_stats = student_stats.data();
      a.teacher_stats = teacher_stats.data();
      a.stats_ld = tiles;
    }
    return a;
  }

  std::int64_t vocab, student_hidden, rows, ld, tiles;
  gpu::DeviceAllocator allocator;
  gpu::Stream stream;
  gpu::L2Flush flush;
  gpu::DeviceBuffer<__nv_bfloat16> student, teacher;
  gpu::DeviceBuffer<float2> student_stats, teacher_stats;
  gpu::DeviceBuffer<float> row_loss;

private:
  static std::int64_t plan_rows(const Workload &w) {
    const gpu::fused::ChunkShape shape{
        .tokens = w.tokens, .vocab = w.vocab, .student_hidden = w.student_hidden};
    const auto plan = gpu::fused::plan_chunks(shape, gpu::fused::default_workspace_budget(shape),
                                              std::uint64_t{1} << 40, 0);
    REQUIRE(plan.has_value());
    return plan->rows;
  }
  static int current_device() {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    return device;
  }
};

} // namespace

TEST_CASE("fused: seed workload timings", "[.][gpu-perf]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const Workload w = seed_workload();
  InputSet inputs(w);
  const gpu::DeviceInputs &in = gpu::device_inputs(inputs);
  const double full_tflop = w.gemm_flops(true) * 1e-12, forward_tflop = w.gemm_flops(false) * 1e-12;
  fmt::print("seed: T={} V={} H={} Hs={}; GEMM work {:.2f} TFLOP full, {:.2f} forward\n", w.tokens, w.vocab,
             w.hidden, w.student_hidden, full_tflop, forward_tflop);

  Timing fused_full, fused_forward;
  {
    auto fused = make_fused();
    REQUIRE_FALSE(fused->unsupported(w).has_value());
    fused->prepare(w, inputs);
    const MemoryUse use = fused->memory();
    fmt::print("fused memory: inputs {:.3f} GB, outputs {:.3f} GB, workspace {:.3f} GB ({:.3f} GiB), peak "
               "{:.3f} GB\n",
               gigabytes(use.input_bytes), gigabytes(use.output_bytes), gigabytes(use.workspace_bytes),
               static_cast<double>(use.workspace_bytes) / (1u << 30), gigabytes(use.peak_bytes));
    CHECK(use.workspace_bytes <= gpu::fused::kDefaultWorkspaceBudget);
    fused_full = time_implementation(*fused, Pass::full);
    print_timing("fused full (auto chunks)", fused_full, full_tflop);
    fused_forward = time_implementation(*fused, Pass::forward);
    print_timing("fused forward (auto chunks)", fused_forward, forward_tflop);

    // Correctness at the seed size, where the GPU oracle exists.
    if (const RegisteredImplementation *entry = find_implementation("oracle-fp64")) {
      auto oracle = entry->make();
      oracle->prepare(w, inputs);
      oracle->run(Pass::full);
      const OutputView ref = oracle->outputs();
      fused->poison_outputs();
      fused->run(Pass::full);
      const OutputView out = fused->outputs();
      const double loss_error = std::abs(out.loss - ref.loss) / std::abs(ref.loss);
      fmt::print("vs oracle-fp64: loss {:.10g} (oracle {:.10g}, rel {:.3e})\n", out.loss, ref.loss,
                 loss_error);
      CHECK(loss_error <= 1e-5);
      for (const auto &[name, o, r] :
           {std::tuple{"grad_student_input", out.grad_student_input, ref.grad_student_input},
            std::tuple{"grad_student_weight", out.grad_student_weight, ref.grad_student_weight}}) {
        const ErrorStats e = gpu::compare_device(name, o, r);
        fmt::print("vs oracle-fp64: {} rel L2 {:.3e}, max abs {:.3e}, nonfinite {}\n", name, e.rel_l2_error,
                   e.max_abs_error, e.nonfinite);
        CHECK(e.nonfinite == 0);
        CHECK(e.rel_l2_error <= 2e-3);
      }
    } else {
      fmt::print("no oracle-fp64 in the registry: seed-size errors not checked here\n");
    }
  }
  // cuBLASLt's logit GEMMs (fused-cublaslt) where the default takes
  // kibench's with row statistics, for their gain or loss in the same
  // process.
  {
    auto fused = make_fused(FusedOptions{.logit_statistics = LogitStatistics::off});
    fused->prepare(w, inputs);
    print_timing("fused full, cuBLASLt logit GEMMs", time_implementation(*fused, Pass::full), full_tflop);
    print_timing("fused forward, cuBLASLt logit GEMMs", time_implementation(*fused, Pass::forward),
                 forward_tflop);
  }
  // cuBLASLt's heuristic's first picks instead of timed ones, for the
  // tuning's gain in the same process.
  {
    auto fused = make_fused(FusedOptions{.plan = {.gemm_candidates = 1}});
    fused->prepare(w, inputs);
    print_timing("fused full, heuristic GEMM algorithms", time_implementation(*fused, Pass::full),
                 full_tflop);
    print_timing("fused forward, heuristic GEMM algorithms", time_implementation(*fused, Pass::forward),
                 forward_tflop);
  }
  if (const RegisteredImplementation *entry = find_implementation("cublas-floor")) {
    auto floor = entry->make();
    floor->prepare(w, inputs);
    print_timing("cublas-floor (registry), full", time_implementation(*floor, Pass::full), full_tflop);
  }
  {
    auto fused = make_fused(FusedOptions{.plan = {.chunk_rows = 1024}});
    fused->prepare(w, inputs);
    print_timing("fused full (1024-row chunks)", time_implementation(*fused, Pass::full), full_tflop);
  }

  // The four GEMMs alone over all T rows, and the row kernel alone at the
  // seed's chunk size, on buffers of our own.
  gpu::DeviceAllocator allocator("fused-perf");
  gpu::Stream stream;
  gpu::CublasLt blas(allocator, gpu::fused::kCublasWorkspaceBytes);
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  gpu::L2Flush flush(allocator, device);
  const std::int64_t T = w.tokens, V = w.vocab, H = w.hidden, Hs = w.student_hidden;
  using bf16 = __nv_bfloat16;
  gpu::DeviceBuffer<bf16> zs(allocator, static_cast<std::size_t>(T * V)),
      zt(allocator, static_cast<std::size_t>(T * V));
  gpu::DeviceBuffer<bf16> gx(allocator, static_cast<std::size_t>(T * Hs)),
      gw(allocator, static_cast<std::size_t>(V * Hs));
  gpu::DeviceBuffer<float> row_loss(allocator, static_cast<std::size_t>(T));
  const auto forward_gemms = [&] {
    blas.matmul(gpu::gemm_abt(T, V, Hs, in.student_input.data(), in.student_weight.data(), zs.data()),
                stream);
    blas.matmul(gpu::gemm_abt(T, V, H, in.teacher_input.data(), in.teacher_weight.data(), zt.data()), stream);
  };
  const auto backward_gemms = [&] {
    blas.matmul(gpu::gemm_ab(T, Hs, V, zs.data(), in.student_weight.data(), gx.data()), stream);
    blas.matmul(gpu::gemm_atb(V, Hs, T, zs.data(), in.student_input.data(), gw.data()), stream);
  };
  const Timing gemms = time_work(
      [&] {
        forward_gemms();
        backward_gemms();
      },
      stream, flush);
  print_timing("four cuBLASLt GEMMs alone (T rows)", gemms, full_tflop);
  const Timing gemms_forward = time_work(forward_gemms, stream, flush);
  print_timing("two logit GEMMs alone (T rows)", gemms_forward, forward_tflop);

  const std::int64_t rows = 2048;
  forward_gemms(); // real logits for the row kernel
  using gpu::fused::RowKernel;
  for (const auto &[kernel, grad] :
       {std::pair{gpu::fused::kRowKernelV1, false}, std::pair{gpu::fused::kRowKernelV1, true},
        std::pair{gpu::fused::kRowKernelV2, false}, std::pair{gpu::fused::kRowKernelV2, true},
        std::pair{gpu::fused::kRowKernelV3, false}, std::pair{gpu::fused::kRowKernelV3, true}}) {
    gpu::fused::RowLossArgs args = chunk_args(in, zs.data(), zt.data(), rows, V, Hs, row_loss.data());
    args.write_grad = grad;
    const Timing t = time_work([&] { kernel.launch(args, stream); }, stream, flush);
    const double bytes = static_cast<double>(rows * V) * (grad ? 6.0 : 4.0);
    fmt::print(
        "{:<44} {:>9.3f} ms  (p20-p80 {:.3f}-{:.3f})  {:>6.0f} GB/s\n",
        fmt::format("row kernel {} alone, {} rows, {}", kernel.name, rows, grad ? "with G'" : "loss only"),
        t.median_ms, t.p20_ms, t.p80_ms, bytes / (t.median_ms * 1e-3) * 1e-9);
  }

  // Version 3 on the row statistics of kibench's logit GEMM
  // (FusedOptions::logit_statistics), on logits that GEMM has just written
  // (the G' run then rewrites z_s, as above). [gpu-perf-rows] below times
  // the other versions this way.
  {
    const std::int64_t tiles = gpu::gemm::abt_gemm_column_tiles(V);
    gpu::DeviceBuffer<float2> student_stats(allocator, static_cast<std::size_t>(rows * tiles)),
        teacher_stats(allocator, static_cast<std::size_t>(rows * tiles));
    write_logits_with_statistics(w, in, rows, V, zs.data(), zt.data(), student_stats.data(),
                                 teacher_stats.data(), stream);
    for (const bool grad : {false, true}) {
      gpu::fused::RowLossArgs args = chunk_args(in, zs.data(), zt.data(), rows, V, Hs, row_loss.data());
      args.write_grad = grad;
      args.student_stats = student_stats.data();
      args.teacher_stats = teacher_stats.data();
      args.stats_ld = tiles;
      const Timing t = time_work([&] { gpu::fused::launch_row_loss_v3(args, stream); }, stream, flush);
      fmt::print(
          "{:<44} {:>9.3f} ms  (p20-p80 {:.3f}-{:.3f})\n",
          fmt::format("row kernel v3 + GEMM statistics, {} rows, {}", rows, grad ? "with G'" : "loss only"),
          t.median_ms, t.p20_ms, t.p80_ms);
    }
  }

  // One chunk of the seed plan, step by step: where a full pass's time goes.
  {
    const gpu::fused::ChunkShape shape{.tokens = T, .vocab = V, .student_hidden = Hs};
    const auto plan = gpu::fused::plan_chunks(shape, gpu::fused::default_workspace_budget(shape),
                                              std::uint64_t{1} << 40, 0);
    REQUIRE(plan.has_value());
    const std::int64_t R = plan->rows, S = gpu::fused::grad_weight_split(V);
    gpu::DeviceBuffer<float> dx(allocator, static_cast<std::size_t>(R * Hs)),
        dw(allocator, static_cast<std::size_t>(V * Hs));
    CUDA_CHECK(cudaMemsetAsync(dw.data(), 0, dw.bytes(), stream));
    const double chunk_fraction = static_cast<double>(R) / static_cast<double>(T);
    fmt::print("\none chunk of the seed plan: R = {} rows ({} chunks)\n", R, plan->chunks);
    gpu::fused::RowLossArgs args = chunk_args(in, zs.data(), zt.data(), R, V, Hs, row_loss.data());
    const auto steps_with =
        [&](gpu::CublasLt &lt) -> std::vector<std::pair<std::string, std::function<void()>>> {
      return {
          {"z_s GEMM",
           [&] {
             lt.matmul(gpu::gemm_abt(R, V, Hs, in.student_input.data(), in.student_weight.data(), zs.data()),
                       stream);
           }},
          {"z_t GEMM",
           [&] {
             lt.matmul(gpu::gemm_abt(R, V, H, in.teacher_input.data(), in.teacher_weight.data(), zt.data()),
                       stream);
           }},
          {"row kernel v3, with G'", [&] { gpu::fused::launch_row_loss_v3(args, stream); }},
          {"grad x GEMM (fp32 out)",
           [&] {
             gpu::RowMajorGemm g = gpu::gemm_ab(R, Hs, V, zs.data(), in.student_weight.data(), dx.data());
             g.output_type = ElementType::fp32;
             lt.matmul(g, stream);
           }},
          {"grad W GEMMs (fp32, beta 1)",
           [&] {
             for (const auto &[begin, end] : {std::pair{std::int64_t{0}, S}, std::pair{S, V}}) {
               gpu::RowMajorGemm g = gpu::gemm_atb(end - begin, Hs, R, zs.data() + begin,
                                                   in.student_input.data(), dw.data() + begin * Hs);
               g.lda = V;
               g.output_type = ElementType::fp32;
               g.beta = 1.0;
               lt.matmul(g, stream);
             }
           }},
      };
    };
    // The heuristic's first picks, then the timed ones (the warm-up's first
    // call of each GEMM tunes it).
    gpu::CublasLt tuned(allocator, gpu::fused::kCublasWorkspaceBytes);
    tuned.set_tuning(gpu::kMeasuredTuning);
    for (auto *lt : {&blas, &tuned}) {
      fmt::print(" {}\n", lt == &blas ? "heuristic algorithms" : "timed algorithms");
      double total = 0.0;
      for (const auto &[name, work] : steps_with(*lt)) {
        const Timing t = time_work(work, stream, flush);
        total += t.median_ms;
        fmt::print("  {:<32} {:>9.3f} ms  (p20-p80 {:.3f}-{:.3f})\n", name, t.median_ms, t.p20_ms, t.p80_ms);
      }
      fmt::print("  {:<32} {:>9.3f} ms per chunk; x {:.3f} chunks of T = {:.3f} ms\n", "sum", total,
                 1.0 / chunk_fraction, total / chunk_fraction);
    }
    for (const gpu::TuningRecord &r : tuned.tuning_records())
      fmt::print("  tuned {:<44} {} timed, rank {} chosen: {:.3f} ms ({:.0f} TFLOP/s), first pick {:.3f} ms "
                 "({:.0f} TFLOP/s)\n",
                 r.shape, r.timed, r.chosen, r.chosen_ms, r.flops / (r.chosen_ms * 1e9), r.heuristic_ms,
                 r.flops / (r.heuristic_ms * 1e9));
  }

  fmt::print(
      "\nsummary: fused full {:.3f} ms = {:.3f} x the four GEMMs ({:.3f} ms); fused forward {:.3f} ms\n",
      fused_full.median_ms, fused_full.median_ms / gemms.median_ms, gemms.median_ms, fused_forward.median_ms);
}

// One launch of each row kernel version on a seed-sized chunk and nothing
// else, for a profiler: `ncu -k regex:row_loss kibench_tests "[gpu-profile]"`.
TEST_CASE("fused: each row kernel once on a seed chunk", "[.][gpu-profile]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const Workload w = seed_workload();
  InputSet inputs(w);
  const gpu::DeviceInputs &in = gpu::device_inputs(inputs);
  const std::int64_t rows = 2048, V = w.vocab, H = w.hidden, Hs = w.student_hidden;
  gpu::DeviceAllocator allocator("fused-profile");
  gpu::Stream stream;
  gpu::CublasLt blas(allocator, gpu::fused::kCublasWorkspaceBytes);
  using bf16 = __nv_bfloat16;
  gpu::DeviceBuffer<bf16> zs(allocator, static_cast<std::size_t>(rows * V)),
      zt(allocator, static_cast<std::size_t>(rows * V));
  gpu::DeviceBuffer<float> row_loss(allocator, static_cast<std::size_t>(rows));
  for (const gpu::fused::RowKernel &kernel :
       {gpu::fused::kRowKernelV1, gpu::fused::kRowKernelV2, gpu::fused::kRowKernelV3}) {
    blas.matmul(gpu::gemm_abt(rows, V, Hs, in.student_input.data(), in.student_weight.data(), zs.data()),
                stream);
    blas.matmul(gpu::gemm_abt(rows, V, H, in.teacher_input.data(), in.teacher_weight.data(), zt.data()),
                stream);
    gpu::fused::RowLossArgs args = chunk_args(in, zs.data(), zt.data(), rows, V, Hs, row_loss.data());
    kernel.launch(args, stream);
  }
  stream.synchronize();
  SUCCEED("every row kernel ran");
}

// Rows per chunk at the seed, in one interleaved measurement (rotated
// rounds, cold samples, then each sustained with the energy counter). The
// grad x GEMM [R, 2048, K = V] has R/128 · 16 output tiles of 128 x 128
// on 132 SMs: 2816 rows make 352 (2.67 waves), the last chunk's 2560 make
// 320 (2.42); 3072 and 2048 rows make 384 and 256 (2.91 and 1.94).
TEST_CASE("fused: rows per chunk at the seed", "[.][gpu-perf-chunks]") {
  if (!gpu::gpu_available()) {
    WARN("no GPU: chunk study skipped");
    return;
  }
  const Workload w = seed_workload();
  InputSet inputs(w);
  std::vector<std::unique_ptr<Implementation>> owned;
  std::vector<Implementation *> lanes;
  for (const std::int64_t rows : {std::int64_t{0}, std::int64_t{3072}, std::int64_t{2048}}) {
    owned.push_back(make_fused(FusedOptions{.name = rows == 0 ? "fused" : fmt::format("fused-r{}", rows),
                                            .plan = {.chunk_rows = rows}}));
    owned.back()->prepare(w, inputs);
    fmt::print("{}: {}\n", owned.back()->name(), owned.back()->run_labels().find("chunk_rows")->as_string());
    lanes.push_back(owned.back().get());
  }
  ProtocolSettings settings;
  settings.timer = "cuda_events";
  settings.min_samples = 30;
  settings.max_samples = 30;
  settings.sustained_time_s = 1.0; // a turn; kDefaultSustainedRounds turns each, medians over them
  for (const Measurement &m : measure(lanes, settings)) {
    std::vector<double> ms;
    for (const Sample &s : m.samples) ms.push_back(s.ns * 1e-6);
    const Timing t = summarize(ms);
    fmt::print("{:<14} cold {:.3f} ms (p20-p80 {:.3f}-{:.3f})", m.implementation, t.median_ms, t.p20_ms,
               t.p80_ms);
    if (m.sustained && m.sustained->energy_j)
      fmt::print("  sustained {:.3f} ms, {:.2f} J", m.sustained->latency_ns * 1e-6, *m.sustained->energy_j);
    fmt::print("\n");
  }
}

// The row kernels alone on one chunk of the fused plan's rows (hidden: run
// `kibench_dev "[gpu-perf-rows]"` on a GPU machine; the seed, or another
// workload with KIBENCH_ROWS_WORKLOAD=file.json): row-v3 and both shapes
// of row-v6, the latter with as many vectors in shared memory as fit, with
// half of them and with none (every sweep after the load reading the
// slice again from L2), on logits (and their row statistics) from
// kibench's logit GEMM, with and without the statistics, loss only and
// with G'. The loss scalars are RowLossArgs' defaults (beta 0.5, tau 1,
// which the statistics need), not the workload's: the work per logit is
// the same. Cold samples (L2 flushed before each), and the HBM rate their
// compulsory bytes make (4 a logit read, 2 more written with G').
TEST_CASE("fused: the row kernels alone on one chunk", "[.][gpu-perf-rows]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const Workload w = rows_workload("seed-distill-jsd-h4096-t8192-v128256.json");
  InputSet inputs(w);
  const gpu::DeviceInputs &in = gpu::device_inputs(inputs);
  ChunkLogits chunk(w, in, "row-kernel-perf");
  const std::int64_t R = chunk.rows, V = w.vocab;
  struct Lane {
    std::string name;
    gpu::fused::RowKernel kernel;
    std::int64_t cache_limit; // row-v6's vectors a CTA in shared memory (-1: all that fit)
  };
  std::vector<Lane> lanes{{"v3", gpu::fused::kRowKernelV3, -1}};
  struct V6 {
    int ctas;
    bool compact;
    gpu::fused::RowKernel kernel;
  };
  for (const auto &[ctas, compact, kernel] :
       {V6{2, false, gpu::fused::kRowKernelV6Pairs}, V6{4, false, gpu::fused::kRowKernelV6Quads},
        V6{2, true, gpu::fused::kRowKernelV6CompactPairs}, V6{1, true, gpu::fused::kRowKernelV6CompactSingles}}) {
    const gpu::fused::RowLossV6Layout l = gpu::fused::row_loss_v6_layout(V, ctas, compact);
    fmt::print("row-v6{}-{}x{}: {} of a slice's {} vectors fit in shared memory, {} clusters resident\n",
               compact ? "c" : "", l.ctas_per_row, l.threads, l.cached_vectors, l.slice_vectors,
               l.resident_clusters);
    lanes.push_back({kernel.name, kernel, -1});
    lanes.push_back({fmt::format("{}, {} vectors cached", kernel.name, l.cached_vectors / 2), kernel,
                     l.cached_vectors / 2});
    lanes.push_back({fmt::format("{}, none cached", kernel.name), kernel, 0});
  }
  for (const bool statistics : {true, false}) {
    for (const bool grad : {false, true}) {
      for (const Lane &lane : lanes) {
        const gpu::fused::RowLossArgs args = chunk.args(in, statistics, grad);
        const Timing t = [&] {
          const gpu::fused::ScopedRowLossV6Limits limits({.cache_vectors = lane.cache_limit});
          return time_work([&] { lane.kernel.launch(args, chunk.stream); }, chunk.stream, chunk.flush);
        }();
        const double bytes = static_cast<double>(R * V) * (grad ? 6.0 : 4.0);
        fmt::print("{:<34} {:<10} {:<9} {:>8.3f} ms  (p20-p80 {:.3f}-{:.3f})  {:>6.0f} GB/s\n", lane.name,
                   statistics ? "GEMM stats" : "own stats", grad ? "with G'" : "loss only", t.median_ms,
                   t.p20_ms, t.p80_ms, bytes / (t.median_ms * 1e-3) * 1e-9);
      }
    }
  }
}

// The row kernel's schedule within one launch (hidden: run `kibench_dev
// "[gpu-perf-rows-schedule]"`; KIBENCH_ROWS_WORKLOAD=a.json for another
// workload than the GPT-2 case). Row-v6 with a row to one CTA runs each
// row as a memory phase (the next row's copies and this row's G' writes)
// then two arithmetic sweeps (the load sweep's statistics, the KL sweep's
// terms: 5 special-function operations a logit); every CTA starts at once,
// so every SM loads at the same time and computes at the same time, and a
// row costs about the sum of the two (docs/perf-log.md, "Row-v6 singles").
// Two knobs (RowLossV6Limits) try to overlap them: the clusters of odd
// index start `stagger_ns` late, so that half the SMs load while the other
// half compute; and the compact kernel's load sweep waits for its cached
// vectors slot by slot (staged), so that its arithmetic starts while the
// row's last copies fly. A third, where the compact cache runs: the
// exponentials of 2 or 3 of each vector's 8 elements on the FMA pipe
// (ex2_fma) beside the SFU's. Each lane cold (L2 flushed), the median of three
// rounds' medians, the lanes in the same order each round; the logits as
// the GEMMs write them for one chunk, own statistics with G' (the GPT-2
// case's configuration), then, at tau = 1 with the GEMMs' statistics, with
// G' (the seed's) and without (its forward pass). KIBENCH_ROWS_LANE=text
// times only the lanes whose "configuration: lane" name contains it, so
// that a profiler's launch count starts at that lane (3 warm-up launches,
// then the samples).
TEST_CASE("fused: the row kernel's schedule on one chunk", "[.][gpu-perf-rows-schedule]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const Workload w = rows_workload("distill-jsd-h1024-t1000-v50257.json");
  InputSet inputs(w);
  const gpu::DeviceInputs &in = gpu::device_inputs(inputs);
  ChunkLogits chunk(w, in, "row-schedule-perf");
  struct Lane {
    std::string name;
    gpu::fused::RowKernel kernel;
    gpu::fused::RowLossV6Limits limits;
  };
  struct Configuration {
    const char *name;
    bool statistics, grad;
  };
  for (const Configuration &config :
       {Configuration{"own statistics, G'", false, true}, Configuration{"GEMM statistics, G'", true, true},
        Configuration{"GEMM statistics, forward", true, false}}) {
    std::vector<Lane> lanes;
    if (!config.statistics) {
      // A share of the exponentials on the FMA pipe (ex2_fma), where the
      // compact cache runs.
      for (const gpu::fused::RowKernel &kernel :
           {gpu::fused::kRowKernelV6CompactSinglesFma2, gpu::fused::kRowKernelV6CompactSinglesFma3}) {
        for (const bool staged : {false, true})
          lanes.push_back({fmt::format("{}, {}", kernel.name, staged ? "staged wait" : "wait all"),
                           kernel,
                           {.staged_wait = staged}});
      }
    }
    for (const gpu::fused::RowKernel &kernel :
         {gpu::fused::kRowKernelV6CompactSingles, gpu::fused::kRowKernelV6CompactPairs}) {
      for (const bool staged : config.statistics ? std::vector<bool>{false} : std::vector<bool>{false, true}) {
        for (const std::int64_t stagger_us : {0, 2, 4, 6, 9, 12})
          lanes.push_back({fmt::format("{}, {}, stagger {} us", kernel.name,
                                       staged ? "staged wait" : "wait all", stagger_us),
                           kernel,
                           {.stagger_ns = stagger_us * 1000, .staged_wait = staged}});
      }
    }
    // Two rows in flight an SM (CTAs of 512 threads, two an SM).
    for (const gpu::fused::RowKernel &kernel :
         {gpu::fused::kRowKernelV6CompactSingles512, gpu::fused::kRowKernelV6CompactPairs512})
      lanes.push_back({fmt::format("{}, wait all, stagger 0 us", kernel.name), kernel, {}});
    // Four and eight rows an SM where a pass reads each vector once (the
    // shipped kernel in the other configurations).
    if (config.statistics && !config.grad) {
      for (const gpu::fused::RowKernel &kernel :
           {gpu::fused::kRowKernelV6ReadOnce256, gpu::fused::kRowKernelV6ReadOnce128})
        lanes.push_back({fmt::format("{}, wait all, stagger 0 us", kernel.name), kernel, {}});
    }
    if (const char *only = std::getenv("KIBENCH_ROWS_LANE"); only != nullptr) {
      std::erase_if(lanes, [&](const Lane &lane) {
        return fmt::format("{}: {}", config.name, lane.name).find(only) == std::string::npos;
      });
      if (lanes.empty()) continue;
    }
    const gpu::fused::RowLossArgs args = chunk.args(in, config.statistics, config.grad);
    std::vector<std::vector<double>> medians(lanes.size());
    for (int round = 0; round < 3; ++round) {
      for (std::size_t i = 0; i < lanes.size(); ++i) {
        const gpu::fused::ScopedRowLossV6Limits limits(lanes[i].limits);
        medians[i].push_back(
            time_work([&] { lanes[i].kernel.launch(args, chunk.stream); }, chunk.stream, chunk.flush)
                .median_ms);
      }
    }
    fmt::print("{}:\n", config.name);
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      const Timing t = summarize(medians[i]);
      fmt::print("  {:<46} {:>8.3f} ms  (rounds {:.3f}-{:.3f})\n", lanes[i].name, t.median_ms,
                 *std::min_element(medians[i].begin(), medians[i].end()),
                 *std::max_element(medians[i].begin(), medians[i].end()));
    }
  }
}

// The overlap study. The premise of docs/perf.md's lever 1, measured before it is built: the
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
namespace {

constexpr int kOverlapSamples = 9;
constexpr double kBurstSeconds = 0.3;
constexpr int kSplits[] = {4, 8, 12, 16, 24, 32}; // row kernel clusters (2 SMs each) beside the GEMMs

using bf16 = __nv_bfloat16;

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
    gpu::fused::RowLossArgs args =
        chunk_args(in, c.zs.data(), c.zt.data(), rows, w.vocab, w.student_hidden, row_loss);
    args.ld = ld;
    args.target += c.first;
    args.student_input += c.first * w.student_hidden;
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
  for (int round = 0; round < kOverlapSamples; ++round)
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
  for (std::size_t i = 0; i < n; ++i) m[i].cold_ms = dev::median(cold[i]);

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
  const Workload w = rows_workload("seed-distill-jsd-h4096-t8192-v128256.json");
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
