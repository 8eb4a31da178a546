// The GPU reference against the GPU fp64 oracle under the seed's policy
// (maxRelativeError 1e-2), and the GPU oracle against the CPU oracle on the
// small cases (to ~1e-10). Every case draws fresh inputs (its own seeds)
// and every run starts from poisoned outputs, so an element a kernel skips
// shows up as NaN.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "kernels/lm_head/floors/cublas_floor.hpp"
#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "kernels/common/device_compare.hpp"
#include "kernels/lm_head/oracle/oracle_fp64.hpp"
#include "kernels/lm_head/reference/reference.hpp"
#include "kernels/registry.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/manifest/implementation_manifest.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

namespace {

std::vector<ErrorStats> compare_outputs(const OutputView &out, const OutputView &ref) {
  std::vector<ErrorStats> errors{compare_scalar("loss", out.loss, ref.loss)};
  errors.push_back(gpu::compare_device("grad_student_input", out.grad_student_input, ref.grad_student_input));
  errors.push_back(
      gpu::compare_device("grad_student_weight", out.grad_student_weight, ref.grad_student_weight));
  if (!ref.grad_student_bias.empty() || !out.grad_student_bias.empty())
    errors.push_back(gpu::compare_device("grad_student_bias", out.grad_student_bias, ref.grad_student_bias));
  return errors;
}

void log_errors(const std::string &what, const std::vector<ErrorStats> &errors) {
  for (const ErrorStats &e : errors)
    UNSCOPED_INFO(fmt::format("{} {}: rel_l2 {:.3e}, max_abs {:.3e}, |ref| {:.3e}, nonfinite {}", what,
                              e.output, e.rel_l2_error, e.max_abs_error, e.ref_l2_norm, e.nonfinite));
}

OutputView run_poisoned(Implementation &impl, const Workload &w, InputSet &inputs, Pass pass) {
  REQUIRE_FALSE(impl.unsupported(w).has_value());
  impl.prepare(w, inputs);
  impl.poison_outputs();
  impl.before_sample(pass);
  impl.run(pass);
  return impl.outputs();
}

// The fp64 GPU oracle against the CPU oracle: the same numbers up to the
// order of fp64 sums.
void check_oracle_against_cpu(const Workload &w, InputSet &inputs, const OutputView &gpu_oracle) {
  const OracleResult cpu = run_oracle(oracle_problem(w, inputs.host()), true);
  const auto host = [](const std::vector<double> &v) {
    return TensorRef{v.data(), ElementType::fp64, static_cast<std::int64_t>(v.size()), false};
  };
  OutputView cpu_view;
  cpu_view.loss = cpu.loss;
  cpu_view.grad_student_input = host(cpu.gradients.student_input);
  cpu_view.grad_student_weight = host(cpu.gradients.student_weight);
  if (!cpu.gradients.student_bias.empty()) cpu_view.grad_student_bias = host(cpu.gradients.student_bias);
  const std::vector<ErrorStats> errors = compare_outputs(gpu_oracle, cpu_view);
  log_errors("oracle-fp64 vs cpu-fp64", errors);
  for (const ErrorStats &e : errors) {
    CHECK(e.nonfinite == 0);
    if (e.ref_l2_norm > 0.0)
      CHECK(e.rel_l2_error < 1e-10);
    else
      CHECK(e.max_abs_error == 0.0);
  }
}

void check_case(const test::GpuCase &c, bool against_cpu) {
  const Workload w = test::make_gpu_workload(c);
  InputSet inputs(w);
  INFO("case " << c.name << ": T=" << c.tokens << " V=" << c.vocab << " H=" << c.hidden << " beta=" << c.beta
               << " tau=" << c.temperature << " ignored=" << c.ignore_fraction << " bias=" << c.bias);

  auto oracle = make_oracle_fp64();
  const OutputView ref = run_poisoned(*oracle, w, inputs, Pass::full);
  REQUIRE(std::isfinite(ref.loss));
  REQUIRE(ref.grad_student_input.type == ElementType::fp64);
  REQUIRE(ref.grad_student_bias.empty() == !c.bias);
  if (against_cpu) check_oracle_against_cpu(w, inputs, ref);

  auto reference = make_reference();
  const OutputView out = run_poisoned(*reference, w, inputs, Pass::full);
  REQUIRE(out.grad_student_weight.type == ElementType::bf16);
  const std::vector<ErrorStats> errors = compare_outputs(out, ref);
  log_errors("reference vs oracle-fp64", errors);
  const CorrectnessVerdict verdict = make_verdict(errors, w.correctness);
  INFO(verdict.summary);
  CHECK(verdict.passed);
  for (const ErrorStats &e : verdict.outputs) CHECK(e.nonfinite == 0);

  // The chain's allocations are predicted on the host before it runs.
  const MemoryUse use = reference->memory();
  const std::uint64_t predicted = gpu::reference_peak_bytes(w, Pass::full);
  INFO("peak measured " << use.peak_bytes << ", predicted " << predicted);
  const double slack = 1e-3 * static_cast<double>(predicted) + 65536.0;
  CHECK(static_cast<double>(use.peak_bytes) < static_cast<double>(predicted) + slack);
  // With every target ignored the chain stops early (the harness's return).
  if (c.ignore_fraction < 1.0)
    CHECK(static_cast<double>(use.peak_bytes) > static_cast<double>(predicted) - slack);
  CHECK(use.output_bytes > 0);
  CHECK(use.workspace_bytes > use.output_bytes);

  // Forward only: the same loss, no gradients.
  reference->poison_outputs();
  reference->run(Pass::forward);
  const OutputView forward = reference->outputs();
  CHECK(forward.loss == out.loss);
  CHECK(forward.grad_student_input.empty());
  reference->release();
  oracle->release();
}

} // namespace

TEST_CASE("reference and oracle-fp64 agree with the fp64 definitions", "[gpu][reference]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  // Small cases also check the GPU oracle against the CPU oracle.
  SECTION("beta 0.5") {
    check_case({.name = "beta-0.5", .tokens = 128, .vocab = 2048, .seed = 301}, true);
  }
  SECTION("beta 0: forward KL") {
    check_case({.name = "beta-0", .tokens = 96, .vocab = 1536, .beta = 0.0, .seed = 302}, true);
  }
  SECTION("beta 1: reverse KL") {
    check_case({.name = "beta-1", .tokens = 96, .vocab = 1536, .beta = 1.0, .seed = 303}, true);
  }
  SECTION("tau 2") {
    check_case({.name = "tau-2", .tokens = 64, .vocab = 2000, .beta = 0.3, .temperature = 2.0, .seed = 304},
               true);
  }
  SECTION("25 % of targets ignored") {
    check_case({.name = "ignore-25", .tokens = 200, .vocab = 4096, .ignore_fraction = 0.25, .seed = 305},
               true);
  }
  SECTION("every target ignored: zero loss and gradients") {
    check_case({.name = "ignore-100", .tokens = 64, .vocab = 1000, .ignore_fraction = 1.0, .seed = 306},
               true);
  }
  SECTION("V = 50257 (GPT-2's vocabulary, odd)") {
    check_case({.name = "vocab-50257", .tokens = 160, .vocab = 50257, .hidden = 512, .seed = 307}, false);
  }
  SECTION("T = 1") {
    check_case({.name = "tokens-1", .tokens = 1, .vocab = 4096, .seed = 308}, true);
  }
  SECTION("T not a multiple of 64") {
    check_case({.name = "tokens-333", .tokens = 333, .vocab = 3000, .hidden = 384, .seed = 309}, false);
  }
  SECTION("biases on") {
    check_case({.name = "bias", .tokens = 100, .vocab = 1999, .beta = 0.7, .bias = true, .seed = 310}, true);
  }
  SECTION("a larger case: T = 1024, V = 32000, H = 1024") {
    check_case({.name = "large",
                .tokens = 1024,
                .vocab = 32000,
                .hidden = 1024,
                .ignore_fraction = 0.1,
                .seed = 311},
               false);
  }
}

TEST_CASE("the GPU implementations are registered and describe themselves", "[gpu][reference]") {
  for (const char *name : {"reference", "cublas-floor", "oracle-fp64"}) {
    const RegisteredImplementation *r = find_implementation(name);
    REQUIRE(r != nullptr);
    CHECK(r->needs_gpu);
    CHECK(r->is_oracle == (std::string(name) == "oracle-fp64"));
    const auto impl = r->make();
    CHECK(impl->name() == name);
    CHECK(impl->needs_gpu());
    CHECK(impl->computes_loss() == (std::string(name) != "cublas-floor"));
    const json::Value manifest = implementation_manifest(impl->revision());
    CHECK(manifest.find("kind")->as_string() == "ImplementationRevision");
    const json::Value *spec = manifest.find("spec");
    REQUIRE(spec != nullptr);
    CHECK(spec->find("callable")->find("language")->as_string() == "cuda");
    CHECK(spec->find("support")->find("hardwareArchitectures")->as_array().front().as_string() == "sm_90a");
    // Without a GPU, every one says why instead of failing later.
    if (!gpu::gpu_available()) {
      const Workload w = test::make_gpu_workload({.name = "tiny", .tokens = 4, .vocab = 16, .hidden = 8});
      const auto reason = impl->unsupported(w);
      REQUIRE(reason.has_value());
      CHECK_THAT(*reason, Catch::StartsWith("no GPU: "));
    }
  }
}

TEST_CASE("the reference refuses a workload the device cannot hold, saying what it needs",
          "[gpu][reference]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const Workload w =
      test::make_gpu_workload({.name = "huge", .tokens = 65536, .vocab = 262144, .hidden = 8192});
  const auto reason = make_reference()->unsupported(w);
  REQUIRE(reason.has_value());
  CHECK_THAT(*reason, Catch::Contains("reference needs") && Catch::Contains("GiB"));
}

TEST_CASE("the cuBLAS floor runs each pass with its GEMMs only", "[gpu][floor]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const Workload w = test::make_gpu_workload({.name = "floor", .tokens = 256, .vocab = 4096, .seed = 320});
  InputSet inputs(w);
  auto floor = make_cublas_floor();
  REQUIRE_FALSE(floor->unsupported(w).has_value());
  floor->prepare(w, inputs);
  for (const Pass pass : {Pass::backward, Pass::forward, Pass::full}) {
    floor->before_sample(pass);
    auto timer = floor->open_device()->make_timer();
    timer->start();
    floor->run(pass);
    timer->stop();
    CHECK(timer->elapsed_ns() > 0.0);
    const OutputView view = floor->outputs();
    CHECK(view.grad_student_input.empty());
  }
  CHECK(floor->memory().peak_bytes > floor->memory().input_bytes);
  // The record names the algorithms tuning chose: the four GEMM shapes.
  const json::Object labels = floor->run_labels();
  CHECK(labels.contains("gemm_tuning"));
  CHECK(labels.find("chunks")->as_string() == "1");
  CHECK(labels.contains("gemm_4"));
  CHECK_FALSE(labels.contains("gemm_5"));
  floor->release();
}
