#include "kernels/cpu/cpu_common.hpp"

#include <fmt/format.h>

namespace kibench::cpu {
std::optional<std::string> too_big_reason(const Workload &workload, std::uint64_t own_bytes) {
  const double multiply_adds = workload.gemm_flops(/*with_backward=*/true) / 2.0;
  const std::uint64_t planned_bytes = workload.input_bytes() + own_bytes;
  if (multiply_adds <= kMaxMultiplyAdds && planned_bytes <= kMaxBytes) return std::nullopt;
  return fmt::format("too big for the CPU implementation ({:.1f} GFLOP, {:.2f} GiB); run it on a GPU "
                     "machine or use a workload under workloads/small/",
                     2.0 * multiply_adds / 1e9, static_cast<double>(planned_bytes) / (1u << 30));
}

std::uint64_t host_input_bytes(const HostInputs &in) {
  const auto bf16_bytes = [](const std::vector<std::uint16_t> &v) { return 2 * std::uint64_t{v.size()}; };
  return bf16_bytes(in.student_input) + bf16_bytes(in.student_weight) + bf16_bytes(in.teacher_input) +
         bf16_bytes(in.teacher_weight) + bf16_bytes(in.student_bias) + bf16_bytes(in.teacher_bias) +
         8 * std::uint64_t{in.target.size()} + 4 * std::uint64_t{in.student_log_probs.size()} +
         4 * std::uint64_t{in.teacher_log_probs.size()};
}

} // namespace kibench::cpu
