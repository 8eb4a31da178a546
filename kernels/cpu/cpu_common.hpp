// What the CPU implementations share: the size past which they refuse a
// workload, and the shape of their ImplementationRevision manifests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lib/inputs/input_set.hpp"
#include "lib/workload/workload.hpp"
#include "lib/json/value.hpp"

namespace kibench::cpu {

// Past these a CPU run takes minutes or swaps; the GPU paths are for them.
inline constexpr double kMaxMultiplyAdds = 2e9;
inline constexpr std::uint64_t kMaxBytes = std::uint64_t{4} << 30;

// Identity digest of the distill_jsd_loss OperationSpec
// (kernelindex/liger/operation-distill_jsd_loss.json), the operation both
// CPU implementations compute.
inline constexpr std::string_view kDistillJsdLossOperationDigest =
    "sha256:4ce30dbf7da705e4eac1f5d2dce3a47ea0174fae11af426c422e0064be63eac5";

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

struct RevisionFacts {
  std::string_view name;        // metadata.name, e.g. "kibench-cpu-fp64"
  std::string_view title;       // metadata.title
  std::string_view description; // metadata.description
  std::string_view source_path; // callable.path, relative to the repository
  std::string_view symbol;      // callable.symbol, the factory
};

// A schema-valid ImplementationRevision (v1alpha1) for a CPU implementation
// of kibench at KIBENCH_VERSION.
[[nodiscard]] json::Value revision_manifest(const RevisionFacts &facts);

} // namespace kibench::cpu
