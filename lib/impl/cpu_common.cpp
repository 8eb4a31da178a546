#include "impl/cpu_common.hpp"

#include <fmt/format.h>

namespace kibench::cpu {
namespace {

// The instruction set the CPU paths were compiled for, in the schema's
// identifier form.
constexpr std::string_view host_architecture() {
#if defined(__x86_64__) || defined(_M_X64)
  return "x86_64";
#elif defined(__aarch64__) || defined(_M_ARM64)
  return "aarch64";
#else
  return "unknown";
#endif
}

double as_double(std::int64_t n) { return static_cast<double>(n); }

} // namespace

double full_pass_multiply_adds(const Workload &w) {
  const double logits = as_double(w.tokens) * as_double(w.vocab);
  return logits * (as_double(w.student_hidden) + as_double(w.hidden)) +
         2.0 * logits * as_double(w.student_hidden);
}

std::optional<std::string> too_big_reason(const Workload &workload, std::uint64_t planned_bytes) {
  const double multiply_adds = full_pass_multiply_adds(workload);
  if (multiply_adds <= kMaxMultiplyAdds && planned_bytes <= kMaxBytes) return std::nullopt;
  return fmt::format("too big for the CPU implementation ({:.1f} GFLOP, {:.2f} GiB); run it on a GPU "
                     "machine or use a workload under workloads/small/",
                     2.0 * multiply_adds / 1e9, static_cast<double>(planned_bytes) / (1u << 30));
}

std::uint64_t host_input_bytes(const HostInputs &in) {
  const auto bf16_bytes = [](const std::vector<std::uint16_t> &v) { return 2 * std::uint64_t{v.size()}; };
  return bf16_bytes(in.student_input) + bf16_bytes(in.student_weight) + bf16_bytes(in.teacher_input) +
         bf16_bytes(in.teacher_weight) + bf16_bytes(in.student_bias) + bf16_bytes(in.teacher_bias) +
         8 * std::uint64_t{in.target.size()};
}

std::uint64_t planned_input_bytes(const Workload &w) {
  const auto T = static_cast<std::uint64_t>(w.tokens), V = static_cast<std::uint64_t>(w.vocab);
  const auto H = static_cast<std::uint64_t>(w.hidden), Hs = static_cast<std::uint64_t>(w.student_hidden);
  const std::uint64_t biases = (w.student_bias ? V : 0) + (w.teacher_bias ? V : 0);
  return 2 * (T * Hs + V * Hs + T * H + V * H + biases) + 8 * T;
}

json::Value revision_manifest(const RevisionFacts &facts) {
  using json::Array;
  using json::Object;
  return Object{
      {"apiVersion", "kernelindex.dev/v1alpha1"},
      {"kind", "ImplementationRevision"},
      {"metadata", Object{{"name", facts.name}, {"title", facts.title}, {"description", facts.description}}},
      {"spec",
       Object{
           {"projectRevision", Object{{"version", KIBENCH_VERSION}}},
           {"operation", Object{{"specDigest", kDistillJsdLossOperationDigest}}},
           {"callable", Object{{"language", "cpp"},
                               {"path", facts.source_path},
                               {"symbol", facts.symbol},
                               {"interface", "kibench_implementation"}}},
           {"support", Object{{"hardwareArchitectures", Array{host_architecture()}},
                              {"dtypes", Array{"bf16"}},
                              {"layouts", Array{"row_major"}}}},
           {"licensing", Object{}},
       }},
  };
}

} // namespace kibench::cpu
