// jsd and fused_linear_jsd on the GPU, against the fp64 CPU oracle: every
// GPU implementation of each (fused, reference, oracle-fp64) on the small
// workloads and on odd shapes (V no multiple of 4 or 8, T = 1, every token
// ignored, beta 0, 0.5 and 1), outputs poisoned before every run; the device
// inputs bit-identical to the host's; copy-floor moving what it claims.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/jsd/jsd_kernels.hpp"
#include "kernels/machine/backend.hpp"
#include "kernels/registry.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/inputs/generate.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/run/backend.hpp"
#include "lib/workload/workload.hpp"
#include "test/test_gpu_support.hpp"
#include "test/source_tree.hpp"
#include "lib/operations/registry.hpp"

namespace fs = std::filesystem;
using namespace kibench;

namespace {

const fs::path kWorkloads = kibench::test::source_dir() / "workloads";

// A jsd workload built in code: fp32 log-probabilities of this shape.
Workload jsd_workload(std::int64_t tokens, std::int64_t vocab, double beta, double ignore_fraction,
                      std::uint64_t seed) {
  Workload w = load_workload(kWorkloads / "jsd" / "small" / "jsd-small-t32-v1000.json");
  w.name = "jsd-gpu-case";
  w.tokens = tokens;
  w.vocab = vocab;
  w.scalars.beta = beta;
  w.student_log_probs.seed = 10 * seed + 1;
  w.teacher_log_probs.seed = 10 * seed + 2;
  w.has_target = true;
  w.target = GeneratorSpec{.name = "philox4x32_10_uniform_int",
                           .seed = 10 * seed + 3,
                           .low = 0.0,
                           .high = static_cast<double>(vocab),
                           .ignore_fraction = ignore_fraction};
  return w;
}

// Runs `name` on `w` for `pass` after poisoning its outputs; the verdict of
// its outputs against the CPU oracle's under the workload's policy.
CorrectnessVerdict check(const std::string &name, const Workload &w, Pass pass, InputSet &inputs,
                         const OutputView &truth) {
  const auto backend = make_backend();
  const auto impl = backend->make(name);
  REQUIRE(impl != nullptr);
  const auto why = impl->unsupported_for(w, pass);
  INFO(name << ": " << why.value_or(""));
  REQUIRE_FALSE(why);
  impl->prepare(w, inputs);
  impl->poison_outputs();
  impl->run(pass);
  const OutputView out = impl->outputs();
  if (pass == Pass::forward) CHECK(out.grad_student_input.empty());
  CorrectnessVerdict verdict = make_verdict(backend->compare(out, truth, pass != Pass::forward), w.correctness);
  impl->release();
  return verdict;
}

void check_all(const Workload &w) {
  InputSet inputs(w);
  for (const Pass pass : {Pass::full, Pass::forward}) {
    const auto oracle = find_implementation("cpu-fp64")->make();
    oracle->prepare(w, inputs);
    oracle->run(pass);
    const OutputView truth = oracle->outputs();
    for (const char *name : {"oracle-fp64", "fused", "reference"}) {
      const CorrectnessVerdict verdict = check(name, w, pass, inputs, truth);
      INFO(w.name << " " << name << " " << to_string(pass) << ": " << verdict.summary);
      CHECK(verdict.passed);
      for (const ErrorStats &e : verdict.outputs) CHECK(e.nonfinite == 0);
      if (std::string(name) == "oracle-fp64") // fp64 both sides: the same sums in other orders
        for (const ErrorStats &e : verdict.outputs) CHECK(e.rel_l2_error <= 1e-12);
    }
  }
}

} // namespace

TEST_CASE("jsd on the GPU matches the CPU oracle on the small workloads", "[gpu][jsd]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  for (const fs::path &file : list_workload_files(kWorkloads / "jsd" / "small")) {
    DYNAMIC_SECTION(file.filename().string()) { check_all(load_workload(file)); }
  }
}

TEST_CASE("jsd on the GPU matches the CPU oracle on odd shapes", "[gpu][jsd]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  struct Shape {
    std::int64_t tokens, vocab;
    double beta, ignore_fraction;
  };
  // V = 4099 and 1001: the scalar (unvectorized) path; 4096: float4 rows;
  // V = 32772 and 65536: many unrolled iterations a thread, the last one
  // partial at 32772 (8193 float4); T = 1; more rows than blocks (T = 3000).
  const std::vector<Shape> shapes{{1, 4099, 0.5, 0.0},   {7, 1001, 0.0, 0.0},   {7, 1001, 1.0, 0.0},
                                  {64, 4096, 0.5, 0.25}, {64, 4096, 0.0, 0.25}, {64, 4096, 1.0, 0.25},
                                  {16, 4096, 0.5, 1.0},  {3000, 512, 0.3, 0.1}, {3, 32772, 0.5, 0.0},
                                  {2, 65536, 1.0, 0.0}};
  std::uint64_t seed = 1;
  for (const Shape &s : shapes) {
    DYNAMIC_SECTION("T=" << s.tokens << " V=" << s.vocab << " beta=" << s.beta << " ignored=" << s.ignore_fraction) {
      check_all(jsd_workload(s.tokens, s.vocab, s.beta, s.ignore_fraction, seed));
    }
    ++seed;
  }
}

TEST_CASE("fused_linear_jsd on the GPU matches the CPU oracle on the small workloads", "[gpu][jsd]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  for (const fs::path &file : list_workload_files(kWorkloads / "fused_linear_jsd" / "small")) {
    DYNAMIC_SECTION(file.filename().string()) {
      const Workload w = load_workload(file);
      InputSet inputs(w);
      const auto oracle = find_implementation("cpu-fp64")->make();
      oracle->prepare(w, inputs);
      oracle->run(Pass::full);
      const OutputView truth = oracle->outputs();
      for (const char *name : {"oracle-fp64", "fused", "fused-cublaslt", "reference"}) {
        const CorrectnessVerdict verdict = check(name, w, Pass::full, inputs, truth);
        INFO(name << ": " << verdict.summary);
        CHECK(verdict.passed);
      }
    }
  }
}

TEST_CASE("jsd's device inputs are the host's, bit for bit", "[gpu][jsd][inputs]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const Workload w = jsd_workload(33, 1003, 0.5, 0.25, 7);
  const HostInputs host = generate_host_inputs(w);
  const auto device = gpu::generate_device_inputs(w);
  for (const auto &[expected, buffer] : {std::pair{&host.student_log_probs, &device->student_log_probs},
                                         std::pair{&host.teacher_log_probs, &device->teacher_log_probs}}) {
    REQUIRE(buffer->size() == expected->size());
    std::vector<float> copy(buffer->size());
    CUDA_CHECK(cudaMemcpy(copy.data(), buffer->data(), buffer->bytes(), cudaMemcpyDeviceToHost));
    CHECK(copy == *expected);
  }
  std::vector<std::int64_t> target(device->target.size());
  CUDA_CHECK(cudaMemcpy(target.data(), device->target.data(), device->target.bytes(), cudaMemcpyDeviceToHost));
  CHECK(target == host.target);
  CHECK(device->student_input.empty());
}

TEST_CASE("copy-floor's kernels move the bytes they claim", "[gpu][jsd]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  // count not a multiple of 4 (scalar path) and a multiple (float4 path),
  // each larger than one grid's sweep.
  for (const std::size_t count : {std::size_t{3'000'001}, std::size_t{4'000'000}}) {
    std::vector<float> a(count), b(count);
    for (std::size_t k = 0; k < count; ++k) {
      a[k] = static_cast<float>(k % 1000) * 0.5f;
      b[k] = -static_cast<float>(k % 7);
    }
    float *da = nullptr, *db = nullptr, *dout = nullptr, *dpartial = nullptr;
    for (float **p : {&da, &db, &dout})
      CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(p), count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&dpartial), sizeof(float) * gpu::jsd::read_floor_blocks()));
    CUDA_CHECK(cudaMemcpy(da, a.data(), count * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, b.data(), count * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dout, 0xFF, count * 4)); // NaN: an element not written shows
    gpu::jsd::copy_floor(da, db, count, dout, nullptr);
    gpu::jsd::read_floor(da, db, count, dpartial, nullptr);
    std::vector<float> out(count), partial(static_cast<std::size_t>(gpu::jsd::read_floor_blocks()));
    CUDA_CHECK(cudaMemcpy(out.data(), dout, count * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(partial.data(), dpartial, partial.size() * 4, cudaMemcpyDeviceToHost));
    std::size_t wrong = 0;
    double expected_sum = 0.0, sum = 0.0;
    for (std::size_t k = 0; k < count; ++k) {
      wrong += out[k] == a[k] + b[k] ? 0 : 1;
      expected_sum += double(a[k]) + double(b[k]);
    }
    for (const float p : partial) sum += p;
    CHECK(wrong == 0);
    CHECK(sum == Approx(expected_sum).epsilon(1e-4));
    for (float *p : {da, db, dout, dpartial}) CUDA_CHECK(cudaFree(p));
  }
  const Workload w = jsd_workload(64, 4096, 0.5, 0.0, 3);
  const auto floor = find_implementation("copy-floor")->make();
  CHECK_FALSE(floor->computes_loss());
  CHECK(floor->runs(operation_named("jsd")));
  CHECK_FALSE(floor->runs(operation_named("distill_jsd_loss")));
  CHECK(floor->unsupported_for(w, Pass::backward).has_value());
}
