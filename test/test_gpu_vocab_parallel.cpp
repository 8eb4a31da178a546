// [gpu] The single-GPU emulation of the vocabulary-parallel fused loss
// (`fused-vp<n>-emulated`, kernels/lm_head/vocab_parallel/emulated_implementation.hpp)
// against the fp64 CPU oracle for 1, 2, 3 and 8 shards: every small
// workload, and the shapes the `fused` tests use (V not divisible by the
// shard count, odd V and Hs, V = 50257, V = 13 where 8 shards hold one or
// two columns each, T = 1, beta 0, 0.5 and 1, tau != 1, ignored tokens,
// biases). Outputs are poisoned before every run; each run must pass the
// workload's correctness policy and the bounds the `fused` tests hold fused
// to, and its loss must match `fused`'s on the same inputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_allocator.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/lm_head/fused/fused_implementation.hpp"
#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "kernels/common/device_compare.hpp"
#include "kernels/registry.hpp"
#include "kernels/lm_head/vocab_parallel/device_communicator.hpp"
#include "kernels/lm_head/vocab_parallel/emulated_implementation.hpp"
#include "kernels/lm_head/vocab_parallel/multi_gpu_implementation.hpp"
#include "kernels/cuda/nccl.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/multi_device_timer.hpp"
#include "kernels/lm_head/vocab_parallel/local_reduction.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/workload/workload.hpp"
#include "test/test_gpu_checks.hpp"
#include "test/test_gpu_support.hpp"
#include "test/source_tree.hpp"

using namespace kibench;
using namespace kibench::test;

namespace {

namespace fs = std::filesystem;

constexpr int kShardCounts[] = {1, 2, 3, 8};
// The bounds test_gpu_fused.cpp holds `fused` to.
constexpr double kGradientBound = 2e-3;
constexpr double kLossBound = 1e-5;
// With a dozen logits per row the bf16 rounding of the logits does not
// average out (test_gpu_fused.cpp, the V = 13 case).
constexpr double kFewLogitsLossBound = 1e-4;

// From the checkout the tests run in (the repository root), else the source tree.
fs::path small_workloads() {
  const fs::path local = fs::path("workloads") / "small";
  return fs::exists(local) ? local : kibench::test::source_dir() / "workloads" / "small";
}

// The workload, its inputs, the oracle's answer, and `fused`'s loss.
struct Reference {
  const Workload &workload;
  InputSet &inputs;
  OracleResult oracle;
  double fused_loss = 0.0;
  double loss_bound = kLossBound;
};

Reference reference_for(const Workload &w, InputSet &inputs) {
  Reference ref{w, inputs, run_oracle(oracle_problem(w, inputs.host()), /*with_gradients=*/true)};
  ref.loss_bound = w.vocab < 100 ? kFewLogitsLossBound : kLossBound;
  // fused on cuBLASLt's heuristic picks, its own statistics sweep.
  auto fused =
      make_fused(FusedOptions{.logit_statistics = LogitStatistics::off, .plan = {.gemm_candidates = 1}});
  REQUIRE_FALSE(fused->unsupported(w).has_value());
  fused->prepare(w, inputs);
  fused->poison_outputs();
  fused->run(Pass::forward);
  ref.fused_loss = fused->outputs().loss;
  fused->release();
  return ref;
}

// One gradient: the policy's ErrorStats, and fused's bound on top.
ErrorStats gradient_error(const char *name, const TensorRef &out, const std::vector<double> &ref) {
  return test::check_device_gradient(name, out, ref, kGradientBound);
}

// prepare, poison, run `impl` for `pass`, and check it against the references.
void check_implementation(const Reference &ref, Implementation &impl, const std::string &what, Pass pass) {
  const Workload &w = ref.workload;
  INFO(fmt::format("{}: {}, pass {}; T={} V={} Hs={} beta={} tau={} bias={}", w.name, what,
                   pass == Pass::forward ? "forward" : "full", w.tokens, w.vocab, w.student_hidden, w.scalars.beta,
                   w.scalars.temperature, w.student_bias.has_value()));
  const auto why_not = impl.unsupported(w);
  INFO(why_not.value_or("supported"));
  REQUIRE_FALSE(why_not.has_value());
  impl.prepare(w, ref.inputs);
  impl.poison_outputs();
  impl.run(pass);
  const OutputView out = impl.outputs();

  INFO(fmt::format("loss {:.12g}, oracle {:.12g}, fused {:.12g}", out.loss, ref.oracle.loss, ref.fused_loss));
  CHECK(std::isfinite(out.loss));
  CHECK(relative_error(out.loss, ref.oracle.loss) <= ref.loss_bound);
  // Two bf16 implementations of one loss differ by their own errors at most.
  CHECK(relative_error(out.loss, ref.fused_loss) <= 2 * ref.loss_bound);
  std::vector<ErrorStats> errors{compare_scalar("loss", out.loss, ref.oracle.loss)};
  if (pass == Pass::forward) {
    CHECK(out.grad_student_input.empty());
    CHECK(out.grad_student_weight.empty());
    CHECK(out.grad_student_bias.empty());
  } else {
    const OracleGradients &g = ref.oracle.gradients;
    errors.push_back(gradient_error("grad_student_input", out.grad_student_input, g.student_input));
    errors.push_back(gradient_error("grad_student_weight", out.grad_student_weight, g.student_weight));
    if (w.student_bias) {
      errors.push_back(gradient_error("grad_student_bias", out.grad_student_bias, g.student_bias));
    } else {
      CHECK(out.grad_student_bias.empty());
    }
  }
  const CorrectnessVerdict verdict = make_verdict(std::move(errors), w.correctness);
  INFO(verdict.summary);
  CHECK(verdict.passed);
  impl.release();
}

// The emulation with `shards` shards and `chunk_rows` (0: its own choice).
void check_emulation(const Reference &ref, int shards, std::int64_t chunk_rows, Pass pass) {
  auto impl = make_vocab_parallel_emulated(
      {.name = vocab_parallel_emulation_name(shards), .shards = shards, .chunk_rows = chunk_rows});
  check_implementation(ref, *impl, fmt::format("{} shards, chunk rows {}", shards, chunk_rows), pass);
}

// `fused-vocab-parallel` instances by (GPU count, chunk rows), each
// prepared for one workload after another: the checks also cover a second
// prepare() on the same instance, and its NCCL communicator (about a second
// to create over 8 GPUs) is made once per GPU count and chunk rows.
using MultiGpuInstances = std::map<std::pair<int, std::int64_t>, std::unique_ptr<Implementation>>;

// `fused-vocab-parallel` over GPUs 0 .. gpus − 1.
void check_multi_gpu(MultiGpuInstances &instances, const Reference &ref, int gpus, std::int64_t chunk_rows,
                     Pass pass) {
  auto &impl = instances[{gpus, chunk_rows}];
  if (!impl) impl = make_vocab_parallel({.gpus = gpus, .chunk_rows = chunk_rows});
  check_implementation(ref, *impl, fmt::format("fused-vocab-parallel on {} GPUs, chunk rows {}", gpus, chunk_rows),
                       pass);
}

// Every shard count, the full pass in chunks of `chunk_rows` and in the
// emulation's own chunking, and the forward pass.
void check_workload(const Workload &w, std::int64_t chunk_rows) {
  InputSet inputs(w);
  const Reference ref = reference_for(w, inputs);
  for (const int shards : kShardCounts) {
    if (shards > w.vocab) continue;
    check_emulation(ref, shards, chunk_rows, Pass::full);
    check_emulation(ref, shards, 0, Pass::full);
    check_emulation(ref, shards, 0, Pass::forward);
  }
}

// The GPU counts of kShardCounts this machine has (1 always).
std::vector<int> gpu_counts_present() {
  std::vector<int> out;
  for (const int n : kShardCounts)
    if (n <= gpu::gpu_availability().device_count) out.push_back(n);
  return out;
}

// The same for fused-vocab-parallel on every GPU count present.
void check_workload_multi_gpu(MultiGpuInstances &instances, const Workload &w, std::int64_t chunk_rows) {
  InputSet inputs(w);
  const Reference ref = reference_for(w, inputs);
  for (const int gpus : gpu_counts_present()) {
    if (gpus > w.vocab) continue;
    check_multi_gpu(instances, ref, gpus, chunk_rows, Pass::full);
    check_multi_gpu(instances, ref, gpus, 0, Pass::full);
    check_multi_gpu(instances, ref, gpus, 0, Pass::forward);
  }
}

// Returns from the test case, with a warning, when NCCL cannot be loaded.
#define KIBENCH_REQUIRE_NCCL_OR_SKIP()                                                                       \
  do {                                                                                                       \
    std::string why_no_nccl;                                                                                 \
    if (gpu::Nccl::find(why_no_nccl) == nullptr) {                                                           \
      WARN(why_no_nccl << "; NCCL test skipped");                                                            \
      return;                                                                                                \
    }                                                                                                        \
  } while (false)

struct Shape {
  test::GpuCase shape;
  std::int64_t chunk_rows;
};

// The shapes the `fused` tests use, V divisible by none of the shard counts.
std::vector<Shape> fused_test_shapes() {
  return {
      {{.name = "vp-mixture-bias-ignored",
        .tokens = 40,
        .vocab = 1001,
        .hidden = 70,
        .ignore_fraction = 0.25,
        .bias = true,
        .seed = 31},
       9},
      {{.name = "vp-beta0-tau-half",
        .tokens = 48,
        .vocab = 3001,
        .hidden = 128,
        .beta = 0.0,
        .temperature = 0.5,
        .seed = 32},
       16},
      {{.name = "vp-beta1-tau2-odd",
        .tokens = 40,
        .vocab = 517,
        .hidden = 66,
        .beta = 1.0,
        .temperature = 2.0,
        .seed = 33},
       9},
      {{.name = "vp-tau2-bias",
        .tokens = 40,
        .vocab = 2049,
        .hidden = 66,
        .temperature = 2.0,
        .bias = true,
        .seed = 34},
       13},
      {{.name = "vp-v50257", .tokens = 16, .vocab = 50257, .hidden = 64, .seed = 35}, 5},
      {{.name = "vp-t1", .tokens = 1, .vocab = 3001, .hidden = 128, .seed = 36}, 1},
      {{.name = "vp-t1-v50257-beta1", .tokens = 1, .vocab = 50257, .hidden = 64, .beta = 1.0, .seed = 37}, 1},
      {{.name = "vp-v13", .tokens = 24, .vocab = 13, .hidden = 64, .seed = 38}, 10},
      {{.name = "vp-v13-bias-beta0",
        .tokens = 24,
        .vocab = 13,
        .hidden = 64,
        .beta = 0.0,
        .bias = true,
        .seed = 39},
       10},
      {{.name = "vp-all-ignored",
        .tokens = 24,
        .vocab = 1003,
        .hidden = 64,
        .ignore_fraction = 1.0,
        .bias = true,
        .seed = 40},
       10},
  };
}

} // namespace

TEST_CASE("fused-vp-emulated: every small workload, 1, 2, 3 and 8 shards", "[gpu][vocab_parallel]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  int checked = 0;
  for (const auto &file : list_workload_files(small_workloads())) {
    const Workload w = load_workload(file);
    // Chunks of 7 rows: several, the last one short (T = 32), and one at T = 1.
    check_workload(w, 7);
    ++checked;
  }
  CHECK(checked >= 9); // odd vocabulary, T = 1, all ignored, beta 0 and 1, tau 2, bias, ...
}

TEST_CASE("fused-vp-emulated: the fused tests' shapes, V divisible by none of the shard counts",
          "[gpu][vocab_parallel]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const std::vector<Shape> shapes = fused_test_shapes();
  for (const Shape &s : shapes) {
    Workload w = test::make_gpu_workload(s.shape);
    INFO(w.name);
    check_workload(w, s.chunk_rows);
  }
}

TEST_CASE("fused-vp-emulated: the same bits from run to run", "[gpu][vocab_parallel]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const Workload w = test::make_gpu_workload({.name = "vp-bits",
                                              .tokens = 40,
                                              .vocab = 1001,
                                              .hidden = 70,
                                              .ignore_fraction = 0.1,
                                              .bias = true,
                                              .seed = 41});
  InputSet inputs(w);
  auto impl =
      make_vocab_parallel_emulated({.name = vocab_parallel_emulation_name(3), .shards = 3, .chunk_rows = 9});
  impl->prepare(w, inputs);
  const auto bytes_of = [](const TensorRef &t) {
    const std::size_t bytes = static_cast<std::size_t>(t.count) * (t.type == ElementType::bf16 ? 2 : 4);
    std::vector<unsigned char> host(bytes);
    REQUIRE(cudaMemcpy(host.data(), t.data, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    return host;
  };
  std::vector<std::vector<unsigned char>> runs;
  std::vector<double> losses;
  for (int run = 0; run < 2; ++run) {
    impl->poison_outputs();
    impl->run(Pass::full);
    const OutputView out = impl->outputs();
    losses.push_back(out.loss);
    std::vector<unsigned char> all = bytes_of(out.grad_student_input);
    for (const TensorRef *t : {&out.grad_student_weight, &out.grad_student_bias}) {
      const auto more = bytes_of(*t);
      all.insert(all.end(), more.begin(), more.end());
    }
    runs.push_back(std::move(all));
  }
  CHECK(losses[0] == losses[1]);
  CHECK(runs[0] == runs[1]);
}

TEST_CASE("fused-vp-emulated: run labels name the shard count and each shard's columns",
          "[gpu][vocab_parallel]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const RegisteredImplementation *r = find_implementation("fused-vp8-emulated");
  REQUIRE(r != nullptr);
  const Workload w = test::make_gpu_workload({.name = "vp-labels", .tokens = 8, .vocab = 1003, .hidden = 64});
  InputSet inputs(w);
  auto impl = make_vocab_parallel_emulated({.name = vocab_parallel_emulation_name(3), .shards = 3});
  impl->prepare(w, inputs);
  const json::Object labels = impl->run_labels();
  CHECK(labels.find("vocab_shards")->as_string() == "3");
  // 1003 = 335 + 334 + 334.
  CHECK(labels.find("shard_0_columns")->as_string() == "[0, 335)");
  CHECK(labels.find("shard_1_columns")->as_string() == "[335, 669)");
  CHECK(labels.find("shard_2_columns")->as_string() == "[669, 1003)");
  CHECK(labels.find("shard_3_columns") == nullptr);
  CHECK(labels.find("chunks")->as_string() == "1");
  impl->release();

  // More shards than vocabulary rows: said before anything runs.
  const Workload tiny = test::make_gpu_workload({.name = "vp-tiny", .tokens = 4, .vocab = 5, .hidden = 16});
  const auto why_not = r->make()->unsupported(tiny);
  REQUIRE(why_not.has_value());
  CHECK(why_not->find("8 shards for a vocabulary of 5") != std::string::npos);
}

TEST_CASE("LocalDeviceCommunicator gives the host schedule's bits", "[gpu][vocab_parallel]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  std::mt19937_64 rng(7);
  // Magnitudes far apart, so that another order of the sums gives other bits.
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  gpu::DeviceAllocator allocator("test");
  for (const int ranks : kShardCounts) {
    INFO(ranks << " ranks");
    constexpr std::size_t kCount = 1000;
    std::vector<std::vector<float>> host(static_cast<std::size_t>(ranks));
    for (auto &buffer : host)
      for (std::size_t i = 0; i < kCount; ++i) buffer.push_back(std::ldexp(mantissa(rng), exponent(rng)));
    for (const bool sum : {false, true}) {
      std::vector<gpu::DeviceBuffer<float>> device;
      std::vector<vocab_parallel::RankBuffer> device_spans;
      for (const auto &buffer : host) {
        auto &d = device.emplace_back(allocator, kCount);
        CUDA_CHECK(cudaMemcpy(d.data(), buffer.data(), d.bytes(), cudaMemcpyHostToDevice));
      }
      for (auto &d : device) device_spans.push_back({{d.data(), kCount}, nullptr});
      vocab_parallel::LocalDeviceCommunicator communicator(ranks);
      sum ? communicator.all_reduce_sum(device_spans) : communicator.all_reduce_max(device_spans);
      CUDA_CHECK(cudaDeviceSynchronize());

      auto expected = host;
      std::vector<std::span<float>> host_spans(expected.begin(), expected.end());
      const auto schedule = vocab_parallel::local_reduction_schedule(ranks);
      if (sum) {
        vocab_parallel::reduce_on_host(schedule, host_spans, vocab_parallel::SumOf{});
      } else {
        vocab_parallel::reduce_on_host(schedule, host_spans, vocab_parallel::MaxOf{});
      }
      for (int r = 0; r < ranks; ++r) {
        std::vector<float> out(kCount);
        CUDA_CHECK(cudaMemcpy(out.data(), device[static_cast<std::size_t>(r)].data(), kCount * sizeof(float),
                              cudaMemcpyDeviceToHost));
        CHECK(out == expected[static_cast<std::size_t>(r)]);
      }
    }
  }
}

TEST_CASE("fused-vocab-parallel: every small workload and the fused tests' shapes, on 1 GPU through NCCL and "
          "on 2, 3 and 8 where present",
          "[gpu][vocab_parallel]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  KIBENCH_REQUIRE_NCCL_OR_SKIP();
  INFO(fmt::format("GPU counts checked: {}", fmt::join(gpu_counts_present(), ", ")));
  MultiGpuInstances instances;
  for (const auto &file : list_workload_files(small_workloads()))
    check_workload_multi_gpu(instances, load_workload(file), 7);
  for (const Shape &s : fused_test_shapes()) {
    Workload w = test::make_gpu_workload(s.shape);
    INFO(w.name);
    check_workload_multi_gpu(instances, w, s.chunk_rows);
  }
}

TEST_CASE("fused-vocab-parallel: labels, memory, and a timer over every GPU", "[gpu][vocab_parallel]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  KIBENCH_REQUIRE_NCCL_OR_SKIP();
  const int gpus = gpu_counts_present().back();
  const Workload w = test::make_gpu_workload({.name = "vp-timer", .tokens = 64, .vocab = 4099, .hidden = 128});
  InputSet inputs(w);
  auto impl = make_vocab_parallel({.gpus = gpus, .chunk_rows = 16});
  impl->prepare(w, inputs);
  const json::Object labels = impl->run_labels();
  CHECK(labels.find("parallel_layout")->as_string().find(fmt::format("over {} GPUs", gpus)) != std::string::npos);
  CHECK(labels.find(fmt::format("rank_{}", gpus - 1)) != nullptr);
  CHECK(labels.find(fmt::format("rank_{}", gpus)) == nullptr);
  CHECK(labels.find("chunks")->as_string() == "4");
  const MemoryUse memory = impl->memory();
  // Each rank's grad W rows (bf16), grad x (bf16) and the loss are the outputs.
  CHECK(memory.output_bytes >= static_cast<std::uint64_t>(2 * (w.vocab + w.tokens) * w.student_hidden + 8));
  // Device 0's inputs and every rank's copies of its W_s and W_t rows.
  CHECK(memory.input_bytes > gpu::device_inputs(inputs).bytes());
  CHECK(memory.workspace_bytes > 0);

  {
    // The device is closed before release() (device.hpp): it waits on the
    // ranks' streams, which release() destroys.
    const auto device = impl->open_device();
    auto timer = device->make_timer();
    device->flush_caches();
    timer->start();
    impl->run(Pass::full);
    timer->stop();
    const double ns = timer->elapsed_ns();
    const auto &per_device = dynamic_cast<gpu::MultiDeviceTimer &>(*timer).device_ns();
    REQUIRE(per_device.size() == static_cast<std::size_t>(gpus));
    CHECK(ns > 0.0);
    for (const double d : per_device) CHECK(d <= ns);
    CHECK(timer->name() == "cuda_events");
  }
  impl->release();
  CHECK(impl->memory().peak_bytes == 0);
}
