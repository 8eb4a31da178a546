// The RevisionFacts of kibench's own implementations: this build's source
// revision (lib/implementation/build_source.hpp), the operation they all
// compute, and the callable in kibench's tree.
#pragma once

#include <string_view>

#include "lib/implementation/revision_facts.hpp"

namespace kibench {

// Identity digest of the distill_jsd_loss OperationSpec
// (workloads/operations/distill_jsd_loss.json, KernelIndex's curated one).
inline constexpr std::string_view kDistillJsdLossOperationDigest =
    "sha256:4ce30dbf7da705e4eac1f5d2dce3a47ea0174fae11af426c422e0064be63eac5";

// CMAKE_CUDA_ARCHITECTURES is 90a: the GPU code runs on Hopper only.
inline constexpr std::string_view kCompiledCudaArchitecture = "sm_90a";

struct BuiltinCallable {
  std::string_view name;        // registry name; metadata.name is "kibench-" + name
  std::string_view title;       // metadata.title
  std::string_view description; // metadata.description
  std::string_view source_path; // callable.path, relative to the repository
  std::string_view symbol;      // callable.symbol, the factory
};

// A host implementation (callable.language "cpp", the host's instruction set).
[[nodiscard]] RevisionFacts host_revision(const BuiltinCallable &callable);
// A CUDA implementation (callable.language "cuda", sm_90a).
[[nodiscard]] RevisionFacts cuda_revision(const BuiltinCallable &callable);

} // namespace kibench
