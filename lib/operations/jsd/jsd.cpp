#include "lib/operations/jsd/jsd.hpp"

#include <array>

#include <fmt/format.h>

#include "include/kibench/kibench_plugin.h"
#include "lib/workload/workload.hpp"

namespace kibench {
namespace {

// The student's (Liger's `input`, log q) and the teacher's (Liger's
// `target`, log p) log-probabilities.
constexpr std::array<OperationInput, 2> kInputs{{
    {"student_log_probs", "[tokens, vocab]", "float"},
    {"teacher_log_probs", "[tokens, vocab]", "float"},
}};
constexpr std::array<std::string_view, 2> kAxes{"tokens", "vocab"};
constexpr std::array<OptionalTensor, 1> kOptional{{{"target", "tokens", false}}};
constexpr std::array<std::string_view, 2> kScalars{"beta", "ignore_index"};

class Jsd final : public Operation {
public:
  [[nodiscard]] std::string_view name() const override { return "jsd"; }
  [[nodiscard]] std::string_view digest() const override { return kJsdOperationDigest; }
  [[nodiscard]] std::int32_t abi_code() const override { return KIBENCH_OPERATION_JSD; }
  [[nodiscard]] std::span<const OperationInput> inputs() const override { return kInputs; }
  [[nodiscard]] std::span<const std::string_view> variable_axes() const override { return kAxes; }
  [[nodiscard]] std::span<const OptionalTensor> optional_tensors() const override { return kOptional; }
  [[nodiscard]] FloatType float_type() const override { return FloatType::fp32; }
  // Each row of uniforms through log_softmax (lib/inputs/generate.hpp).
  [[nodiscard]] std::string_view float_generator() const override {
    return "philox4x32_10_uniform_log_softmax";
  }
  [[nodiscard]] std::string_view float_type_reason() const override { return " for jsd, as Liger's benchmark"; }
  [[nodiscard]] std::span<const std::string_view> scalar_names() const override { return kScalars; }
  void bind_axes(Workload &workload, const std::map<std::string, std::int64_t> &) const override {
    workload.hidden = 0;
    workload.student_hidden = 0;
  }
  // Two fp32 [T, V] tensors and the labels.
  [[nodiscard]] std::uint64_t input_bytes(const Workload &w) const override {
    const auto t = static_cast<std::uint64_t>(w.tokens), v = static_cast<std::uint64_t>(w.vocab);
    return 2 * t * v * 4 + t * 8;
  }
  [[nodiscard]] double gemm_flops(const Workload &, bool) const override { return 0.0; }
  // X and Y read, 8·T·V, where the pass reads them; grad X written, 4·T·V,
  // where it writes it: a forward pass reads, a backward writes, a full
  // pass does both.
  [[nodiscard]] double minimum_bytes(const Workload &w, bool reads_inputs, bool writes_gradient) const override {
    const double tensor = 4.0 * static_cast<double>(w.tokens) * static_cast<double>(w.vocab);
    return (reads_inputs ? 2.0 * tensor : 0.0) + (writes_gradient ? tensor : 0.0);
  }
  // The gradient of the student log-probabilities: [T, V].
  [[nodiscard]] std::vector<std::int64_t> grad_student_input_shape(const Workload &w) const override {
    return {w.tokens, w.vocab};
  }
  [[nodiscard]] bool has_lm_heads() const override { return false; }
  // No GEMM: the bytes bound it (two fp32 [T, V] reads, one write per full pass).
  [[nodiscard]] std::string describe_shape(const Workload &w) const override {
    return fmt::format("jsd: T={} V={}, β={}; {:.3g} GB read, {:.3g} GB written per full pass", w.tokens,
                       w.vocab, w.scalars.beta, 8e-9 * static_cast<double>(w.tokens * w.vocab),
                       4e-9 * static_cast<double>(w.tokens * w.vocab));
  }
};

} // namespace

const Operation &jsd_operation() {
  static const Jsd operation;
  return operation;
}

} // namespace kibench
