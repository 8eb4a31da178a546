// jsd and fused_linear_jsd beside distill_jsd_loss: their OperationSpecs are
// KernelIndex's curated ones, byte for byte and by digest; their workloads
// load typed and validated; the jsd oracle is the derivative of its loss and
// Liger's special cases; fused_linear_jsd's oracle is jsd's on the
// tempered log-softmaxes of the two LM heads.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "kernels/builtin_revision.hpp"
#include "kernels/cpu/cpu_implementations.hpp"
#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "kernels/jsd/oracle/jsd_oracle.hpp"
#include "kernels/registry.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/inputs/generate.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/json/parse.hpp"
#include "lib/manifest/implementation_manifest.hpp"
#include "lib/workload/workload.hpp"
#include "test/source_tree.hpp"
#include "lib/operations/registry.hpp"

namespace fs = std::filesystem;
using namespace kibench;

namespace {

const fs::path kWorkloads = kibench::test::source_dir() / "workloads";
const fs::path kLiger = kWorkloads / "kernelindex" / "liger";

std::string read_bytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

json::Value &at(json::Value &value, std::initializer_list<std::string_view> keys) {
  json::Value *current = &value;
  for (const auto key : keys) {
    json::Value *next = current->as_object().find(key);
    REQUIRE(next != nullptr);
    current = next;
  }
  return *current;
}

std::string rejection(const json::Value &manifest, const json::Value &operation) {
  try {
    (void)workload_from_json(manifest, operation, "edited.json");
  } catch (const InputError &e) {
    return e.what();
  }
  return "";
}

std::vector<fs::path> files_under(const fs::path &dir) {
  return list_workload_files(dir);
}

} // namespace

TEST_CASE("the jsd and fused_linear_jsd OperationSpecs are KernelIndex's, byte for byte and by digest",
          "[workload][digest][jsd]") {
  const json::Value implementations = json::parse_file(kLiger / "implementations-by-kernel-provider.json");
  for (const auto &[kernel, kind] :
       {std::pair{"jsd", operation_named("jsd")}, std::pair{"fused_linear_jsd", operation_named("fused_linear_jsd")},
        std::pair{"distill_jsd_loss", operation_named("distill_jsd_loss")}}) {
    INFO(kernel);
    const fs::path shipped = kWorkloads / "operations" / (std::string(kernel) + ".json");
    const fs::path curated = kLiger / ("operation-" + std::string(kernel) + ".json");
    CHECK(read_bytes(shipped) == read_bytes(curated));
    const std::string digest = manifest_digest(json::parse_file(curated));
    CHECK(digest == kind->digest());
    // KernelIndex's own ImplementationRevisions of Liger's kernels name the same digest.
    for (const char *provider : {"liger", "torch"}) {
      const json::Value *revision = implementations.find(std::string(kernel) + "/" + provider);
      REQUIRE(revision != nullptr);
      CHECK(revision->find("spec")->find("operation")->find("specDigest")->as_string() == digest);
    }
  }
}

TEST_CASE("every jsd and fused_linear_jsd workload loads, typed as its file states", "[workload][jsd]") {
  CHECK(files_under(kWorkloads / "jsd").size() >= 7 + 10);
  CHECK(files_under(kWorkloads / "fused_linear_jsd").size() >= 9 + 4);
  for (const auto &[folder, kind] : {std::pair{"jsd", operation_named("jsd")},
                                     std::pair{"fused_linear_jsd", operation_named("fused_linear_jsd")}}) {
    for (const fs::path &file : files_under(kWorkloads / folder)) {
      DYNAMIC_SECTION(file.lexically_relative(kWorkloads).string()) {
        const Workload w = load_workload(file);
        const json::Value manifest = json::parse_file(file);
        const json::Value &spec = *manifest.find("spec");
        const json::Value &tensors = *spec.find("tensors");
        const json::Value &scalars = *spec.find("scalars");
        CHECK(w.operation_kind == kind);
        CHECK(manifest_digest(w.operation) == kind->digest());
        CHECK(w.tokens == spec.find("axes")->find("tokens")->as_int());
        CHECK(w.vocab == spec.find("axes")->find("vocab")->as_int());
        CHECK(w.scalars.beta == scalars.find("beta")->find("value")->as_number());
        CHECK(w.scalars.ignore_index == -100);
        CHECK(w.has_target == tensors.as_object().contains("target"));
        if (!w.has_target) CHECK(w.target.ignore_fraction == 0.0);
        CHECK_FALSE(w.student_bias);
        CHECK_FALSE(w.teacher_bias);
        if (kind == operation_named("jsd")) {
          CHECK(w.dtype == FloatType::fp32);
          CHECK(w.hidden == 0);
          CHECK(w.student_log_probs.name == "philox4x32_10_uniform_log_softmax");
          CHECK(w.student_log_probs.seed != w.teacher_log_probs.seed);
          CHECK(w.gemm_flops(true) == 0.0);
          CHECK(w.input_bytes() == 2 * 4 * std::uint64_t(w.tokens * w.vocab) + 8 * std::uint64_t(w.tokens));
        } else {
          CHECK(w.dtype == FloatType::bf16);
          CHECK(w.hidden == spec.find("axes")->find("hidden")->as_int());
          CHECK(w.student_hidden == w.hidden);
          CHECK(w.scalars.temperature == scalars.find("temperature")->find("value")->as_number());
          CHECK(w.scalars.weight_hard == 0.0);
          CHECK(w.scalars.weight_soft == 1.0);
        }
      }
    }
  }
}

TEST_CASE("jsd and fused_linear_jsd workloads are validated against their own signatures", "[workload][jsd]") {
  const json::Value jsd_op = json::parse_file(kWorkloads / "operations" / "jsd.json");
  const json::Value fused_op = json::parse_file(kWorkloads / "operations" / "fused_linear_jsd.json");
  const json::Value jsd = json::parse_file(kWorkloads / "jsd" / "small" / "jsd-small-t32-v1000.json");
  const json::Value fused =
      json::parse_file(kWorkloads / "fused_linear_jsd" / "small" / "fused-linear-jsd-small-t32-h64-v1000.json");
  REQUIRE(rejection(jsd, jsd_op).empty());
  REQUIRE(rejection(fused, fused_op).empty());

  SECTION("jsd runs fp32 log-probabilities") {
    json::Value edited = jsd;
    at(edited, {"spec", "tensors", "student_log_probs", "dtype"}) = "bf16";
    CHECK_THAT(rejection(edited, jsd_op),
               Catch::Contains("$.spec.tensors.student_log_probs.dtype: unsupported dtype \"bf16\""));
    edited = jsd;
    at(edited, {"spec", "tensors", "teacher_log_probs", "data", "generator"}) = "philox4x32_10_uniform";
    CHECK_THAT(rejection(edited, jsd_op), Catch::Contains("for log-probabilities"));
  }
  SECTION("jsd takes no LM-head tensors, biases or distillation scalars") {
    json::Value edited = jsd;
    at(edited, {"spec", "tensors"}).as_object().set("student_bias", json::Value(json::Object{}));
    CHECK_THAT(rejection(edited, jsd_op), Catch::Contains("unknown tensor \"student_bias\""));
    edited = jsd;
    at(edited, {"spec", "scalars"}).as_object().set("temperature", json::Value(json::Object{}));
    CHECK_THAT(rejection(edited, jsd_op), Catch::Contains("unknown scalar \"temperature\""));
  }
  SECTION("fused_linear_jsd states beta, temperature and ignore_index only") {
    json::Value edited = fused;
    at(edited, {"spec", "scalars"}).as_object().set("weight_hard_loss", json::Value(json::Object{}));
    CHECK_THAT(rejection(edited, fused_op), Catch::Contains("unknown scalar \"weight_hard_loss\""));
    edited = fused;
    at(edited, {"spec", "scalars"}).as_object().erase("temperature");
    CHECK_THAT(rejection(edited, fused_op), Catch::Contains("temperature"));
  }
  SECTION("fused_linear_jsd's student is as wide as its teacher") {
    json::Value edited = fused;
    at(edited, {"spec", "tensors", "student_input", "shape"}) = json::Array{32, 32};
    CHECK_THAT(rejection(edited, fused_op),
               Catch::Contains("shape [32, 32] does not match [tokens, hidden] = [32, 64]"));
  }
  SECTION("a workload of one operation does not bind another's digest") {
    json::Value edited = jsd;
    at(edited, {"spec", "operationSpecDigest"}) = manifest_digest(fused_op);
    CHECK_THAT(rejection(edited, fused_op), Catch::Contains("unknown axis") || Catch::Contains("missing"));
  }
  SECTION("an OperationSpec of none of the three signatures names all three") {
    json::Value edited_op = jsd_op;
    at(edited_op, {"spec", "inputs"}).as_array().pop_back();
    json::Value edited = jsd;
    at(edited, {"spec", "operationSpecDigest"}) = manifest_digest(edited_op);
    CHECK_THAT(rejection(edited, edited_op),
               Catch::Contains("has 1 inputs; kibench runs distill_jsd_loss, jsd and fused_linear_jsd"));
  }
}

TEST_CASE("the log-softmax generator writes log-probability rows", "[inputs][jsd]") {
  const Workload w = load_workload(kWorkloads / "jsd" / "small" / "jsd-small-t32-v1003-odd-vocab.json");
  const HostInputs in = generate_host_inputs(w);
  REQUIRE(in.student_log_probs.size() == static_cast<std::size_t>(w.tokens * w.vocab));
  REQUIRE(in.teacher_log_probs.size() == in.student_log_probs.size());
  CHECK(in.student_input.empty());
  for (std::int64_t i = 0; i < w.tokens; ++i) {
    double mass = 0.0;
    for (std::int64_t k = 0; k < w.vocab; ++k) mass += std::exp(double(in.student_log_probs[i * w.vocab + k]));
    CHECK(mass == Approx(1.0).epsilon(1e-5));
  }
  // Element (i, k) is log_softmax of the uniforms of row i, as the header writes it.
  const std::int64_t row = 5;
  double peak = -INFINITY, sum = 0.0;
  std::vector<double> x(static_cast<std::size_t>(w.vocab));
  for (std::int64_t k = 0; k < w.vocab; ++k) {
    x[k] = uniform_value_at(w.student_log_probs, row * w.vocab + k);
    peak = std::max(peak, x[k]);
  }
  for (const double v : x) sum += std::exp(v - peak);
  for (std::int64_t k = 0; k < w.vocab; k += 97)
    CHECK(in.student_log_probs[row * w.vocab + k] == static_cast<float>(x[k] - (peak + std::log(sum))));
  // Another seed, another tensor.
  CHECK(in.student_log_probs != in.teacher_log_probs);
}

namespace {

JsdProblem small_jsd(double beta, std::int64_t tokens = 3, std::int64_t vocab = 7) {
  JsdProblem p;
  p.tokens = tokens;
  p.vocab = vocab;
  p.beta = beta;
  p.target.assign(static_cast<std::size_t>(tokens), 1);
  for (std::int64_t i = 0; i < tokens; ++i) {
    double zs = 0.0, zt = 0.0;
    std::vector<double> s(vocab), t(vocab);
    for (std::int64_t k = 0; k < vocab; ++k) {
      s[k] = std::sin(1.3 * double(i * vocab + k) + 0.2);
      t[k] = std::cos(0.7 * double(i * vocab + k) - 0.4);
      zs += std::exp(s[k]);
      zt += std::exp(t[k]);
    }
    for (std::int64_t k = 0; k < vocab; ++k) {
      p.student_log_probs.push_back(s[k] - std::log(zs));
      p.teacher_log_probs.push_back(t[k] - std::log(zt));
    }
  }
  return p;
}

} // namespace

TEST_CASE("the jsd oracle's gradient is the derivative of its loss", "[oracle][jsd]") {
  for (const double beta : {0.0, 0.3, 0.5, 1.0}) {
    INFO("beta " << beta);
    JsdProblem p = small_jsd(beta);
    p.target[1] = p.ignore_index; // an ignored row: N = 2, its gradient 0
    const JsdResult result = run_jsd_oracle(p);
    for (std::size_t at = 0; at < p.student_log_probs.size(); ++at) {
      const double h = 1e-6;
      JsdProblem plus = p, minus = p;
      plus.student_log_probs[at] += h;
      minus.student_log_probs[at] -= h;
      const double numeric = (run_jsd_oracle(plus, false).loss - run_jsd_oracle(minus, false).loss) / (2 * h);
      CHECK(result.gradient[at] == Approx(numeric).margin(1e-8).epsilon(1e-6));
    }
  }
}

TEST_CASE("the jsd oracle follows Liger's conventions", "[oracle][jsd]") {
  SECTION("beta = 0 is KL(p || q) and beta = 1 is KL(q || p), the teacher p being Liger's target") {
    for (const double beta : {0.0, 1.0}) {
      const JsdProblem p = small_jsd(beta);
      double expected = 0.0;
      for (std::size_t at = 0; at < p.student_log_probs.size(); ++at) {
        const double x = p.student_log_probs[at], y = p.teacher_log_probs[at];
        expected += beta == 0.0 ? std::exp(y) * (y - x) : std::exp(x) * (x - y);
      }
      CHECK(run_jsd_oracle(p).loss == Approx(expected / double(p.tokens)).epsilon(1e-12));
    }
  }
  SECTION("0 < beta < 1: beta KL(p || m) + (1 - beta) KL(q || m), m = beta p + (1 - beta) q") {
    const JsdProblem p = small_jsd(0.25);
    double expected = 0.0;
    for (std::size_t at = 0; at < p.student_log_probs.size(); ++at) {
      const double q = std::exp(p.student_log_probs[at]), pt = std::exp(p.teacher_log_probs[at]);
      const double m = 0.25 * pt + 0.75 * q;
      expected += 0.25 * pt * std::log(pt / m) + 0.75 * q * std::log(q / m);
    }
    CHECK(run_jsd_oracle(p).loss == Approx(expected / double(p.tokens)).epsilon(1e-12));
  }
  SECTION("every token ignored: loss 0, gradient 0, no NaN") {
    JsdProblem p = small_jsd(0.5);
    for (auto &y : p.target) y = p.ignore_index;
    const JsdResult r = run_jsd_oracle(p);
    CHECK(r.loss == 0.0);
    for (const double g : r.gradient) CHECK(g == 0.0);
  }
  SECTION("inconsistent problems are refused") {
    JsdProblem p = small_jsd(1.5);
    CHECK_THROWS_AS(run_jsd_oracle(p), std::invalid_argument);
    p = small_jsd(0.5);
    p.teacher_log_probs.pop_back();
    CHECK_THROWS_AS(run_jsd_oracle(p), std::invalid_argument);
  }
}

TEST_CASE("fused_linear_jsd's oracle is jsd's on log_softmax(z / tau) of the two heads", "[oracle][jsd]") {
  for (const char *name : {"fused-linear-jsd-small-t32-h64-v1000-tau2.json",
                           "fused-linear-jsd-small-t32-h64-v1000-tau-half-ignore25.json",
                           "fused-linear-jsd-small-t32-h64-v1000-beta0-forward-kl.json",
                           "fused-linear-jsd-small-t32-h64-v1000-beta1-reverse-kl.json"}) {
    INFO(name);
    const Workload w = load_workload(kWorkloads / "fused_linear_jsd" / "small" / name);
    const HostInputs in = generate_host_inputs(w);
    const OracleProblem problem = oracle_problem(w, in);
    const OracleLogits logits = oracle_logits(problem);
    JsdProblem jsd;
    jsd.tokens = w.tokens;
    jsd.vocab = w.vocab;
    jsd.beta = w.scalars.beta;
    jsd.target = in.target;
    for (const auto &[z, out] : {std::pair{&logits.student, &jsd.student_log_probs},
                                 std::pair{&logits.teacher, &jsd.teacher_log_probs}}) {
      for (std::int64_t i = 0; i < w.tokens; ++i) {
        double peak = -INFINITY, sum = 0.0;
        for (std::int64_t k = 0; k < w.vocab; ++k) peak = std::max(peak, (*z)[i * w.vocab + k] / w.scalars.temperature);
        for (std::int64_t k = 0; k < w.vocab; ++k) sum += std::exp((*z)[i * w.vocab + k] / w.scalars.temperature - peak);
        for (std::int64_t k = 0; k < w.vocab; ++k)
          out->push_back((*z)[i * w.vocab + k] / w.scalars.temperature - peak - std::log(sum));
      }
    }
    const double expected = run_jsd_oracle(jsd, false).loss;
    CHECK(expected > 0.0);
    CHECK(run_oracle(problem, false).loss == Approx(expected).epsilon(1e-10));
  }
}

TEST_CASE("cpu-fp64 and cpu-reference compute all three operations, each with its revision",
          "[cpu][jsd]") {
  for (const char *name : {"cpu-fp64", "cpu-reference"}) {
    const auto impl = find_implementation(name)->make();
    for (const auto kind : {operation_named("distill_jsd_loss"), operation_named("jsd"), operation_named("fused_linear_jsd")}) {
      INFO(name << " " << to_string(kind));
      CHECK(impl->runs(kind));
      CHECK(impl->revision_for(kind).operation_digest == kind->digest());
      CHECK(impl->revision_for(kind).name == "kibench-" + std::string(name));
    }
    // The distill revision is the one it always had.
    CHECK(manifest_digest(implementation_manifest(impl->revision_for(operation_named("distill_jsd_loss")))) ==
          manifest_digest(implementation_manifest(impl->revision())));
  }
  // The GPU implementations of the three share their names; copy-floor is jsd's alone.
  for (const char *name : {"fused", "reference", "oracle-fp64"}) {
    const auto impl = find_implementation(name)->make();
    for (const auto kind : {operation_named("distill_jsd_loss"), operation_named("jsd"), operation_named("fused_linear_jsd")}) {
      INFO(name << " " << to_string(kind));
      CHECK(impl->runs(kind));
      CHECK(impl->revision_for(kind).operation_digest == kind->digest());
    }
  }
  // An implementation of distill_jsd_loss (and fused_linear_jsd) alone says so for jsd.
  const auto floor = find_implementation("cublas-floor")->make();
  const Workload jsd = load_workload(kWorkloads / "jsd" / "small" / "jsd-small-t32-v1000.json");
  CHECK_FALSE(floor->runs(operation_named("jsd")));
  CHECK(floor->runs(operation_named("fused_linear_jsd")));
  CHECK(other_operation(*floor, jsd) == std::optional<std::string>("cublas-floor does not compute jsd"));
  const auto copy = find_implementation("copy-floor")->make();
  CHECK(copy->runs(operation_named("jsd")));
  CHECK_FALSE(copy->runs(operation_named("distill_jsd_loss")));
}

TEST_CASE("cpu-reference passes the oracle gate on every small jsd and fused_linear_jsd workload",
          "[cpu][jsd]") {
  for (const char *folder : {"jsd", "fused_linear_jsd"}) {
    for (const fs::path &file : files_under(kWorkloads / folder / "small")) {
      DYNAMIC_SECTION(file.filename().string()) {
        const Workload w = load_workload(file);
        InputSet inputs(w);
        const auto oracle = find_implementation("cpu-fp64")->make();
        const auto reference = find_implementation("cpu-reference")->make();
        REQUIRE_FALSE(oracle->unsupported(w));
        REQUIRE_FALSE(reference->unsupported(w));
        oracle->prepare(w, inputs);
        oracle->run(Pass::full);
        const OutputView truth = oracle->outputs();
        reference->prepare(w, inputs);
        reference->poison_outputs();
        reference->run(Pass::full);
        const OutputView out = reference->outputs();
        const std::int64_t gradient_count = (w.operation_kind.name() == "jsd") ? w.tokens * w.vocab : w.tokens * w.hidden;
        CHECK(truth.grad_student_input.count == gradient_count);
        CHECK(out.grad_student_input.count == gradient_count);
        CHECK(out.grad_student_weight.count == ((w.operation_kind.name() == "jsd") ? 0 : w.vocab * w.hidden));
        std::vector<ErrorStats> errors{compare_scalar("loss", out.loss, truth.loss),
                                       compare_host("grad_student_input", out.grad_student_input,
                                                    truth.grad_student_input)};
        if (!(w.operation_kind.name() == "jsd"))
          errors.push_back(
              compare_host("grad_student_weight", out.grad_student_weight, truth.grad_student_weight));
        const CorrectnessVerdict verdict = make_verdict(errors, w.correctness);
        INFO(verdict.summary);
        CHECK(verdict.passed);
        const bool all_ignored = file.filename().string().find("all-ignored") != std::string::npos;
        if (all_ignored) CHECK(truth.loss == 0.0);
        else CHECK(truth.loss > 0.0);
        // A forward pass leaves the gradients out.
        reference->run(Pass::forward);
        CHECK(reference->outputs().grad_student_input.empty());
        CHECK(reference->outputs().loss == Approx(out.loss));
      }
    }
  }
}
