#include "lib/operations/distill_jsd_loss/distill_jsd_loss.hpp"

#include <array>

#include "include/kibench/kibench_plugin.h"
#include "lib/operations/lm_head/lm_head_operation.hpp"
#include "lib/workload/axis_sweep.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {
namespace {

constexpr std::array<OperationInput, 5> kInputs{{
    {"student_input", "[tokens, student_hidden]", "float"},
    {"student_weight", "[vocab, student_hidden]", "float"},
    {"teacher_input", "[tokens, hidden]", "float"},
    {"teacher_weight", "[vocab, hidden]", "float"},
    {"target", "[tokens]", "int64"},
}};
constexpr std::array<std::string_view, 3> kAxes{"tokens", "vocab", "hidden"};
// The optional LM-head biases b_s, b_t.
constexpr std::array<OptionalTensor, 2> kOptional{{{"student_bias", "vocab", true},
                                                   {"teacher_bias", "vocab", true}}};
constexpr std::array<std::string_view, 5> kScalars{"beta", "temperature", "weight_hard_loss", "weight_soft_loss",
                                                   "ignore_index"};

class DistillJsdLoss final : public LmHeadOperation {
public:
  [[nodiscard]] std::string_view name() const override { return "distill_jsd_loss"; }
  [[nodiscard]] std::string_view digest() const override { return kDistillJsdLossOperationDigest; }
  [[nodiscard]] std::int32_t abi_code() const override { return KIBENCH_OPERATION_DISTILL_JSD_LOSS; }
  [[nodiscard]] std::span<const OperationInput> inputs() const override { return kInputs; }
  [[nodiscard]] std::span<const std::string_view> variable_axes() const override { return kAxes; }
  [[nodiscard]] bool derives_student_hidden() const override { return true; }
  [[nodiscard]] std::span<const OptionalTensor> optional_tensors() const override { return kOptional; }
  [[nodiscard]] std::span<const std::string_view> scalar_names() const override { return kScalars; }
  // workloads/sweeps/generate.py's names and titles.
  [[nodiscard]] json::Value derive_case(const Workload &base,
                                        const std::map<std::string, std::int64_t> &axes) const override {
    return derive_workload_case(base.manifest, axes);
  }
};

} // namespace

const Operation &distill_jsd_loss_operation() {
  static const DistillJsdLoss operation;
  return operation;
}

} // namespace kibench
