// cpu-fp64: the fp64 oracle (kernels/lm_head/oracle/cpu_oracle.hpp) behind the
// Implementation interface. Inputs are the workload's bf16 tensors widened
// exactly to double; every later operation is double. The forward keeps
// both [T, V] logit matrices for the backward, as an autograd graph would.
#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "kernels/builtin_revision.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/cpu_implementations.hpp"
#include "kernels/cpu/host_implementation.hpp"
#include "kernels/operation_switch.hpp"
#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/operations/registry.hpp"

namespace kibench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TensorRef host_view(const std::vector<double> &values) {
  return TensorRef{values.data(), ElementType::fp64, static_cast<std::int64_t>(values.size()), false};
}

std::uint64_t bytes_of(const std::vector<double> &values) {
  return 8 * std::uint64_t{values.size()};
}

// distill_jsd_loss, and fused_linear_jsd as its soft term alone (the
// workload's w_h = 0, w_s = 1, Hs = H).
class CpuFp64 final : public cpu::HostImplementation {
public:
  // `title` and `loss` name what it computes on `kind`.
  CpuFp64(OperationKind kind, std::string_view title, std::string_view loss)
      : HostImplementation("cpu-fp64"), kind_(kind), title_(title), loss_name_(loss) {}

  [[nodiscard]] RevisionFacts revision() const override {
    return host_revision({
        .name = "cpu-fp64",
        .title = title_,
        .description = fmt::format("{} and its student gradients in fp64 on the CPU, term by term as "
                                   "docs/loss-math.md defines them; the reference for small cases.",
                                   loss_name_),
        .source_path = "kernels/lm_head/oracle/cpu_fp64.cpp",
        .symbol = "kibench::make_cpu_fp64",
        .operation = kind_,
    });
  }

  void prepare(const Workload &workload, InputSet &inputs) override {
    release();
    const HostInputs &host = inputs.host();
    input_bytes_ = cpu::host_input_bytes(host);
    problem_ = oracle_problem(workload, host);
    validate(problem_);
    const auto T = static_cast<std::size_t>(workload.tokens), V = static_cast<std::size_t>(workload.vocab);
    const auto Hs = static_cast<std::size_t>(workload.student_hidden);
    gradients_.student_input.assign(T * Hs, kNaN);
    gradients_.student_weight.assign(V * Hs, kNaN);
    if (!problem_.student_bias.empty()) gradients_.student_bias.assign(V, kNaN);
    gradient_matrix_bytes_ = 8 * std::uint64_t{T} * V;
    prepared_ = true;
  }

  void before_sample(Pass pass) override {
    if (pass == Pass::backward && !forward_done_) forward();
  }

  void poison_outputs() override {
    loss_ = kNaN;
    for (auto *values : {&gradients_.student_input, &gradients_.student_weight, &gradients_.student_bias})
      std::fill(values->begin(), values->end(), kNaN);
  }

  void run(Pass pass) override {
    if (!prepared_) throw std::logic_error("cpu-fp64: run() before prepare()");
    if (pass != Pass::backward || !forward_done_) forward();
    has_gradients_ = pass != Pass::forward;
    if (has_gradients_) gradients_ = oracle_gradients(problem_, logits_);
    loss_ = forward_loss_;
  }

  OutputView outputs() override {
    OutputView view;
    view.loss = loss_;
    if (has_gradients_) {
      view.grad_student_input = host_view(gradients_.student_input);
      view.grad_student_weight = host_view(gradients_.student_weight);
      view.grad_student_bias = host_view(gradients_.student_bias);
    }
    return view;
  }

  [[nodiscard]] MemoryUse memory() const override {
    MemoryUse use;
    use.input_bytes = input_bytes_;
    use.output_bytes = 8 + bytes_of(gradients_.student_input) + bytes_of(gradients_.student_weight) +
                       bytes_of(gradients_.student_bias);
    use.workspace_bytes = bytes_of(problem_.student_input) + bytes_of(problem_.student_weight) +
                          bytes_of(problem_.teacher_input) + bytes_of(problem_.teacher_weight) +
                          bytes_of(problem_.student_bias) + bytes_of(problem_.teacher_bias) +
                          8 * std::uint64_t{problem_.target.size()} + bytes_of(logits_.student) +
                          bytes_of(logits_.teacher);
    // The backward also holds its [T, V] gradient of the logits while it runs.
    use.peak_bytes = use.input_bytes + use.output_bytes + use.workspace_bytes + gradient_matrix_bytes_;
    return use;
  }

  void release() override {
    problem_ = OracleProblem{};
    logits_ = OracleLogits{};
    gradients_ = OracleGradients{};
    input_bytes_ = gradient_matrix_bytes_ = 0;
    loss_ = forward_loss_ = kNaN;
    prepared_ = forward_done_ = has_gradients_ = false;
  }

private:
  // Doubles held besides the inputs: the widened inputs, two [T, V] logit
  // matrices, the [T, V] logit gradient and the gradients.
  [[nodiscard]] std::uint64_t planned_own_bytes(const Workload &w) const override {
    const auto T = static_cast<std::uint64_t>(w.tokens), V = static_cast<std::uint64_t>(w.vocab);
    const auto H = static_cast<std::uint64_t>(w.hidden), Hs = static_cast<std::uint64_t>(w.student_hidden);
    const std::uint64_t widened = T * Hs + V * Hs + T * H + V * H + 2 * V + T;
    const std::uint64_t gradients = T * Hs + V * Hs + V;
    return 8 * (widened + 3 * T * V + gradients);
  }

  void forward() {
    logits_ = oracle_logits(problem_);
    forward_loss_ = oracle_loss(problem_, logits_);
    forward_done_ = true;
  }

  OperationKind kind_;
  std::string_view title_, loss_name_;
  OracleProblem problem_;
  OracleLogits logits_;
  OracleGradients gradients_;
  std::uint64_t input_bytes_ = 0;
  std::uint64_t gradient_matrix_bytes_ = 0;
  double loss_ = kNaN;
  double forward_loss_ = kNaN;
  bool prepared_ = false;
  bool forward_done_ = false;
  bool has_gradients_ = false;
};

} // namespace

std::unique_ptr<Implementation> make_cpu_fp64() {
  std::map<OperationKind, std::unique_ptr<Implementation>> parts;
  const OperationKind distill = operation_named("distill_jsd_loss");
  const OperationKind fused_linear_jsd = operation_named("fused_linear_jsd");
  parts.emplace(distill, std::make_unique<CpuFp64>(distill, "kibench CPU fp64 oracle", "The distillation loss"));
  parts.emplace(operation_named("jsd"), make_cpu_jsd_fp64());
  parts.emplace(fused_linear_jsd, std::make_unique<CpuFp64>(fused_linear_jsd,
                                                            "kibench CPU fp64 oracle (fused_linear_jsd)",
                                                            "The fused linear + JSD loss"));
  return make_operation_switch("cpu-fp64", std::move(parts));
}

} // namespace kibench
