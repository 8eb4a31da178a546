// What the CPU implementations share: the size past which they refuse a
// workload.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lib/inputs/input_set.hpp"
#include "lib/workload/workload.hpp"

namespace kibench::cpu {

// Past these a CPU run takes minutes or swaps; the GPU paths are for them.
inline constexpr double kMaxMultiplyAdds = 2e9;
inline constexpr std::uint64_t kMaxBytes = std::uint64_t{4} << 30;

// nullopt when the workload fits the CPU limits given the bytes the
// implementation would hold besides the inputs; else the one-line reason.
// Work is the four GEMMs' multiply-adds (Workload::gemm_flops / 2).
[[nodiscard]] std::optional<std::string> too_big_reason(const Workload &workload, std::uint64_t own_bytes);

// Bytes of the generated inputs as stored (bf16 tensors, int64 targets).
[[nodiscard]] std::uint64_t host_input_bytes(const HostInputs &inputs);
// The same, predicted from the shapes before anything is generated
// (Workload::input_bytes()).
[[nodiscard]] inline std::uint64_t planned_input_bytes(const Workload &workload) {
  return workload.input_bytes();
}

} // namespace kibench::cpu
