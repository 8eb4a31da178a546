// The CPU implementations through the Implementation interface, checked
// against the fp64 oracle with the correctness gate on small synthetic
// workloads (the seed's generators, scaled down).
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "kernels/builtin_revision.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/cpu_implementations.hpp"
#include "kernels/cpu/host_device.hpp"
#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "kernels/registry.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/digest/digest.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/json/parse.hpp"
#include "lib/manifest/implementation_manifest.hpp"
#include "test/source_tree.hpp"

using namespace kibench;

namespace {

struct Shape {
  std::int64_t tokens = 32, vocab = 1000, hidden = 64;
  double beta = 0.5, temperature = 1.0, ignore_fraction = 0.0;
  bool bias = false;
  double weight_hard = 0.5; // weight_soft = 1 - weight_hard
  double sharpness = 1.0;   // scales the weights: sharper, less alike distributions
};

GeneratorSpec uniform(std::uint64_t seed, double low, double high) {
  return GeneratorSpec{
      .name = "philox4x32_10_uniform", .seed = seed, .low = low, .high = high, .ignore_fraction = 0.0};
}

// As the seed's harness: torch.rand inputs, nn.Linear's uniform
// +-1/sqrt(fan_in) weights, randint targets.
Workload make_workload(const Shape &s) {
  Workload w;
  w.name = "test-small";
  w.tokens = s.tokens;
  w.vocab = s.vocab;
  w.hidden = s.hidden;
  w.student_hidden = s.hidden / 2;
  const double student_bound = s.sharpness / std::sqrt(static_cast<double>(w.student_hidden));
  const double teacher_bound = s.sharpness / std::sqrt(static_cast<double>(w.hidden));
  w.student_input = uniform(11, 0.0, 1.0);
  w.student_weight = uniform(12, -student_bound, student_bound);
  w.teacher_input = uniform(13, 0.0, 1.0);
  w.teacher_weight = uniform(14, -teacher_bound, teacher_bound);
  w.target = GeneratorSpec{.name = "philox4x32_10_uniform_int",
                           .seed = 15,
                           .low = 0.0,
                           .high = static_cast<double>(s.vocab),
                           .ignore_fraction = s.ignore_fraction};
  if (s.bias) {
    w.student_bias = uniform(16, -student_bound, student_bound);
    w.teacher_bias = uniform(17, -teacher_bound, teacher_bound);
  }
  w.scalars.beta = s.beta;
  w.scalars.temperature = s.temperature;
  w.scalars.weight_hard = s.weight_hard;
  w.scalars.weight_soft = 1.0 - s.weight_hard;
  w.correctness.max_relative_error = 1e-2; // the seed-like policy
  w.correctness.max_absolute_error = 1e-6;
  return w;
}

TensorRef view_of(const std::vector<double> &v) {
  return TensorRef{v.data(), ElementType::fp64, static_cast<std::int64_t>(v.size()), false};
}

std::vector<ErrorStats> compare_with_oracle(const OutputView &out, const OracleResult &ref) {
  std::vector<ErrorStats> stats = {
      compare_scalar("loss", out.loss, ref.loss),
      compare_host("grad_student_input", out.grad_student_input, view_of(ref.gradients.student_input)),
      compare_host("grad_student_weight", out.grad_student_weight, view_of(ref.gradients.student_weight)),
  };
  if (!ref.gradients.student_bias.empty())
    stats.push_back(
        compare_host("grad_student_bias", out.grad_student_bias, view_of(ref.gradients.student_bias)));
  return stats;
}

struct Checked {
  CorrectnessVerdict verdict;
  OracleResult oracle;
};

// prepare, poison, run(full), compare with the oracle.
Checked run_and_check(Implementation &impl, const Workload &w) {
  InputSet inputs(w);
  REQUIRE_FALSE(impl.unsupported(w).has_value());
  impl.prepare(w, inputs);
  impl.poison_outputs();
  impl.run(Pass::full);
  Checked checked;
  checked.oracle = run_oracle(oracle_problem(w, inputs.host()));
  checked.verdict = make_verdict(compare_with_oracle(impl.outputs(), checked.oracle), w.correctness);
  return checked;
}

// Cases of the seed's kind: the seed-like policy (rel L2 <= 1e-2) holds.
std::vector<Shape> small_cases() {
  return {
      Shape{},                                         // the seed's scalars
      Shape{.vocab = 1003},                            // odd vocabulary
      Shape{.tokens = 1},                              // one token
      Shape{.beta = 0.0},                              // forward KL
      Shape{.beta = 1.0},                              // reverse KL
      Shape{.temperature = 2.0},                       // softer distributions
      Shape{.ignore_fraction = 0.25, .bias = true},    // biases, some ignored
      Shape{.tokens = 40, .vocab = 517, .hidden = 66}, // Hs = 33: no multiple of 4 or 8
  };
}

// The soft loss alone on sharp distributions (logits of magnitude up to
// ~16, where a bf16 logit is off by up to 2^-5, then divided by tau): each
// branch of the fp32 backward, with the bf16 error several times larger.
std::vector<Shape> sharp_soft_cases() {
  return {
      Shape{.weight_hard = 0.0, .sharpness = 8.0},
      Shape{.beta = 0.0, .weight_hard = 0.0, .sharpness = 8.0},
      Shape{.beta = 1.0, .temperature = 0.5, .weight_hard = 0.0, .sharpness = 8.0},
  };
}

std::string describe(const Shape &s) {
  return fmt::format("T={} V={} H={} beta={} tau={} ignore={} bias={} w_h={} sharpness={}", s.tokens, s.vocab,
                     s.hidden, s.beta, s.temperature, s.ignore_fraction, s.bias, s.weight_hard, s.sharpness);
}

} // namespace

TEST_CASE("cpu-fp64 reproduces the oracle exactly", "[cpu_impl]") {
  for (const Shape &shape : small_cases()) {
    INFO(describe(shape));
    const Workload w = make_workload(shape);
    auto impl = make_cpu_fp64();
    const Checked c = run_and_check(*impl, w);
    INFO(c.verdict.summary);
    CHECK(c.verdict.passed);
    for (const ErrorStats &s : c.verdict.outputs) {
      INFO(s.output);
      CHECK(s.count > 0);
      CHECK(s.rel_l2_error == 0.0); // same math, same summation order
    }
  }
}

TEST_CASE("cpu-reference passes the seed-like policy with small, nonzero errors", "[cpu_impl]") {
  for (const Shape &shape : small_cases()) {
    INFO(describe(shape));
    const Workload w = make_workload(shape);
    auto impl = make_cpu_reference();
    const Checked c = run_and_check(*impl, w);
    INFO(c.verdict.summary);
    CHECK(c.verdict.passed);
    for (const ErrorStats &s : c.verdict.outputs) {
      INFO(s.output << " rel L2 " << s.rel_l2_error);
      CHECK(s.nonfinite == 0);
      // bf16 logits and gradients leave a visible error in every gradient.
      if (s.output != "loss") CHECK(s.rel_l2_error > 1e-5);
      CHECK(s.rel_l2_error < 1e-2);
    }
  }
}

TEST_CASE("cpu-reference stays close on sharp soft-only cases", "[cpu_impl]") {
  for (const Shape &shape : sharp_soft_cases()) {
    INFO(describe(shape));
    Workload w = make_workload(shape);
    // bf16 logits this sharp put the loss itself 0.3-1 % off: every output,
    // the loss included, is held to the relaxed rel L2 bound here.
    w.correctness.comparator = std::string(kComparatorRelL2);
    w.correctness.max_relative_error = 5e-2;
    auto impl = make_cpu_reference();
    const Checked c = run_and_check(*impl, w);
    INFO(c.verdict.summary);
    CHECK(c.verdict.passed);
    for (const ErrorStats &s : c.verdict.outputs)
      if (s.output != "loss") CHECK(s.rel_l2_error > 1e-4);
  }
}

TEST_CASE("all tokens ignored: both implementations give loss 0 and zero gradients", "[cpu_impl]") {
  const Workload w = make_workload(Shape{.ignore_fraction = 1.0, .bias = true});
  for (auto make : {make_cpu_fp64, make_cpu_reference}) {
    auto impl = make();
    INFO(impl->name());
    const Checked c = run_and_check(*impl, w);
    INFO(c.verdict.summary);
    CHECK(c.verdict.passed);
    CHECK(c.oracle.loss == 0.0);
    for (const ErrorStats &s : c.verdict.outputs) {
      CHECK(s.ref_l2_norm == 0.0);
      CHECK(s.max_abs_error == 0.0);
      CHECK(s.nonfinite == 0);
    }
  }
}

TEST_CASE("forward-only runs leave the gradients empty, backward reuses the forward", "[cpu_impl]") {
  const Workload w = make_workload(Shape{.tokens = 8, .vocab = 300, .bias = true});
  for (auto make : {make_cpu_fp64, make_cpu_reference}) {
    auto impl = make();
    INFO(impl->name());
    InputSet inputs(w);
    impl->prepare(w, inputs);

    impl->poison_outputs();
    impl->run(Pass::forward);
    const OutputView forward = impl->outputs();
    CHECK(std::isfinite(forward.loss));
    CHECK(forward.grad_student_input.empty());
    CHECK(forward.grad_student_weight.empty());
    CHECK(forward.grad_student_bias.empty());

    impl->poison_outputs();
    impl->run(Pass::full);
    const OutputView full = impl->outputs();
    CHECK(full.loss == forward.loss);
    REQUIRE_FALSE(full.grad_student_bias.empty());
    const ErrorStats full_weight = compare_host("w", full.grad_student_weight, full.grad_student_weight);
    CHECK(full_weight.nonfinite == 0);
    // Keep a copy: the views are only valid until the next run.
    const auto element_bytes = full.grad_student_weight.type == ElementType::fp64 ? 8 : 2;
    const auto *first = static_cast<const unsigned char *>(full.grad_student_weight.data);
    const std::vector<unsigned char> saved(first, first + full.grad_student_weight.count * element_bytes);

    impl->before_sample(Pass::backward);
    impl->poison_outputs();
    impl->run(Pass::backward);
    const OutputView backward = impl->outputs();
    REQUIRE(backward.grad_student_weight.count == full.grad_student_weight.count);
    const auto *again = static_cast<const unsigned char *>(backward.grad_student_weight.data);
    CHECK(std::equal(saved.begin(), saved.end(), again));
    CHECK(compare_host("x", backward.grad_student_input, backward.grad_student_input).nonfinite == 0);
    CHECK(compare_host("b", backward.grad_student_bias, backward.grad_student_bias).nonfinite == 0);
  }
}

TEST_CASE("poison fills every output with NaN", "[cpu_impl]") {
  const Workload w = make_workload(Shape{.tokens = 4, .vocab = 50, .hidden = 8, .bias = true});
  for (auto make : {make_cpu_fp64, make_cpu_reference}) {
    auto impl = make();
    INFO(impl->name());
    InputSet inputs(w);
    impl->prepare(w, inputs);
    impl->run(Pass::full);
    impl->poison_outputs();
    const OutputView out = impl->outputs();
    CHECK(std::isnan(out.loss));
    for (const TensorRef *t : {&out.grad_student_input, &out.grad_student_weight, &out.grad_student_bias})
      CHECK(compare_host("poisoned", *t, *t).nonfinite == t->count);
  }
}

TEST_CASE("CPU implementations: size limit, memory, timer, interface facts", "[cpu_impl]") {
  Workload seed = make_workload(Shape{.tokens = 8192, .vocab = 128256, .hidden = 4096});
  const Workload small = make_workload(Shape{});
  for (auto make : {make_cpu_fp64, make_cpu_reference}) {
    auto impl = make();
    INFO(impl->name());
    CHECK_FALSE(impl->needs_gpu());
    CHECK(impl->computes_loss());
    const auto reason = impl->unsupported(seed);
    REQUIRE(reason.has_value());
    CHECK(reason->find("too big for the CPU implementation") != std::string::npos);
    CHECK(reason->find("workloads/small/") != std::string::npos);
    CHECK(reason->find("GFLOP") != std::string::npos);
    CHECK_FALSE(impl->unsupported(small).has_value());

    InputSet inputs(small);
    impl->prepare(small, inputs);
    impl->run(Pass::full);
    const MemoryUse use = impl->memory();
    CHECK(use.input_bytes == cpu::host_input_bytes(inputs.host()));
    CHECK(use.input_bytes == cpu::planned_input_bytes(small));
    CHECK(use.output_bytes > 0);
    CHECK(use.workspace_bytes >= 2 * 4 * std::uint64_t{32} * 1000); // two [T, V] logit matrices
    CHECK(use.peak_bytes >= use.input_bytes + use.output_bytes + use.workspace_bytes);
    // Its device, opened while it is prepared: the host's steady clock.
    auto timer = impl->open_device()->make_timer();
    CHECK(timer->name() == "steady_clock");
    CHECK_THROWS_AS(timer->elapsed_ns(), std::logic_error);
    timer->start();
    timer->stop();
    CHECK(timer->elapsed_ns() >= 0.0);
    CHECK_FALSE(timer->clock_mhz().has_value());

    impl->release();
    CHECK(impl->memory().workspace_bytes == 0);
  }
}

TEST_CASE("CPU implementations' revisions follow the ImplementationRevision schema", "[cpu_impl]") {
  const std::regex name_pattern("^[a-z0-9][a-z0-9._-]*$");
  const std::regex identifier("^[a-z][a-z0-9_]*$");
  const std::regex digest_pattern("^sha256:[0-9a-f]{64}$");
  for (auto make : {make_cpu_fp64, make_cpu_reference}) {
    auto impl = make();
    const json::Value manifest = implementation_manifest(impl->revision());
    CHECK(manifest.find("apiVersion")->as_string() == "kernelindex.dev/v1alpha1");
    CHECK(manifest.find("kind")->as_string() == "ImplementationRevision");
    const std::string &name = manifest.find("metadata")->find("name")->as_string();
    CHECK(std::regex_match(name, name_pattern));
    CHECK(name == "kibench-" + impl->name());
    const json::Value &spec = *manifest.find("spec");
    for (const char *key : {"projectRevision", "operation", "callable", "support", "licensing"})
      CHECK(spec.find(key) != nullptr);
    CHECK(spec.find("projectRevision")->find("version")->as_string() == KIBENCH_VERSION);
    CHECK(std::regex_match(spec.find("operation")->find("specDigest")->as_string(), digest_pattern));
    CHECK(std::regex_match(spec.find("callable")->find("language")->as_string(), identifier));
    CHECK(std::regex_match(spec.find("callable")->find("interface")->as_string(), identifier));
    for (const json::Value &arch : spec.find("support")->find("hardwareArchitectures")->as_array())
      CHECK(std::regex_match(arch.as_string(), identifier));
    CHECK(spec.find("support")->find("dtypes")->as_array().size() == 1);
    // Only the schema's keys.
    for (const auto &[key, value] : spec.as_object()) {
      (void)value;
      CHECK((key == "projectRevision" || key == "operation" || key == "callable" || key == "support" ||
             key == "licensing"));
    }
  }
}

TEST_CASE("the CPU revisions name the distill_jsd_loss OperationSpec by its digest", "[cpu_impl]") {
  const json::Value operation = json::parse_file(
      kibench::test::source_dir() / "workloads/kernelindex/liger/operation-distill_jsd_loss.json");
  CHECK(manifest_digest(operation) == kDistillJsdLossOperationDigest);
}

TEST_CASE("the registry lists both CPU implementations", "[cpu_impl]") {
  const RegisteredImplementation *fp64 = find_implementation("cpu-fp64");
  const RegisteredImplementation *reference = find_implementation("cpu-reference");
  REQUIRE(fp64 != nullptr);
  REQUIRE(reference != nullptr);
  CHECK(fp64->is_oracle);
  CHECK_FALSE(reference->is_oracle);
  CHECK_FALSE(fp64->needs_gpu);
  CHECK_FALSE(reference->needs_gpu);
  CHECK(fp64->make()->name() == "cpu-fp64");
  CHECK(reference->make()->name() == "cpu-reference");
}

// Not part of the suite: prints cpu-reference's errors against the oracle
// (run `kibench_tests "[report]"`).
TEST_CASE("report cpu-reference errors", "[.][report]") {
  std::vector<Shape> shapes = small_cases();
  for (const Shape &shape : sharp_soft_cases()) shapes.push_back(shape);
  for (const Shape &shape : shapes) {
    auto impl = make_cpu_reference();
    const Checked c = run_and_check(*impl, make_workload(shape));
    fmt::print("{}\n", describe(shape));
    for (const ErrorStats &s : c.verdict.outputs)
      fmt::print("  {:<20} rel L2 {:.3e}  max abs {:.3e}  |ref| {:.3e}\n", s.output, s.rel_l2_error,
                 s.max_abs_error, s.ref_l2_norm);
  }
}
