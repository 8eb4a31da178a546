// The RevisionFacts of kibench's own implementations: this build's source
// revision (lib/implementation/build_source.hpp), the operation each
// computes, and the callable in kibench's tree.
#pragma once

#include <string_view>

#include "lib/implementation/revision_facts.hpp"
#include "lib/operations/distill_jsd_loss/distill_jsd_loss.hpp"
#include "lib/operations/fused_linear_jsd/fused_linear_jsd.hpp"
#include "lib/operations/jsd/jsd.hpp"
#include "lib/operations/operation.hpp"

namespace kibench {

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
  OperationKind operation = OperationKind(); // spec.operation; default distill_jsd_loss
};

// `facts`, those of code written for one operation, as those of the same
// code computing `kind` (fused_linear_jsd by distill_jsd_loss's code, with
// w_h = 0, Hs = H and no bias): another operation, so another revision.
// Unchanged where `facts` are already `kind`'s.
[[nodiscard]] RevisionFacts revision_on(RevisionFacts facts, OperationKind kind);

// A host implementation (callable.language "cpp", the host's instruction set).
[[nodiscard]] RevisionFacts host_revision(const BuiltinCallable &callable);
// A CUDA implementation (callable.language "cuda", sm_90a).
[[nodiscard]] RevisionFacts cuda_revision(const BuiltinCallable &callable);

} // namespace kibench
