#include "lib/operations/fused_linear_jsd/fused_linear_jsd.hpp"

#include <array>

#include "include/kibench/kibench_plugin.h"
#include "lib/operations/lm_head/lm_head_operation.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {
namespace {

constexpr std::array<OperationInput, 4> kInputs{{
    {"student_input", "[tokens, hidden]", "float"},
    {"student_weight", "[vocab, hidden]", "float"},
    {"teacher_input", "[tokens, hidden]", "float"},
    {"teacher_weight", "[vocab, hidden]", "float"},
}};
constexpr std::array<std::string_view, 3> kAxes{"tokens", "hidden", "vocab"};
// Liger's optional shift_labels: tokens labelled ignore_index are left out.
constexpr std::array<OptionalTensor, 1> kOptional{{{"target", "tokens", false}}};
constexpr std::array<std::string_view, 3> kScalars{"beta", "temperature", "ignore_index"};

class FusedLinearJsd final : public LmHeadOperation {
public:
  [[nodiscard]] std::string_view name() const override { return "fused_linear_jsd"; }
  [[nodiscard]] std::string_view digest() const override { return kFusedLinearJsdOperationDigest; }
  [[nodiscard]] std::int32_t abi_code() const override { return KIBENCH_OPERATION_FUSED_LINEAR_JSD; }
  [[nodiscard]] std::span<const OperationInput> inputs() const override { return kInputs; }
  [[nodiscard]] std::span<const std::string_view> variable_axes() const override { return kAxes; }
  [[nodiscard]] std::span<const OptionalTensor> optional_tensors() const override { return kOptional; }
  [[nodiscard]] std::span<const std::string_view> scalar_names() const override { return kScalars; }
  // The soft loss alone.
  void fix_scalars(LossScalars &scalars) const override {
    scalars.weight_hard = 0.0;
    scalars.weight_soft = 1.0;
  }
  // distill_jsd_loss's implementations compute it too.
  [[nodiscard]] std::string_view shared_code_title() const override { return " (fused_linear_jsd)"; }
  [[nodiscard]] std::string_view shared_code_description() const override {
    return " On fused_linear_jsd: the same code with the hard loss's weight 0 and the student as wide as the "
           "teacher.";
  }
};

} // namespace

const Operation &fused_linear_jsd_operation() {
  static const FusedLinearJsd operation;
  return operation;
}

} // namespace kibench
