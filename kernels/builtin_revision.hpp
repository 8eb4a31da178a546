// The RevisionFacts of kibench's own implementations: this build's source
// revision (lib/implementation/build_source.hpp), the operation each
// computes, and the callable in kibench's tree.
#pragma once

#include <string_view>

#include "lib/implementation/revision_facts.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

// Identity digest of the distill_jsd_loss OperationSpec
// (workloads/operations/distill_jsd_loss.json, KernelIndex's curated one).
inline constexpr std::string_view kDistillJsdLossOperationDigest =
    "sha256:4ce30dbf7da705e4eac1f5d2dce3a47ea0174fae11af426c422e0064be63eac5";
// The same for jsd (workloads/operations/jsd.json) and fused_linear_jsd
// (workloads/operations/fused_linear_jsd.json).
inline constexpr std::string_view kJsdOperationDigest =
    "sha256:eccbf4150e60ad41ce52a4bd06fa582b8b4d5ed394fcd096f069b08eadf420e6";
inline constexpr std::string_view kFusedLinearJsdOperationDigest =
    "sha256:71138de338d4a1a85e751a2db3bd1a1c08f93a234a9ab0cfd9c5ab35eb180b72";

// The curated OperationSpec digest of `kind`.
[[nodiscard]] std::string_view operation_digest(OperationKind kind);

// kibench's licence (LICENSE), which every built-in implementation's
// revision declares (spec.licensing.declared), as an SPDX identifier.
inline constexpr std::string_view kKibenchLicence = "Apache-2.0";

// CMAKE_CUDA_ARCHITECTURES is 90a: the GPU code runs on Hopper only.
inline constexpr std::string_view kCompiledCudaArchitecture = "sm_90a";

struct BuiltinCallable {
  std::string_view name;        // registry name; metadata.name is "kibench-" + name
  std::string_view title;       // metadata.title
  std::string_view description; // metadata.description
  std::string_view source_path; // callable.path, relative to the repository
  std::string_view symbol;      // callable.symbol, the factory
  OperationKind operation = OperationKind::distill_jsd_loss; // spec.operation
};

// `distill`, the facts of an implementation of distill_jsd_loss, as those of
// the same code computing fused_linear_jsd (distill_jsd_loss with w_h = 0,
// Hs = H and no bias): another operation, so another revision.
[[nodiscard]] RevisionFacts as_fused_linear_jsd(RevisionFacts distill);

// A host implementation (callable.language "cpp", the host's instruction set).
[[nodiscard]] RevisionFacts host_revision(const BuiltinCallable &callable);
// A CUDA implementation (callable.language "cuda", sm_90a).
[[nodiscard]] RevisionFacts cuda_revision(const BuiltinCallable &callable);

} // namespace kibench
