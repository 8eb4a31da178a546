#include "lib/operations/lm_head/lm_head_operation.hpp"

#include <fmt/format.h>

#include "lib/workload/workload.hpp"

namespace kibench {

void LmHeadOperation::bind_axes(Workload &workload, const std::map<std::string, std::int64_t> &axes) const {
  workload.hidden = axes.at("hidden");
  workload.student_hidden = derives_student_hidden() ? axes.at("student_hidden") : workload.hidden;
}

std::uint64_t LmHeadOperation::input_bytes(const Workload &w) const {
  const auto t = static_cast<std::uint64_t>(w.tokens), v = static_cast<std::uint64_t>(w.vocab);
  const auto h = static_cast<std::uint64_t>(w.hidden), hs = static_cast<std::uint64_t>(w.student_hidden);
  constexpr std::uint64_t bf16_bytes = 2, int64_bytes = 8;
  std::uint64_t elements = t * hs + v * hs + t * h + v * h;
  if (w.student_bias) elements += v;
  if (w.teacher_bias) elements += v;
  return elements * bf16_bytes + t * int64_bytes;
}

double LmHeadOperation::gemm_flops(const Workload &w, bool with_backward) const {
  const double t = static_cast<double>(w.tokens), v = static_cast<double>(w.vocab);
  const double h = static_cast<double>(w.hidden), hs = static_cast<double>(w.student_hidden);
  double flops = 2.0 * t * v * hs + 2.0 * t * v * h;
  if (with_backward) flops += 2.0 * 2.0 * t * v * hs;
  return flops;
}

std::vector<std::int64_t> LmHeadOperation::grad_student_input_shape(const Workload &w) const {
  return {w.tokens, w.student_hidden};
}

std::string LmHeadOperation::describe_shape(const Workload &w) const {
  return fmt::format("T={} V={} H={} Hs={}, β={} τ={}; {:.2f} TFLOP of GEMMs per full pass", w.tokens, w.vocab,
                     w.hidden, w.student_hidden, w.scalars.beta, w.scalars.temperature,
                     gemm_flops(w, true) * 1e-12);
}

} // namespace kibench
