// What the two LM-head operations (distill_jsd_loss, fused_linear_jsd)
// share: bf16 inputs x_s [T, Hs], W_s [V, Hs], x_t [T, H], W_t [V, H], two
// logit GEMMs forward and two student-gradient GEMMs backward; the loss
// math is docs/loss-math.md's.
#pragma once

#include "lib/operations/operation.hpp"

namespace kibench {

class LmHeadOperation : public Operation {
public:
  [[nodiscard]] FloatType float_type() const override { return FloatType::bf16; }
  [[nodiscard]] std::string_view float_generator() const override { return "philox4x32_10_uniform"; }
  void bind_axes(Workload &workload, const std::map<std::string, std::int64_t> &axes) const override;
  // x_s, W_s, x_t, W_t (and the biases) in bf16, the target in int64.
  [[nodiscard]] std::uint64_t input_bytes(const Workload &w) const override;
  // Forward 2·T·V·Hs (z_s) + 2·T·V·H (z_t); backward adds 2·2·T·V·Hs
  // (grad x_s = G W_s, grad W_s = Gᵀ x_s; the teacher has no gradient).
  [[nodiscard]] double gemm_flops(const Workload &w, bool with_backward) const override;
  // The GEMMs bound it.
  [[nodiscard]] double minimum_bytes(const Workload &, bool, bool) const override { return 0.0; }
  // grad x_s: [T, Hs].
  [[nodiscard]] std::vector<std::int64_t> grad_student_input_shape(const Workload &w) const override;
  [[nodiscard]] bool has_lm_heads() const override { return true; }
  [[nodiscard]] std::string describe_shape(const Workload &w) const override;
};

} // namespace kibench
