// cpu-fp64 on jsd: the fp64 oracle of kernels/jsd/oracle/jsd_oracle.hpp behind
// the Implementation interface. The fp32 log-probabilities are widened
// exactly to double; the loss and the gradient come from one pass, as in
// Liger's kernel, so a backward sample repeats the whole computation.
#include <stdexcept>

#include "kernels/builtin_revision.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/cpu_implementations.hpp"
#include "kernels/jsd/jsd_host_implementation.hpp"
#include "kernels/jsd/oracle/jsd_oracle.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/operations/registry.hpp"

namespace kibench {
namespace {

class CpuJsdFp64 final : public cpu::JsdHostImplementation<double> {
public:
  CpuJsdFp64() : JsdHostImplementation("cpu-fp64") {}

  [[nodiscard]] RevisionFacts revision() const override {
    return host_revision({
        .name = "cpu-fp64",
        .title = "kibench CPU fp64 oracle (jsd)",
        .description = "Liger's generalized JSD between two log-probability tensors and its gradient with "
                       "respect to the student's, in fp64 on the CPU, term by term as docs/loss-math.md "
                       "defines them; the reference for small cases.",
        .source_path = "kernels/jsd/oracle/cpu_jsd_fp64.cpp",
        .symbol = "kibench::make_cpu_fp64",
        .operation = operation_named("jsd"),
    });
  }

  void prepare(const Workload &workload, InputSet &inputs) override {
    release();
    const HostInputs &host = inputs.host();
    input_bytes_ = cpu::host_input_bytes(host);
    problem_ = jsd_problem(workload, host);
    validate(problem_);
    allocate_outputs(problem_.student_log_probs.size());
    prepared_ = true;
  }

  void run(Pass pass) override {
    if (!prepared_) throw std::logic_error("cpu-fp64: run() before prepare()");
    has_gradient_ = pass != Pass::forward;
    JsdResult result = run_jsd_oracle(problem_, has_gradient_);
    loss_ = result.loss;
    if (has_gradient_) gradient_ = std::move(result.gradient);
  }

  [[nodiscard]] MemoryUse memory() const override {
    MemoryUse use;
    use.input_bytes = input_bytes_;
    use.output_bytes = 8 + 8 * std::uint64_t{gradient_.size()};
    use.workspace_bytes = 8 * (std::uint64_t{problem_.student_log_probs.size()} +
                               problem_.teacher_log_probs.size() + problem_.target.size());
    use.peak_bytes = use.input_bytes + use.output_bytes + use.workspace_bytes;
    return use;
  }

  void release() override {
    problem_ = JsdProblem{};
    release_outputs();
  }

private:
  // Doubles held besides the inputs: both widened [T, V] tensors, the
  // labels and the [T, V] gradient (twice while a run replaces it).
  [[nodiscard]] std::uint64_t planned_own_bytes(const Workload &w) const override {
    const auto T = static_cast<std::uint64_t>(w.tokens), V = static_cast<std::uint64_t>(w.vocab);
    return 8 * (4 * T * V + T);
  }

  JsdProblem problem_;
};

} // namespace

std::unique_ptr<Implementation> make_cpu_jsd_fp64() {
  return std::make_unique<CpuJsdFp64>();
}

} // namespace kibench
